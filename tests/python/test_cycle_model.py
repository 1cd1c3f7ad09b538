"""The ISS's cycle model against the RTL on directed MATMUL shapes: the
matrix engine's request schedule is modelled event by event, so its
prediction is exact to a cycle where no wait states make it an expected
value (bench/cycle_accuracy.py measures the rest, per op class)."""
import json

import pytest

from conftest import run, tool

STREAM = """
.text
    matmul C, A, B, {m}, {k}, {n}, {k}, {n}, {n}
{tail}
.data 0x10000
A:  .fill 64*64, 4, 0
.data 0x20000
B:  .fill 64*64, 4, 0
.data 0x30000
C:  .fill 64*64, 4, 0
"""


def cosim_packet(tmp_path, m, k, n, latency, width, halt):
    source = tmp_path / "m.npuasm"
    source.write_text(STREAM.format(m=m, k=k, n=n, tail="    halt" if halt else ""))
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
    record = cosim_packet(tmp_path, m, k, n, latency, width, halt)
    assert record["op"] == "matmul"
    assert abs(record["predicted_cycles"] - record["cycles"]) <= 1, record
