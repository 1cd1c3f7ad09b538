"""npu-as and npu-objdump as programs: the malformed-source corpus
(tests/asm/errors), malformed containers, and objdump output that
re-assembles. Every check runs against the normal build and, when present,
the sanitizer build (whose binaries must then report no ASan/UBSan finding).

NPU_BUILD_DIR (default build) and NPU_SAN_BUILD_DIR (default build-san)
locate the builds.
"""
import os
import pathlib
import re
import struct
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
ERRORS = ROOT / "tests" / "asm" / "errors"
EXAMPLES = ["gemm.npuasm", "softmax.npuasm"]


def build_dirs():
    dirs = []
    for var, default in (("NPU_BUILD_DIR", "build"), ("NPU_SAN_BUILD_DIR", "build-san")):
        path = pathlib.Path(os.environ.get(var, default))
        if not path.is_absolute():
            path = ROOT / path
        dirs.append(pytest.param(path, id=var))
    return dirs


@pytest.fixture(params=build_dirs())
def bindir(request):
    path = request.param / "bin"
    if not (path / "npu-as").exists():
        pytest.skip(f"no npu-as in {path}")
    return path


SANITIZER_REPORT = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:")


def run(tool, *args, cwd=None):
    result = subprocess.run([str(tool), *map(str, args)], capture_output=True, text=True,
                            cwd=cwd, timeout=60)
    assert not SANITIZER_REPORT.search(result.stderr), result.stderr
    return result


# ------------------------------------------------------------ error corpus

DIAGNOSTIC = re.compile(r"^(\S+?):(\d+):(\d+): (error|warning): (.*)$")


def error_cases():
    return sorted(p.name for p in ERRORS.glob("*.npuasm"))


def test_error_corpus_is_large_enough():
    assert len(error_cases()) >= 40


@pytest.mark.parametrize("name", error_cases())
def test_malformed_source(bindir, tmp_path, name):
    text = (ERRORS / name).read_text()
    expected = re.findall(r"^# EXPECT: (.*)$", text, re.M)
    assert expected, f"{name} states no # EXPECT: line"
    args = re.findall(r"^# ARGS: (.*)$", text, re.M)
    args = args[0].split() if args else []
    out = tmp_path / "out.npubin"
    result = run(bindir / "npu-as", *args, name, "-o", out, cwd=ERRORS)
    assert result.returncode == 1, result.stderr
    assert not out.exists()
    check_notes = any(e.startswith("note: ") for e in expected)
    got = []
    for line in result.stderr.splitlines():
        m = DIAGNOSTIC.match(line)
        if m:
            where = f"{m[2]}:{m[3]}" if m[1] == name else f"{m[1]}:{m[2]}:{m[3]}"
            got.append(f"{where}: {m[4]}: {m[5]}")
        elif check_notes and line.startswith("note: "):
            got.append(line)
    assert got == expected, result.stderr
    # Every diagnostic with a position shows the line and a caret under it.
    lines = result.stderr.splitlines()
    for i, line in enumerate(lines):
        m = DIAGNOSTIC.match(line)
        if m:
            caret = lines[i + 2]
            assert caret.strip() == "^" and len(caret) == int(m[3]), result.stderr


# ------------------------------------------------------------ containers

def assemble(bindir, source, out):
    result = run(bindir / "npu-as", source, "-o", out)
    assert result.returncode == 0, result.stderr
    return out.read_bytes()


def sections(data):
    count = struct.unpack_from("<I", data, 32)[0]
    table = {}
    for i in range(count):
        kind, _, offset, size, records = struct.unpack_from("<IIQQQ", data, 64 + 32 * i)
        table[kind] = (offset, size, records)
    return table


def text_section(data):
    offset, size, _ = sections(data)[1]
    return data[offset:offset + size]


@pytest.mark.parametrize("example", EXAMPLES)
def test_objdump_output_reassembles(bindir, tmp_path, example):
    original = assemble(bindir, ROOT / "examples" / example, tmp_path / "a.npubin")
    for mode in ([], ["--source"], ["--no-raw", "--no-header"]):
        dump = run(bindir / "npu-objdump", *mode, tmp_path / "a.npubin")
        assert dump.returncode == 0, dump.stderr
        (tmp_path / "b.npuasm").write_text(dump.stdout)
        again = assemble(bindir, tmp_path / "b.npuasm", tmp_path / "b.npubin")
        assert text_section(again) == text_section(original), mode
        if mode == ["--source"]:
            assert again == original


def put(data, offset, fmt, value):
    data = bytearray(data)
    struct.pack_into(fmt, data, offset, value)
    return bytes(data)


def malformed_containers(valid):
    table = sections(valid)
    text_off, text_size, _ = table[1]
    data_off = table[2][0]
    yield "bad magic", b"\x89NPUBOX\n" + valid[8:], "offset 0: bad magic: not an .npubin file"
    yield "bad version", put(valid, 8, "<I", 7), "offset 8: format version 7.0 is not supported"
    yield "wrong file size", put(valid, 40, "<Q", len(valid) + 64), "offset 40: header records"
    yield "reserved bytes", put(valid, 60, "<I", 1), "offset 60: reserved header bytes must be zero"
    yield "unknown section", put(valid, 64, "<I", 77), "offset 64: section 0: unknown type 77"
    yield "duplicate section", put(valid, 96, "<I", 1), "offset 96: section 1: second text section"
    yield "overlapping sections", put(valid, 96 + 8, "<Q", text_off + 64), \
        f"offset 104: data section starts at offset {text_off + 64}, expected {text_off + text_size}"
    yield "size past EOF", put(valid, 64 + 16, "<Q", 1 << 40), "run past the end of the"
    yield "huge count", put(valid, 64 + 24, "<Q", 1 << 62), "records but has room for at most"
    # Data records: u64 address, u64 length, bytes padded to 8. Move the
    # second segment onto the first.
    first_address, first_length = struct.unpack_from("<QQ", valid, data_off)
    second = data_off + 16 + (first_length + 7) // 8 * 8
    yield "overlapping segments", put(valid, second, "<Q", first_address), "overlaps the one at"
    yield "non-zero flags", put(valid, 68, "<I", 1), "offset 68: section 0: flags must be zero"
    for length in (0, 7, 63, 64, 100, text_off, text_off + 65, len(valid) - 1):
        yield f"truncated to {length}", valid[:length], "offset "


def test_malformed_containers_are_rejected(bindir, tmp_path):
    valid = assemble(bindir, ROOT / "examples" / "gemm.npuasm", tmp_path / "ok.npubin")
    assert run(bindir / "npu-objdump", tmp_path / "ok.npubin").returncode == 0
    for name, data, message in malformed_containers(valid):
        path = tmp_path / "bad.npubin"
        path.write_bytes(data)
        result = run(bindir / "npu-objdump", path)
        assert result.returncode == 3, (name, result.stderr)
        assert message in result.stderr, (name, result.stderr)
        assert result.stdout == "", name


# ------------------------------------------------------------ command lines

def test_command_line_exit_codes(bindir, tmp_path):
    for tool in ("npu-as", "npu-objdump"):
        assert run(bindir / tool, "--help").returncode == 0
        assert run(bindir / tool, "--version").returncode == 0
        assert run(bindir / tool, "--no-such-option").returncode == 2
        assert run(bindir / tool).returncode == 2
    assert run(bindir / "npu-as", tmp_path / "missing.npuasm").returncode == 3
    assert run(bindir / "npu-objdump", tmp_path / "missing.npubin").returncode == 3


def test_listing(bindir, tmp_path):
    listing = tmp_path / "gemm.lst"
    result = run(bindir / "npu-as", ROOT / "examples" / "gemm.npuasm", "-o",
                 tmp_path / "gemm.npubin", "-l", listing)
    assert result.returncode == 0, result.stderr
    text = listing.read_text()
    assert "[       0]" in text and "matmul C + " in text
    assert re.search(r"0x0000000000010000  [0-9a-f]{32}", text)
