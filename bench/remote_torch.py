"""The tiny Qwen2 forward (examples/torch/qwen2_forward.py, 1x16 tokens) on
the PyTorch bridge through the `remote` backend (an npu-server on loopback
hosting `iss`) against the in-process `iss` backend. The backend is chosen
per process (NPU_BACKEND), so each measurement is a child process; the two
alternate, and the medians are reported with the machine and its load.

    python3 bench/remote_torch.py [--rounds 3] [--forwards 10]
"""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import statistics
import subprocess
import sys

import machine

REPO = pathlib.Path(__file__).resolve().parents[1]
BUILD = pathlib.Path(os.environ.get("NPU_BUILD_DIR", REPO / "build"))

CHILD = """
import sys, time, warnings
import torch, npu_bridge
sys.path.insert(0, sys.argv[1])
import qwen2_forward
warnings.filterwarnings("ignore", message="npu: ")
torch.set_num_threads(1)
model = qwen2_forward.build_model("eager").to("npu")
ids = qwen2_forward.sample_input_ids(batch=1, length=16).to("npu")
forwards = int(sys.argv[2])
with torch.no_grad():
    model(ids).logits.cpu()
    start = time.perf_counter()
    for _ in range(forwards):
        model(ids).logits.cpu()
print(f"forward_ms {(time.perf_counter() - start) / forwards * 1e3:.3f}")
"""


def forward_ms(env: dict, forwards: int) -> float:
    result = subprocess.run([sys.executable, "-c", CHILD, str(REPO / "examples" / "torch"), str(forwards)],
                            capture_output=True, text=True, env=env, timeout=1200)
    match = re.search(r"forward_ms ([\d.]+)", result.stdout)
    if result.returncode != 0 or not match:
        sys.exit(f"the forward failed:\n{result.stdout}{result.stderr}")
    return float(match[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--forwards", type=int, default=10)
    args = parser.parse_args()
    print(machine.line())
    server = subprocess.Popen([str(BUILD / "bin" / "npu-server"), "--backend", "iss"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        address = re.search(r"listening on (\S+),", server.stdout.readline())[1]
        base = dict(os.environ, NPU_ISS_THREADS="1", NPU_REMOTE=address)
        times: dict[str, list[float]] = {"iss": [], "remote": []}
        for _ in range(args.rounds):
            for backend in times:
                times[backend].append(forward_ms(dict(base, NPU_BACKEND=backend), args.forwards))
    finally:
        server.terminate()
        server.wait()
    local, remote = statistics.median(times["iss"]), statistics.median(times["remote"])
    print(f"tiny Qwen2 forward (1x16): in-process {local:.1f} ms, remote {remote:.1f} ms "
          f"({remote / local:.2f}x); runs {times}")
    print(machine.line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
