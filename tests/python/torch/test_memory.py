"""Device memory: statistics, freeing, the block cache, out-of-memory,
resize_ and set_."""

from __future__ import annotations

import gc

import pytest
import torch

from npu_testing import run_python


def test_memory_returns_to_baseline_after_tensors_are_freed():
    gc.collect()
    baseline = torch.npu.memory_allocated()
    tensors = [torch.randn(256, 256, device="npu") for _ in range(4)]
    product = tensors[0] @ tensors[1] + tensors[2]
    assert torch.npu.memory_allocated() >= baseline + 5 * 256 * 256 * 4
    assert torch.npu.max_memory_allocated() >= torch.npu.memory_allocated()
    del tensors, product
    gc.collect()
    assert torch.npu.memory_allocated() == baseline
    # Freed blocks stay cached for reuse until empty_cache().
    assert torch.npu.memory_reserved() >= baseline
    torch.npu.empty_cache()
    stats = torch.npu.memory_stats()
    assert stats["reserved_bytes.all.current"] == stats["allocated_bytes.all.current"] == baseline
    assert stats["device.allocated_bytes"] == baseline


def test_peak_statistics_reset():
    x = torch.empty(1 << 20, device="npu")
    del x
    assert torch.npu.max_memory_allocated() >= 4 << 20
    torch.npu.reset_peak_memory_stats()
    assert torch.npu.max_memory_allocated() == torch.npu.memory_allocated()


def test_reserved_peak_free_memory_and_summary():
    gc.collect()
    torch.npu.empty_cache()
    free_before, total = torch.npu.mem_get_info()
    assert 0 < free_before <= total == torch.npu.memory_stats()["device.capacity_bytes"]
    x = torch.empty(1 << 20, device="npu")
    free_with, _ = torch.npu.mem_get_info()
    assert free_with <= free_before - (4 << 20)
    assert torch.npu.max_memory_reserved() >= torch.npu.memory_reserved() >= 4 << 20
    summary = torch.npu.memory_summary()
    for row in ("Allocated memory", "Reserved memory", "Device heap capacity", "Out-of-memory errors"):
        assert row in summary
    assert "Out-of-memory errors" not in torch.npu.memory_summary(abbreviated=True)
    del x
    torch.npu.empty_cache()
    torch.npu.reset_peak_memory_stats()
    assert torch.npu.max_memory_reserved() == torch.npu.memory_reserved()


def test_torch_accelerator_memory_functions_reach_the_allocator():
    # The allocator is a c10::DeviceAllocator, as CUDA's caching allocator.
    gc.collect()
    x = torch.empty(3000, device="npu")
    assert torch.accelerator.memory_allocated("npu") == torch.npu.memory_allocated()
    assert torch.accelerator.memory_reserved("npu") == torch.npu.memory_reserved()
    stats = torch.accelerator.memory_stats("npu")
    assert stats["allocated_bytes.all.current"] == torch.npu.memory_allocated()
    assert stats["requested_bytes.all.current"] >= 3000 * 4
    assert stats["segment.all.current"] >= 1
    peak = torch.accelerator.max_memory_allocated("npu")
    del x
    torch.accelerator.empty_cache()
    assert torch.npu.memory_stats()["cached_blocks"] == 0
    torch.accelerator.reset_peak_memory_stats("npu")
    assert torch.accelerator.max_memory_allocated("npu") <= peak
    assert torch.accelerator.max_memory_allocated("npu") == torch.npu.memory_allocated()


def test_cached_blocks_are_reused():
    torch.npu.empty_cache()
    before = torch.npu.memory_stats()
    for _ in range(10):
        torch.empty(1000, device="npu")
    after = torch.npu.memory_stats()
    assert after["num_cache_hits"] - before["num_cache_hits"] >= 9
    assert after["device.live_allocations"] - before["device.live_allocations"] <= 1


def test_out_of_memory_raises_and_the_device_stays_usable():
    with pytest.raises(torch.OutOfMemoryError, match="NPU out of memory"):
        torch.empty(1 << 40, dtype=torch.uint8, device="npu")
    held = []
    with pytest.raises(torch.OutOfMemoryError, match="NPU_MEMORY_SIZE"):
        for _ in range(64):
            held.append(torch.empty(1 << 30, dtype=torch.uint8, device="npu"))
    assert len(held) >= 4
    assert torch.npu.memory_stats()["num_ooms"] >= 2
    del held
    gc.collect()
    x = torch.arange(10.0, device="npu")
    assert torch.equal((x * 2).cpu(), torch.arange(10.0) * 2)


def test_resize_keeps_contents_and_grows_storage():
    x = torch.arange(6.0, device="npu")
    x.resize_(2, 3)
    assert x.shape == (2, 3) and torch.equal(x.cpu(), torch.arange(6.0).view(2, 3))
    x.resize_(4, 5)
    assert x.untyped_storage().nbytes() >= 80
    assert torch.equal(x.view(-1)[:6].cpu(), torch.arange(6.0))
    x.resize_(0)
    assert x.numel() == 0


def test_storage_resize_and_set():
    x = torch.arange(8.0, device="npu")
    storage = x.untyped_storage()
    storage.resize_(64)
    assert storage.nbytes() == 64
    y = torch.empty(0, device="npu")
    y.set_(storage, 2, (2, 3), (3, 1))
    assert torch.equal(y.cpu(), torch.arange(8.0)[2:8].view(2, 3))
    z = torch.empty(0, device="npu").set_(y)
    assert z.data_ptr() == y.data_ptr() and z.shape == y.shape
    w = torch.empty(0, device="npu").set_(x.untyped_storage())
    assert w.numel() == 16
    assert torch.empty(3, device="npu").set_().numel() == 0


def test_pinned_host_memory_and_a_pinning_data_loader():
    x = torch.randn(1000)
    pinned = x.pin_memory()
    assert pinned.is_pinned() and not x.is_pinned() and pinned[10:].is_pinned()
    assert torch.equal(pinned, x) and pinned.device.type == "cpu"
    on_npu = pinned.to("npu", non_blocking=True)
    torch.npu.synchronize()
    assert torch.equal(on_npu.cpu(), x)
    dataset = torch.utils.data.TensorDataset(torch.randn(40, 5), torch.arange(40))
    batches = list(torch.utils.data.DataLoader(dataset, batch_size=8, pin_memory=True))
    assert len(batches) == 5 and all(a.is_pinned() and b.is_pinned() for a, b in batches)
    assert torch.equal(torch.cat([b for _, b in batches]), torch.arange(40))
    del pinned
    gc.collect()
    assert not torch.empty(16).is_pinned()


def test_device_memory_holds_a_real_model_and_its_size_is_configurable():
    # The default 8G 'device' heap holds a Qwen2-0.5B-sized embedding (545 MB)
    # in one block; NPU_MEMORY_SIZE sets it, and the out-of-memory message
    # names it.
    big = run_python(
        "import torch; e = torch.empty(151936, 896, device='npu'); e[-1].fill_(2.0);"
        "free, total = torch.npu.mem_get_info(); print(total >= 8 << 30, e[-1, :2].cpu().tolist())")
    assert big.returncode == 0, big.stderr
    assert big.stdout.strip() == "True [2.0, 2.0]"
    small = run_python(
        "import torch\n"
        "x = torch.empty(700 << 20, dtype=torch.uint8, device='npu')\n"
        "print(torch.npu.mem_get_info()[1] < 2 << 30)\n"
        "torch.empty(2 << 30, dtype=torch.uint8, device='npu')", NPU_MEMORY_SIZE="1G")
    assert small.stdout.strip() == "True"
    assert "NPU out of memory" in small.stderr and "NPU_MEMORY_SIZE=1G" in small.stderr
    bad = run_python("import torch; torch.ones(1, device='npu')", NPU_MEMORY_SIZE="lots")
    assert bad.returncode != 0 and "NPU_MEMORY_SIZE='lots' is not a usable device memory size" in bad.stderr
