"""torch.profiler with the npu's device activity (issue 16): every packet
the device ran is a kernel event next to the CPU ops, with its cycles, on
the npu's engine rows of the Chrome/Perfetto trace that export_chrome_trace
writes, and counts as device time in key_averages()."""

from __future__ import annotations

import json

import torch
from torch.profiler import ProfilerActivity, profile


def workload(a: torch.Tensor, b: torch.Tensor) -> float:
    return (a @ b).relu().sum().item()


def device_cycles() -> int:
    torch.npu.synchronize()
    return torch.npu.device_stats()["cycles"]


def kernels(trace_path) -> list[dict]:
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    return [e for e in events if e.get("cat") == "kernel"]


def test_the_device_is_a_profiler_activity():
    assert ProfilerActivity.PrivateUse1 in torch.profiler.supported_activities()


def test_each_packet_is_a_kernel_event_with_its_cycles(tmp_path):
    a = torch.randn(48, 64, device="npu")
    b = torch.randn(64, 32, device="npu")
    workload(a, b)  # warm: nothing but the profiled work below
    before = device_cycles()
    torch.npu.reset_stats()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        workload(a, b)
    after = device_cycles()
    packets = sum(s["packets"] for s in torch.npu.op_stats().values())
    prof.export_chrome_trace(str(tmp_path / "trace.json"))
    events = kernels(tmp_path / "trace.json")

    assert [e["name"] for e in events] == ["matmul", "relu", "row_sum"]
    assert len(events) == packets
    assert {e["args"]["engine"] for e in events} == {"matrix", "vector"}
    assert {e["args"]["stream"] for e in events} == {0}
    # Each event's cycles are the device's: together, what the device counted.
    assert sum(e["args"]["cycles"] for e in events) <= after - before
    assert all(e["args"]["cycles"] > 0 and e["dur"] > 0 for e in events)
    # At 1 GHz (isa/hardware.td) a cycle is a nanosecond; trace times are
    # µs, and the exported ones come in steps of 64 ns at either end.
    for e in events:
        assert abs(e["dur"] * 1000 - e["args"]["cycles"]) <= 128
    # In device order, one after the other, after the CPU op that queued them.
    starts = [e["ts"] for e in events]
    assert starts == sorted(starts)
    for earlier, later in zip(events, events[1:]):
        assert earlier["ts"] + earlier["dur"] <= later["ts"] + 1e-3
    with open(tmp_path / "trace.json") as f:
        mm = next(e for e in json.load(f)["traceEvents"] if e.get("name") == "aten::mm")
    assert events[0]["ts"] >= mm["ts"]
    rows = {row.key: row for row in prof.key_averages()}
    assert rows["matmul"].device_type == torch.autograd.DeviceType.PrivateUse1
    assert rows["matmul"].self_device_time_total > 0
    # Each kernel is linked to the op that submitted it: its device time is
    # the op's, and the trace names the op's correlation id.
    for op, kernel in (("aten::mm", "matmul"), ("aten::relu", "relu"), ("aten::sum", "row_sum")):
        assert rows[op].self_device_time_total == rows[kernel].self_device_time_total, op
    assert all(e["args"]["External id"] > 0 for e in events)


def test_a_cpu_only_profile_leaves_the_device_out(tmp_path):
    a = torch.randn(16, 16, device="npu")
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        workload(a, a)
    prof.export_chrome_trace(str(tmp_path / "trace.json"))
    assert kernels(tmp_path / "trace.json") == []
    assert any(row.key == "aten::mm" for row in prof.key_averages())


def test_profiles_in_a_row_each_hold_their_own_packets(tmp_path):
    a = torch.randn(16, 16, device="npu")
    for round_ in range(2):
        with profile(activities=[ProfilerActivity.PrivateUse1]) as prof:
            (a + a).sum().item()
        path = tmp_path / f"trace{round_}.json"
        prof.export_chrome_trace(str(path))
        assert [e["name"] for e in kernels(path)] == ["add", "row_sum"]


def test_each_packet_names_the_stream_that_submitted_it(tmp_path):
    a = torch.randn(16, 16, device="npu")
    side = torch.npu.Stream()
    with profile(activities=[ProfilerActivity.PrivateUse1]) as prof:
        b = a + 1.0
        with torch.npu.stream(side):
            c = a * 2.0
        torch.npu.synchronize()
    prof.export_chrome_trace(str(tmp_path / "trace.json"))
    events = kernels(tmp_path / "trace.json")
    assert [(e["name"], e["args"]["stream"]) for e in events] == [("adds", 0), ("muls", side.stream_id)]
    del b, c
