# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""patchfeed.Loader's batches: contents equal python-blosc2's reads of the same boxes; tensors
and arrays share the ring slot's memory (no copy); a slot returns to the ring only when the
last tensor of its batch is freed, and a held slot is skipped while the loader keeps going."""

from __future__ import annotations

import gc

import numpy as np
import patchfeed
import pytest
import torch
from loader_testlib import PATCH, check_batch, write_dataset


@pytest.fixture(scope="module")
def dataset_dir(tmp_path_factory):
    return write_dataset(tmp_path_factory.mktemp("loader_batches"))


def make_loader(folder, **kw):
    kw.setdefault("num_threads", 2)
    kw.setdefault("seed", 7)
    return patchfeed.Loader(folder, PATCH, kw.pop("batch_size", 2), **kw)


def test_batches_equal_blosc2_reads(dataset_dir):
    with make_loader(dataset_dir, batch_size=3, oversample_foreground=0.5) as loader:
        assert loader.array_layout == {
            "image": ("<f4", (3, 1, *PATCH)),
            "seg": ("<i2", (3, 1, *PATCH)),
        }
        forced = 0
        for _, batch in zip(range(6), loader):
            assert set(batch) == {"image", "seg"}
            assert isinstance(batch["image"], torch.Tensor)
            assert batch["image"].dtype == torch.float32 and batch["seg"].dtype == torch.int16
            assert tuple(batch["image"].shape) == (3, 1, *PATCH)
            assert batch["image"].is_contiguous()
            check_batch(loader, batch)
            forced += sum(s.forced_foreground for s in loader.last_batch.samples)
        assert forced > 0  # the oversampled positions were exercised too


def test_numpy_batches_equal_blosc2_reads(dataset_dir):
    with make_loader(dataset_dir, as_numpy=True) as loader:
        batch = loader.next_batch()
        assert isinstance(batch["image"], np.ndarray) and batch["image"].dtype == np.float32
        assert batch["seg"].dtype == np.int16
        check_batch(loader, batch)


def test_tensor_views_the_slot_without_copy(dataset_dir):
    with make_loader(dataset_dir, ring_size=3) as loader:
        batch = loader.next_batch()
        ptrs = loader.last_batch.data_ptrs
        assert batch["image"].data_ptr() == ptrs["image"]
        assert batch["seg"].data_ptr() == ptrs["seg"]
        # A write through the tensor is a write into the slot: same memory, seen by NumPy.
        batch["image"][0, 0, 0, 0, 0] = 1234.5
        assert torch.from_numpy(np.asarray(batch["image"]))[0, 0, 0, 0, 0] == 1234.5


def test_numpy_views_the_slot_without_copy(dataset_dir):
    with make_loader(dataset_dir, as_numpy=True) as loader:
        batch = loader.next_batch()
        ptrs = loader.last_batch.data_ptrs
        assert batch["image"].ctypes.data == ptrs["image"]
        assert batch["seg"].ctypes.data == ptrs["seg"]
        assert not batch["image"].flags.owndata


def test_released_slots_are_reused(dataset_dir):
    # Batches dropped before the next call cycle through the ring's K slots.
    with make_loader(dataset_dir, ring_size=2) as loader:
        seen = []
        for _ in range(8):
            batch = loader.next_batch()
            seen.append(batch["image"].data_ptr())
            del batch
        assert len(set(seen)) == 2
        assert seen[0] in seen[2:]


def test_held_tensor_keeps_its_slot_out_of_the_ring(dataset_dir):
    with make_loader(dataset_dir, ring_size=3) as loader:
        held = loader.next_batch()["seg"]  # the batch dict and its image are dropped
        held_ptr = loader.last_batch.data_ptrs["image"]
        gc.collect()
        assert loader.metrics()["slots_leased"] == 1
        # The loader keeps producing into the other slots, never into the held one.
        others = []
        for _ in range(6):
            batch = loader.next_batch()
            others.append(loader.last_batch.data_ptrs["image"])
            check_batch_layout = batch["image"].shape
            del batch
        assert check_batch_layout == (2, 1, *PATCH)
        assert held_ptr not in others and len(set(others)) == 2
        before = held.clone()
        assert torch.equal(held, before)  # not overwritten while held
        del held
        gc.collect()
        assert loader.metrics()["slots_leased"] == 0
        later = []
        for _ in range(6):
            loader.next_batch()
            later.append(loader.last_batch.data_ptrs["image"])
        assert held_ptr in later


def test_slot_returns_when_last_tensor_is_freed(dataset_dir):
    with make_loader(dataset_dir, ring_size=3) as loader:
        batch = loader.next_batch()
        image, seg = batch["image"], batch["seg"]
        del batch
        assert loader.metrics()["slots_leased"] == 1
        del image
        assert loader.metrics()["slots_leased"] == 1  # seg still views the slot
        del seg
        assert loader.metrics()["slots_leased"] == 0


def test_holding_every_slot_is_a_clear_error(dataset_dir):
    with make_loader(dataset_dir, ring_size=2) as loader:
        kept = [loader.next_batch(), loader.next_batch()]
        with pytest.raises(MemoryError, match="release a lease"):
            loader.next_batch()
        kept.pop()
        assert loader.next_batch() is not None


def test_batches_outlive_the_loader(dataset_dir):
    loader = make_loader(dataset_dir)
    batch = loader.next_batch()
    want = batch["image"].clone()
    loader.close()
    assert loader.closed
    assert torch.equal(batch["image"], want)
    with pytest.raises(ValueError, match="closed"):
        loader.next_batch()


def test_pin_memory_off_and_auto(dataset_dir):
    with make_loader(dataset_dir, pin_memory=False) as loader:
        loader.next_batch()
        assert not loader.pinned and not loader.last_batch.pinned
    with make_loader(dataset_dir) as loader:
        loader.next_batch()
        # Without a CUDA runtime, "auto" falls back to plain memory and says why.
        if not torch.cuda.is_available():
            assert not loader.pinned and loader.unpinned_reason


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error without CUDA")
def test_pin_memory_required_without_cuda_is_an_error(dataset_dir):
    with pytest.raises((NotImplementedError, RuntimeError), match="(?i)cuda"):
        make_loader(dataset_dir, pin_memory=True)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error without CUDA")
def test_cuda_device_without_cuda_is_a_clear_error(dataset_dir):
    with pytest.raises(RuntimeError, match="torch.cuda.is_available"):
        make_loader(dataset_dir, device="cuda")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_device_copies_batches(dataset_dir):
    with make_loader(dataset_dir, device="cuda") as loader:
        batch = loader.next_batch()
        assert batch["image"].is_cuda
        torch.cuda.synchronize()
        check_batch(loader, {k: v.cpu() for k, v in batch.items()})


def test_metrics_count_batches(dataset_dir):
    with make_loader(dataset_dir) as loader:
        for _ in range(3):
            loader.next_batch()
        m = loader.metrics()
        assert m["batches_delivered"] == 3 and m["samples_delivered"] == 6
        assert m["bytes_delivered"] > 0 and m["slots"] == 3
