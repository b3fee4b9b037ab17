# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Errors from the C++ loader arrive as Python exceptions with the C++ context: missing files
as FileNotFoundError, bad data as patchfeed.CorruptDataError naming the file, bad arguments as
ValueError; a failed batch does not stop the loader."""

from __future__ import annotations

import numpy as np
import patchfeed
import pytest
from loader_testlib import PATCH, write_dataset


@pytest.fixture
def dataset_dir(tmp_path):
    return write_dataset(tmp_path / "ds")


def make_loader(folder, **kw):
    kw.setdefault("num_threads", 1)
    return patchfeed.Loader(folder, PATCH, kw.pop("batch_size", 2), **kw)


def test_missing_folder_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere"):
        make_loader(tmp_path / "nowhere")


def test_missing_seg_names_the_file(dataset_dir):
    (dataset_dir / "case_002_seg.b2nd").unlink()
    with pytest.raises(FileNotFoundError, match="case_002_seg.b2nd"):
        make_loader(dataset_dir)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"batch_size": 0}, "batch"),
        ({"ring_size": 0}, "ring_size"),  # one name in Python and C++ (was num_slots)
        ({"num_threads": -1}, "num_threads"),
        ({"epoch_mode": "sometimes"}, "epoch_mode"),
        ({"io_mode": "carrier-pigeon"}, "io_mode"),
        ({"error_policy": "ignore"}, "error_policy"),
        ({"arrays": ["image", "label"]}, "label"),
        ({"pad_values": {"label": 3}}, "label"),
        ({"device": "tpu"}, "device"),
    ],
)
def test_bad_arguments_are_value_errors(dataset_dir, kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_loader(dataset_dir, **kwargs)


def test_bad_patch_size_is_a_value_error(dataset_dir):
    with pytest.raises(ValueError):
        patchfeed.Loader(dataset_dir, (16, 16), 2)
    with pytest.raises(ValueError):
        patchfeed.Loader(dataset_dir, (16, 0, 16), 2)


def test_memory_budget_is_enforced_with_numbers(dataset_dir):
    with pytest.raises(MemoryError, match="memory budget"):
        make_loader(dataset_dir, memory_budget=1 << 16)


def test_corrupt_file_is_corrupt_data_error_with_context(dataset_dir):
    path = dataset_dir / "case_001.b2nd"
    raw = bytearray(path.read_bytes())
    raw[: len(raw) // 2] = bytes(len(raw) // 2)  # the header and first chunks zeroed
    path.write_bytes(bytes(raw))
    with pytest.raises(patchfeed.CorruptDataError, match="case_001"):
        make_loader(dataset_dir)


def test_corrupt_chunk_fails_its_batch_then_loading_goes_on(dataset_dir, tmp_path):
    # Damage compressed data (not the header) of one case's image: the probe at creation
    # succeeds, batches whose boxes touch the damaged chunk fail when read, the others load.
    import blosc2

    path = dataset_dir / "case_000.b2nd"
    arr = blosc2.open(str(path))
    cframe_len = len(arr.schunk.to_cframe())
    raw = bytearray(path.read_bytes())
    assert cframe_len == len(raw)
    # Chunk payloads sit between the frame header and the trailer; flip bytes in the middle.
    mid = len(raw) // 2
    for i in range(mid - 64, mid + 64):
        raw[i] ^= 0x5A
    path.write_bytes(bytes(raw))
    loader = make_loader(dataset_dir, batch_size=4, seed=3, oversample_foreground=0)
    failures, good = [], 0
    for _ in range(12):
        try:
            batch = loader.next_batch()
        except patchfeed.CorruptDataError as e:
            failures.append(str(e))
        else:
            good += 1  # boxes that miss the damaged chunks read fine
            del batch
    loader.close()
    assert failures and good
    assert all("case_000.b2nd" in msg for msg in failures), failures[0]


def test_skip_policy_redraws_bad_samples(dataset_dir):
    path = dataset_dir / "case_000.b2nd"
    raw = bytearray(path.read_bytes())
    mid = len(raw) // 2
    for i in range(mid - 64, mid + 64):
        raw[i] ^= 0x5A
    path.write_bytes(bytes(raw))
    with make_loader(dataset_dir, batch_size=4, seed=3, error_policy="skip") as loader:
        for _ in range(8):
            batch = loader.next_batch()
            assert np.isfinite(batch["image"].numpy()).all()
        assert loader.metrics()["samples_skipped"] > 0


def test_dataset_from_folder_and_list(dataset_dir, tmp_path):
    ds = patchfeed.Dataset.from_folder(dataset_dir, {"image": ".b2nd", "seg": "_seg.b2nd"})
    assert ds.case_ids == ["case_000", "case_001", "case_002", "case_003"]
    listed = patchfeed.Dataset.from_list(
        ["image", "seg"], {cid: ds.paths(i) for i, cid in enumerate(ds.case_ids[:2])}
    )
    assert len(listed) == 2
    with patchfeed.Loader(listed, PATCH, 2, arrays=["seg"], pad_values={"seg": 0}) as loader:
        assert set(loader.next_batch()) == {"seg"}
    missing = patchfeed.Dataset.from_list(["image"], {"x": [str(tmp_path / "missing.b2nd")]})
    with pytest.raises(FileNotFoundError, match="missing.b2nd"):
        patchfeed.Loader(missing, PATCH, 1)
