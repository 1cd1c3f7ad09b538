"""torch.npu.Stream / Event and torch.Stream / torch.Event on npu: streams
as runtime command queues (run in submission order), events as points after
a stream's own work, and device time between timed events (modelled on
PyTorch's OpenReg stream and event tests)."""

from __future__ import annotations

import threading

import pytest
import torch


def test_new_streams_are_distinct_and_become_current_in_a_block():
    s1, s2 = torch.npu.Stream(), torch.Stream(device="npu")
    assert s1.device == s2.device == torch.device("npu", 0)
    assert isinstance(s1, torch.Stream) and s1 != s2
    default = torch.npu.default_stream()
    assert torch.npu.current_stream() == default and default.stream_id == 0
    with torch.npu.stream(s1):
        assert torch.npu.current_stream() == s1
        with s2:
            assert torch.npu.current_stream() == s2
        assert torch.npu.current_stream() == s1
    assert torch.npu.current_stream() == default


def test_the_current_stream_is_per_thread():
    s = torch.npu.Stream()
    seen = []
    with torch.npu.stream(s):
        thread = threading.Thread(target=lambda: seen.append(torch.npu.current_stream()))
        thread.start()
        thread.join()
    assert seen == [torch.npu.default_stream()]


def test_work_on_two_streams_is_ordered_and_synchronised():
    s1, s2 = torch.npu.Stream(), torch.npu.Stream()
    x = torch.randn(128, 128)
    with torch.npu.stream(s1):
        a = x.npu() @ x.npu()
        done = s1.record_event()
    s2.wait_event(done)
    with torch.npu.stream(s2):
        b = a + 1.0
    s2.synchronize()
    assert s1.query() and s2.query() and done.query()
    torch.testing.assert_close(b.cpu(), x @ x + 1.0, rtol=1e-5, atol=1e-4)


def test_a_streams_events_stand_after_its_own_work_only():
    # Each stream is a runtime command queue: a stream with no work of its
    # own is idle while another stream's long queue is still running.
    x = torch.randn(256, 256, device="npu")
    for _ in range(30):
        x = x @ x / 256.0
    idle = torch.npu.Stream()
    assert idle.query()
    marker = idle.record_event()
    assert marker.query()
    idle.synchronize()
    # The default stream's event waits for its work, which then is done.
    torch.npu.current_stream().synchronize()
    assert torch.npu.current_stream().query()
    assert torch.isfinite(x.cpu()).all()


def test_a_block_recorded_on_another_stream_is_reused_safely():
    side = torch.npu.Stream()
    x = torch.arange(4096, dtype=torch.float32, device="npu")
    with torch.npu.stream(side):
        y = x * 2.0  # side reads x
    x.record_stream(side)
    address = x.data_ptr()
    del x
    z = torch.full((4096,), 7.0, device="npu")  # may take x's block at once
    side.synchronize()
    assert torch.equal(y.cpu(), torch.arange(4096, dtype=torch.float32) * 2.0)
    assert torch.equal(z.cpu(), torch.full((4096,), 7.0))
    assert z.data_ptr() == address


def test_a_stream_id_no_queue_has_is_an_error():
    made_up = torch.Stream(stream_id=1 << 40, device_index=0,
                           device_type=torch.npu.current_stream().device_type)
    with pytest.raises(RuntimeError, match="names no command queue"):
        with torch.npu.stream(made_up):
            (torch.ones(4, device="npu") + 1).cpu()
    unknown = torch.Stream(stream_id=1 << 30, device_index=0,
                           device_type=torch.npu.current_stream().device_type)
    with pytest.raises(RuntimeError, match="does not exist"):
        unknown.synchronize()


def test_event_query_and_synchronize_follow_the_stream():
    event = torch.npu.Event()
    assert event.query()  # never recorded
    x = torch.randn(256, 256, device="npu")
    for _ in range(4):
        x = x @ x / 256.0
    event.record()
    event.synchronize()
    assert event.query()


def test_elapsed_time_is_device_time_at_the_configured_clock():
    start, end = torch.npu.Event(enable_timing=True), torch.Event(device="npu", enable_timing=True)
    x = torch.randn(64, 64, device="npu")
    torch.npu.synchronize()
    before = torch.npu.device_stats()["cycles"]
    start.record()
    y = x @ x
    end.record()
    end.synchronize()
    after = torch.npu.device_stats()["cycles"]
    milliseconds = start.elapsed_time(end)
    # The matmul's cycles at 1 GHz (isa/hardware.td): a 64^3 product takes
    # thousands of cycles, microseconds of device time.
    assert 0 < milliseconds <= (after - before) / 1e6
    assert end.elapsed_time(start) == pytest.approx(-milliseconds)
    assert start.elapsed_time(start) == 0.0
    del y


def test_elapsed_time_needs_timed_recorded_events():
    start, end = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)
    start.record()
    with pytest.raises(ValueError, match="must be recorded"):  # PyTorch's own checks
        start.elapsed_time(end)
    untimed = torch.npu.Event()
    untimed.record()
    with pytest.raises(ValueError, match="enable_timing=True"):
        start.elapsed_time(untimed)
    with pytest.raises(RuntimeError, match="interprocess"):
        torch.npu.Event(interprocess=True)


def test_timed_events_recorded_in_a_loop_keep_the_order():
    x = torch.ones(8, device="npu")
    for _ in range(2000):
        event = torch.npu.Event(enable_timing=True)
        x = x + 1.0
        event.record()
    event.synchronize()
    assert x.cpu()[0].item() == 2001.0
