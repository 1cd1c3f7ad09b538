"""docs/pytorch.md's table of one-instruction ops is the bridge's registrations."""

import npu_bridge
import pytest
from native_op_table import DOC, documented, registrations, render, updated
from op_samples import op_name, registered_ops


def test_the_table_in_docs_is_the_registrations():
    table = render(*registrations())
    assert documented(DOC.read_text()) == table, (
        "docs/pytorch.md's one-instruction op table is stale: run python3 tests/python/torch/native_op_table.py")


def test_every_recorded_op_is_registered_for_the_npu():
    registered = {op_name(op).removeprefix("aten::") for op in registered_ops()}
    recorded = set(npu_bridge._C._instruction_ops())
    assert recorded and recorded <= registered, sorted(recorded - registered)


def test_a_stale_table_is_noticed_and_rewritten():
    text = DOC.read_text()
    table = render({"erf": "erf", "erf_": "erf", "erf.out": "erf"}, ["erf", "erf_", "erf.out", "mm", "mm.out"])
    assert "| `erf` | `erf`, `erf.out`, `erf_` | ERF |" in table.splitlines()
    assert table.splitlines()[-1] == "| `mm` | `mm`, `mm.out` |"
    assert documented(text) != table
    assert documented(updated(text, table)) == table
    with pytest.raises(ValueError, match="markers"):
        documented("no table here")
