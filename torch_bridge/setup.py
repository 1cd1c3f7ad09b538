"""Builds npu_bridge: `pip install --no-build-isolation ./torch_bridge`.

The C++ extension is built by CMake (CMakeLists.txt beside this file) in
$NPU_BUILD_DIR/torch_bridge, against the installed torch and the runtime of
the toolchain build $NPU_BUILD_DIR (default: <repo>/build), whose
libnpu_rt.so it links with an rpath rather than copying it.
"""

import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent


def toolchain_build_dir() -> pathlib.Path:
    path = pathlib.Path(os.environ.get("NPU_BUILD_DIR", REPO / "build"))
    return path if path.is_absolute() else (REPO / path).resolve()


class CMakeExtension(Extension):
    def __init__(self, name: str) -> None:
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        import torch.utils

        npu_build = toolchain_build_dir()
        cmake_build = npu_build / "torch_bridge"
        cmake_build.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "cmake", "-S", str(HERE), "-B", str(cmake_build), "-G", "Ninja",
                f"-DNPU_BUILD_DIR={npu_build}",
                f"-DCMAKE_PREFIX_PATH={torch.utils.cmake_prefix_path}",
                f"-DPython_EXECUTABLE={sys.executable}",
            ],
            check=True,
        )
        subprocess.run(["cmake", "--build", str(cmake_build), "--target", "_C"], check=True)
        built = sorted(cmake_build.glob("_C*.so"))
        if len(built) != 1:
            raise RuntimeError(f"expected one _C*.so in {cmake_build}, found {built}")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built[0], target)


setup(
    name="npu_bridge",
    version="0.1.0",
    description="PyTorch device 'npu' on the NPU toolchain's runtime",
    packages=["npu_bridge"],
    # The entry point lives outside the package: importing anything inside
    # npu_bridge runs its __init__, which loads the native library the
    # entry point must survive failing to load.
    py_modules=["npu_bridge_autoload"],
    ext_modules=[CMakeExtension("npu_bridge._C")],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.11",
    # `import torch` loads the bridge (PyTorch's device-backend autoload;
    # TORCH_DEVICE_BACKEND_AUTOLOAD=0 turns it off), so `import npu_bridge`
    # is optional, as for OpenReg.
    entry_points={
        "torch.backends": ["npu = npu_bridge_autoload:load"],
        # torch.compile(backend="npu"), loaded by Dynamo when first named.
        "torch_dynamo_backends": ["npu = npu_bridge.compile:npu_backend"],
    },
)
