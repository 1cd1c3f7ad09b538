"""The accuracy gate (tests/unit/arith/accuracy_bounds.py) derives its npu-ulp
runs from the inputs column of each docs/arith.md §7 row: a row it cannot
read is an error naming the row, before anything is measured."""
import re
import sys

import pytest

from conftest import REPO, run, tool

GATE = REPO / "tests" / "unit" / "arith" / "accuracy_bounds.py"
ERF_ROW = re.compile(r"^\| erf \| all 2\^32 \|", re.M)


def gate_on(tmp_path, doc_text):
    doc = tmp_path / "arith.md"
    doc.write_text(doc_text, encoding="utf-8")
    return run([sys.executable, GATE, tool("npu-ulp"), doc])


@pytest.mark.parametrize("inputs", ["most of 2^32", "all x in [−0.8, −0.7", "all x near −0.75",
                                    "all x outside −0.8 and −0.7 (every 7th)"])
def test_an_unreadable_inputs_column_is_an_error_naming_the_row(tmp_path, inputs):
    doc = (REPO / "docs" / "arith.md").read_text(encoding="utf-8")
    assert ERF_ROW.search(doc)
    result = gate_on(tmp_path, ERF_ROW.sub(f"| erf | {inputs} |", doc))
    assert result.returncode != 0
    assert f"row 'erf | {inputs}': cannot read its inputs column" in result.stderr, result.stderr
