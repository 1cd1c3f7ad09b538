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
# Every example kernel, so that a new one is round-tripped too.
EXAMPLES = sorted(str(p.relative_to(ROOT / "examples"))
                  for p in (ROOT / "examples").rglob("*.npuasm"))


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


# ------------------------------------------------------------ hostile inputs

def test_output_to_a_full_device_is_an_error_and_the_device_stays(bindir):
    source = ROOT / "examples" / "gemm.npuasm"
    result = run(bindir / "npu-as", source, "-o", "/dev/full")
    assert result.returncode == 4, result.stderr
    assert "/dev/full: write error: No space left on device" in result.stderr
    assert pathlib.Path("/dev/full").is_char_device()
    assert run(bindir / "npu-as", source, "-o", "/dev/null").returncode == 0
    for tool, args in (("npu-isa", []), ("npu-isa", ["--json"])):
        with open("/dev/full", "w") as full:
            result = subprocess.run([str(bindir / tool), *args], stdout=full, stderr=subprocess.PIPE,
                                    text=True, timeout=60)
        assert result.returncode == 4, (tool, result.stderr)
        assert "cannot write the standard output: No space left on device" in result.stderr


def test_objdump_to_a_full_device_is_an_error(bindir, tmp_path):
    container = assemble(bindir, ROOT / "examples" / "gemm.npuasm", tmp_path / "g.npubin")
    assert container
    with open("/dev/full", "w") as full:
        result = subprocess.run([str(bindir / "npu-objdump"), tmp_path / "g.npubin"], stdout=full,
                                stderr=subprocess.PIPE, text=True, timeout=60)
    assert result.returncode == 4
    assert "cannot write the standard output: No space left on device" in result.stderr


def test_outputs_that_are_inputs_are_refused(bindir, tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "defs.inc").write_text(".equ N, 4\n")
    source = tmp_path / "k.npuasm"
    text = '.include "inc/defs.inc"\n    copy 0x100, 0x200, N\n'
    source.write_text(text)
    (tmp_path / "link.npuasm").symlink_to(source)
    cases = [
        (["-o", source], "k.npuasm: the output (-o) is also the input; refusing to overwrite it"),
        (["-o", tmp_path / "link.npuasm"], "the output (-o) is also the input"),
        (["-o", tmp_path / "x.npubin", "-l", source], "the listing (-l) is also the input"),
        (["-o", tmp_path / "x.npubin", "-l", tmp_path / "x.npubin"],
         "the listing (-l) is also the output (-o)"),
        (["-o", tmp_path / "inc" / "defs.inc"],
         "the output (-o) is also a file the source includes"),
        (["-o", tmp_path], "the output (-o) is a directory"),
        (["-o", tmp_path / "none" / "x.npubin"], "cannot be created: directory"),
    ]
    for args, message in cases:
        result = run(bindir / "npu-as", source, *args)
        assert result.returncode == 2, (args, result.stderr)
        assert message in result.stderr, (args, result.stderr)
        assert source.read_text() == text
        assert (tmp_path / "inc" / "defs.inc").read_text() == ".equ N, 4\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["inc", "k.npuasm", "link.npuasm"]
    # A container given to npu-as (the default output would be the input).
    container = tmp_path / "k.npubin"
    assemble(bindir, source, container)
    before = container.read_bytes()
    result = run(bindir / "npu-as", container)
    assert result.returncode == 3, result.stderr
    assert "an .npubin container, not assembly source" in result.stderr
    assert container.read_bytes() == before


def test_a_failed_write_keeps_the_previous_output(bindir, tmp_path):
    out = tmp_path / "k.npubin"
    out.write_bytes(b"previous")
    bad = tmp_path / "bad.npuasm"
    bad.write_text("    bogus\n")
    assert run(bindir / "npu-as", bad, "-o", out).returncode == 1
    assert out.read_bytes() == b"previous"
    good = tmp_path / "good.npuasm"
    good.write_text("    halt\n")
    assert run(bindir / "npu-as", good, "-o", out).returncode == 0
    assert out.read_bytes().startswith(b"\x89NPUBIN\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.npuasm", "good.npuasm", "k.npubin"]


def test_line_endings_assemble_byte_identically(bindir, tmp_path):
    text = (ROOT / "examples" / "gemm.npuasm").read_text()
    outputs = []
    for name, ending in (("lf", "\n"), ("crlf", "\r\n"), ("cr", "\r")):
        source = tmp_path / f"{name}.npuasm"
        source.write_bytes(text.replace("\n", ending).encode())
        outputs.append(assemble(bindir, source, tmp_path / f"{name}.npubin"))
    assert outputs[0] == outputs[1] == outputs[2]


def limit_address_space():
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (3_000_000 * 1024, 3_000_000 * 1024))


def macro_bomb(levels):
    """Each macro passes its argument on four times: the text grows 4x per level."""
    out = ".macro m0 x\n.ascii \"\\x\"\n.endm\n"
    for i in range(1, levels + 1):
        out += f".macro m{i} x\nm{i - 1} " + "\\x" * 4 + "\n.endm\n"
    return out + f".data 0\nm{levels} abcdefgh\n"


BOMBS = {
    "rept": (".rept 1000000000\n    nop\n.endr\n", "2:1: error: output exceeds the limit of 1 GiB"),
    "fill": (".data 0\n.fill 1 << 40, 8, 0\n", "2:7: error: output exceeds the limit of 1 GiB"),
    # The expanded lines reach the line length limit before the memory limit.
    "macro": (macro_bomb(16), "error: line of 134217731 bytes is longer than the limit of 67108864"),
    "incbin": (".data 0\n.incbin \"huge.bin\"\n",
               "2:9: error: huge.bin: 8589934592 bytes exceed what is left"),
}


def is_sanitized(bindir):
    cache = bindir.parent / "CMakeCache.txt"
    text = cache.read_text() if cache.exists() else ""
    return "NPU_SANITIZE:BOOL=ON" in text or "NPU_BUILD_FUZZERS:BOOL=ON" in text


# These bombs fill the limits, which takes minutes under ASan: they run on
# the normal build only (not generated for the sanitizer build rather than
# skipped there, so that a skip still means lost coverage).
SLOW_UNDER_ASAN = ("rept", "macro")


def bomb_cases():
    return [pytest.param(build.values[0], bomb, id=f"{build.id}-{bomb}")
            for build in build_dirs() for bomb in sorted(BOMBS)
            if not (build.id == "NPU_SAN_BUILD_DIR" and bomb in SLOW_UNDER_ASAN)]


@pytest.mark.parametrize("build,bomb", bomb_cases())
def test_memory_bombs_are_located_errors(build, tmp_path, bomb):
    bindir = build / "bin"
    if not (bindir / "npu-as").exists():
        pytest.skip(f"no npu-as in {bindir}")
    source, message = BOMBS[bomb]
    with open(tmp_path / "huge.bin", "wb") as huge:
        huge.truncate(8 << 30)  # sparse: no disk space used
    (tmp_path / "bomb.npuasm").write_text(source)
    sanitized = is_sanitized(bindir)
    # ASan reserves terabytes of address space: the limit applies to the
    # normal build only.
    result = subprocess.run([str(bindir / "npu-as"), "bomb.npuasm", "-o", "bomb.npubin"],
                            capture_output=True, text=True, timeout=300, cwd=tmp_path,
                            preexec_fn=None if sanitized else limit_address_space)
    assert not SANITIZER_REPORT.search(result.stderr), result.stderr
    assert result.returncode == 1, result.stderr[-2000:]
    assert message in result.stderr, result.stderr[-2000:]
    assert "bad_alloc" not in result.stderr
    assert not (tmp_path / "bomb.npubin").exists()


def test_deep_nesting_is_a_located_error(bindir, tmp_path):
    source = tmp_path / "deep.npuasm"
    source.write_text(".equ X, " + "(" * 100000 + "1" + ")" * 100000 + "\n")
    result = run(bindir / "npu-as", source, "-o", tmp_path / "deep.npubin")
    assert result.returncode == 1
    assert "deep.npuasm:1:265: error: expression nested more than 256 deep" in result.stderr
    chain = "".join(f".equ a{i}, a{i + 1} + 1\n" for i in range(100000))
    source.write_text(".data 0\n.quad a0\n" + chain + ".equ a100000, 0\n")
    assert run(bindir / "npu-as", source, "-o", tmp_path / "deep.npubin").returncode == 0
