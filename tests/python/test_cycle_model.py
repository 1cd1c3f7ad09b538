"""The ISS's cycle model against the RTL on directed MATMUL shapes: the
matrix engine's request schedule is modelled event by event, so its
prediction is exact to a cycle where no wait states make it an expected
value (bench/cycle_accuracy.py measures the rest, per op class)."""
import json

import pytest

from conftest import run, tool

STREAM = """
.text
    {op}
{tail}
.data 0x10000
A:  .fill 64*64, 4, 0
.data 0x20000
B:  .fill 64*64, 4, 0
.data 0x30000
C:  .fill 64*64, 4, 0
"""


def cosim_packet(tmp_path, op, latency, width, halt):
    source = tmp_path / "m.npuasm"
    source.write_text(STREAM.format(op=op, tail="    halt" if halt else ""))
    stats = tmp_path / "s.json"
    result = run([tool("npu-sim"), "--backend", "cosim", "--quiet", "--mem-latency", latency,
                  "--mem-width", width, "--stats-json", stats, source])
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(stats.read_text())["packet_records"][0]


# 32 rows: 32 single-beat runs per request, more than HW_AXI_OUTSTANDING
# bursts in flight at latency 37; a following HALT is prefetched while the
# memory side waits for the compute side, overlapping the next request's
# address cycles.
@pytest.mark.parametrize("latency,width", [(4, 32), (20, 32), (37, 32), (37, 8)])
@pytest.mark.parametrize("m,k,n", [(1, 8, 8), (9, 32, 8), (32, 8, 8), (32, 64, 8), (40, 32, 40)])
@pytest.mark.parametrize("halt", [False, True])
def test_matmul_predicted_to_a_cycle(tmp_path, m, k, n, latency, width, halt):
    record = cosim_packet(tmp_path, f"matmul C, A, B, {m}, {k}, {n}, {k}, {n}, {n}", latency, width, halt)
    assert record["op"] == "matmul"
    assert abs(record["predicted_cycles"] - record["cycles"]) <= 1, record


# Batch strides that move each batch element's rows to other places in a
# beat (and overlap the elements of A and B): the beats differ per element;
# with acc every block loads its old C first.
@pytest.mark.parametrize("latency,width", [(4, 16), (20, 32)])
@pytest.mark.parametrize("shape", ["17, 9, 8, 7, 27, 7, 137", "9, 33, 17, 3, 5, 3, 200",
                                   "1, 1, 1, 259, 0, 1, 1, acc", "40, 32, 40, 2, 0, 1280, 1600, acc"])
def test_bmm_batch_strides_and_acc_predicted_to_two_cycles(tmp_path, shape, latency, width):
    record = cosim_packet(tmp_path, f"bmm C, A, B, {shape}", latency, width, True)
    assert record["op"] == "bmm"
    assert abs(record["predicted_cycles"] - record["cycles"]) <= 2, record
