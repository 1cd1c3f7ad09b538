"""npu-tblgen: broken ISA descriptions are rejected at the right .td location,
the generated artefacts agree with the .td, and only npu-tblgen links LLVM."""
import json
import pathlib
import re
import subprocess

import pytest

from conftest import REPO, build_dir, run, tool

BROKEN = sorted(p for p in (REPO / "tests" / "tblgen").glob("*.td") if p.name != "test_preamble.td")
DIAGNOSTIC = re.compile(r"^(?P<file>[^:\s]+\.td):(?P<line>\d+):(?P<col>\d+): (?P<kind>error|note): (?P<msg>.*)$")


def expectations(path):
    """'// EXPECT: [file.td:]line:col: kind: message' lines, as (file, line, col, kind, message)."""
    out = []
    for line in path.read_text().splitlines():
        m = re.match(r"^// EXPECT: (?:(?P<file>[\w.]+\.td):)?(?P<line>\d+):(?P<col>\d+): (?P<kind>error|note): (?P<msg>.*)$", line)
        if m:
            out.append((m["file"] or path.name, int(m["line"]), int(m["col"]), m["kind"], m["msg"]))
    return out


def test_corpus_is_substantial():
    assert len(BROKEN) >= 15
    for path in BROKEN:
        assert expectations(path), f"{path.name} states no EXPECT line"


@pytest.mark.parametrize("path", BROKEN, ids=[p.stem for p in BROKEN])
def test_broken_isa_is_rejected_at_its_location(path):
    result = run([tool("npu-tblgen"), "--check", "-I", REPO / "isa", "-I", path.parent, path])
    assert result.returncode != 0, "npu-tblgen accepted a broken ISA"
    found = []
    for line in result.stderr.splitlines():
        m = DIAGNOSTIC.match(line)
        if m:
            found.append((pathlib_name(m["file"]), int(m["line"]), int(m["col"]), m["kind"], m["msg"]))
    assert found == expectations(path), result.stderr


def pathlib_name(file):
    return file.rsplit("/", 1)[-1]


def test_real_isa_is_accepted():
    result = run([tool("npu-tblgen"), "--check", "-I", REPO / "isa", REPO / "isa" / "npu.td"])
    assert result.returncode == 0, result.stderr


def test_opcode_count_equals_instruction_defs():
    """The generated tables hold exactly the Instruction records of the .td (no hand list)."""
    records = json.loads((build_dir() / "generated" / "isa" / "npu.json").read_text())
    defs = records["!instanceof"]["Instruction"]
    listed = json.loads(run([tool("npu-isa"), "--json"]).stdout)["instructions"]
    assert sorted(i["name"] for i in listed) == sorted(defs)
    for instr in listed:
        rec = records[instr["name"]]
        assert rec["Opcode"] == instr["opcode"] and rec["Mnemonic"] == instr["mnemonic"]


def test_committed_isa_doc_is_current():
    generated = (build_dir() / "generated" / "docs" / "isa.md").read_text()
    committed = (REPO / "docs" / "isa.md").read_text()
    assert committed == generated, "docs/isa.md is stale: run `ninja -C build update-isa-doc` and commit"


def test_isa_doc_lists_every_instruction():
    doc = (REPO / "docs" / "isa.md").read_text()
    for instr in json.loads(run([tool("npu-isa"), "--json"]).stdout)["instructions"]:
        section = re.search(rf"^### {instr['mnemonic']}\n(.*?)(?=^##)", doc, re.M | re.S)
        assert section, f"no section for {instr['mnemonic']}"
        body = section.group(1)
        assert f"```\n{instr['mnemonic']}" in body, "syntax line missing"
        for op in instr["operands"]:
            assert f"| `{op['name']}` |" in body, f"{instr['mnemonic']}: operand {op['name']} missing"


def test_isa_text_holds_no_variable_names():
    # TableGen 16 pastes a defvar's name, not its text, after `#` in these
    # .td contexts ("a << b" # ShiftDoc gave "a << bShiftDoc"): the .td files
    # use !strconcat, and no string variable's name may reach the ISA's text.
    names = sorted({m.group(1) for td in (REPO / "isa").glob("*.td")
                    for m in re.finditer(r'^\s*defvar\s+(\w+)\s*=\s*"', td.read_text(), re.M)})
    assert names, "no string defvar found: the pattern is stale"
    texts = {"docs/isa.md": (REPO / "docs" / "isa.md").read_text(),
             "npu-isa --json": run([tool("npu-isa"), "--json"]).stdout}
    leaks = [f"{name} in {where}" for name in names for where, text in texts.items() if name in text]
    assert not leaks, leaks


def _binaries():
    for directory in ("bin", "lib"):
        for path in sorted((build_dir() / directory).glob("*")):
            if path.is_file() and (path.suffix in ("", ".so", ".a") or ".so." in path.name):
                yield path


def _links_llvm(path):
    ldd = subprocess.run(["ldd", path], capture_output=True, text=True).stdout if path.suffix != ".a" else ""
    if "libLLVM" in ldd:
        return True
    symbols = subprocess.run(["nm", "-C", "--defined-only", path], capture_output=True, text=True).stdout
    return re.search(r"\bllvm::", symbols) is not None


def test_only_npu_tblgen_links_llvm():
    binaries = list(_binaries())
    assert any(p.name == "npu-tblgen" for p in binaries)
    linked = [p.name for p in binaries if _links_llvm(p)]
    assert linked == ["npu-tblgen"]


def test_generated_verilog_package_lints():
    pkg = build_dir() / "generated" / "rtl" / "npu_isa_pkg.sv"
    result = run(["verilator", "--lint-only", "-Wall", pkg])
    assert result.returncode == 0, result.stderr


def test_generated_microcode_package_lints():
    pkg = build_dir() / "generated" / "rtl" / "npu_microcode_pkg.sv"
    result = run(["verilator", "--lint-only", "-Wall", pkg])
    assert result.returncode == 0, result.stderr


def test_generation_tracks_every_included_td():
    """Each generated file's depfile names every .td, so editing any of them regenerates."""
    tds = {p.name for p in (REPO / "isa").glob("*.td")} - {"npu.td"}  # the main input is a direct dependency
    for generated in ("npu/isa/npu_isa_gen.h", "npu/isa/npu_isa_tables.inc", "rtl/npu_isa_pkg.sv", "docs/isa.md",
                      "npu/arith/microcode.h", "rtl/npu_microcode_pkg.sv"):
        depfile = (build_dir() / "generated" / (generated + ".d")).read_text()
        listed = {pathlib.PurePath(tok).name for tok in depfile.replace("\\\n", " ").split() if tok.endswith(".td")}
        assert tds <= listed, f"{generated}.d misses {sorted(tds - listed)}"
