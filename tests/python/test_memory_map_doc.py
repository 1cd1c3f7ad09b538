"""The memory map has one source (mem::AddressMap::defaults): the tables in
docs/simulator.md and docs/assembly.md are `npu-sim --print-memory-map`'s
output, written by scripts/update-memory-map-doc."""
import shutil
import sys

from conftest import REPO, build_dir, run, tool

SCRIPT = REPO / "scripts" / "update-memory-map-doc"


def test_documented_memory_maps_are_current():
    result = run([sys.executable, SCRIPT, "--build", build_dir(), "--check"])
    assert result.returncode == 0, result.stderr


def test_check_names_a_stale_document(tmp_path):
    # A copy of the repository's script and docs with one region's row edited.
    (tmp_path / "scripts").mkdir()
    (tmp_path / "docs").mkdir()
    shutil.copy(SCRIPT, tmp_path / "scripts")
    for name in ("simulator.md", "assembly.md"):
        shutil.copy(REPO / "docs" / name, tmp_path / "docs")
    doc = tmp_path / "docs" / "assembly.md"
    doc.write_text(doc.read_text().replace("| 256 MiB |", "| 128 MiB |", 1))
    script = tmp_path / "scripts" / "update-memory-map-doc"
    stale = run([sys.executable, script, "--build", build_dir(), "--check"])
    assert stale.returncode == 1
    assert "docs/assembly.md" in stale.stderr and "docs/simulator.md" not in stale.stderr
    assert run([sys.executable, script, "--build", build_dir()]).returncode == 0
    assert doc.read_text() == (REPO / "docs" / "assembly.md").read_text()


def test_print_memory_map_applies_region_overrides():
    out = run([tool("npu-sim"), "--print-memory-map", "--region", "scratch=0x2_0000_0000:64K:r"]).stdout
    assert "| `scratch` | `0x200000000` | `0x200010000` | 64 KiB | r | r | memory |" in out
    bad = run([tool("npu-sim"), "--print-memory-map", "--region", "x=0x10:16"])
    assert bad.returncode != 0 and "'x': base 0x10 is not a multiple of 4 KiB" in bad.stderr, bad.stderr


def test_a_run_still_needs_its_program():
    result = run([tool("npu-sim")])
    assert result.returncode == 2 and "'--input' is required" in result.stderr
