# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Errors from the C++ loader arrive as Python exceptions with the C++ context: missing files
as FileNotFoundError, bad data as patchfeed.CorruptDataError naming the file, bad arguments as
ValueError; a failed batch does not stop the loader. Cases that cannot be used at creation are
listed together (or, with error_policy="skip", left out with one warning); check_finite fails
or redraws samples holding NaN or Inf; each construction message names the option and the fix."""

from __future__ import annotations

import pickle

import blosc2
import numpy as np
import patchfeed
import pytest
from loader_testlib import PATCH, SHAPES, check_batch, write_dataset


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
    with pytest.raises(MemoryError, match="more than memory_budget"):
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


# ---- cases that cannot be used at creation ---------------------------------------------------

FIVE_SHAPES = SHAPES + [(1, 20, 20, 20)]


def damage_two_cases(folder):
    """Case 1's image cut inside its header; case 3's label map rewritten as int32."""
    image = folder / "case_001.b2nd"
    image.write_bytes(image.read_bytes()[:40])
    seg = folder / "case_003_seg.b2nd"
    arr = blosc2.open(str(seg))
    blosc2.asarray(arr[:].astype(np.int32), urlpath=str(seg), mode="w", chunks=arr.chunks,
                   blocks=arr.blocks)


def test_bad_cases_at_creation_are_listed_together(tmp_path):
    folder = write_dataset(tmp_path / "ds", FIVE_SHAPES)
    damage_two_cases(folder)
    with pytest.raises(patchfeed.CorruptDataError) as info:  # the first bad case's type
        make_loader(folder)
    message = str(info.value)
    assert "2 of 5 cases cannot be used" in message
    assert f"case 'case_001' (#1): array 'image': {folder / 'case_001.b2nd'}" in message
    assert f"case 'case_003' (#3): array 'seg' ({folder / 'case_003_seg.b2nd'})" in message
    assert "'<i4'" in message and "error_policy" in message


def test_skip_leaves_bad_cases_out_with_one_warning(tmp_path):
    folder = write_dataset(tmp_path / "ds", FIVE_SHAPES)
    damage_two_cases(folder)
    with pytest.warns(UserWarning) as caught:
        loader = make_loader(folder, batch_size=4, seed=5, error_policy="skip",
                             oversample_foreground=0.5, foreground_cache_dir="")
    assert len(caught) == 1
    warning = str(caught[0].message)
    assert "2 cases cannot be used" in warning
    assert "'case_001' (#1)" in warning and "'case_003' (#3)" in warning
    assert "case_001.b2nd" in warning and "case_003_seg.b2nd" in warning
    with loader:
        drawn = set()
        for _ in range(10):
            batch = loader.next_batch()
            check_batch(loader, batch)  # every sample equals python-blosc2's read of its box
            drawn |= {s.case_index for s in loader.last_batch.samples}
            del batch
        assert drawn == {0, 2, 4}
        metrics = loader.metrics()
        assert metrics["cases_excluded"] == 2
        assert metrics["samples_skipped"] == 0


def test_label_maps_python_cannot_open_are_left_to_the_loader(tmp_path):
    # An nnU-Net folder with class_locations: the loader opens label maps in Python for their
    # shapes. A damaged one must not stop it there: the C++ loader lists it with the others.
    folder = write_dataset(tmp_path / "ds", FIVE_SHAPES)
    for i, shape in enumerate(FIVE_SHAPES):
        rows = np.array([[0, s // 2, s // 2, s // 2] for s in shape[1:2]], dtype=np.int64)
        with open(folder / f"case_{i:03d}.pkl", "wb") as f:
            pickle.dump({"class_locations": {1: rows, 2: rows}}, f)
    for name in ("case_002_seg.b2nd", "case_004_seg.b2nd"):
        (folder / name).write_bytes(b"not a frame")
    with pytest.raises(patchfeed.CorruptDataError, match="2 of 5 cases") as info:
        make_loader(folder, oversample_foreground=0.5)
    assert "case_002_seg.b2nd" in str(info.value) and "case_004_seg.b2nd" in str(info.value)
    with pytest.warns(UserWarning, match="case_004_seg.b2nd"):
        loader = make_loader(folder, batch_size=4, error_policy="skip", oversample_foreground=0.5)
    with loader:
        for _ in range(5):
            batch = loader.next_batch()
            assert {s.case_index for s in loader.last_batch.samples} <= {0, 1, 3}
            del batch


# ---- check_finite ---------------------------------------------------------------------------

def plant_nan_and_inf(folder):
    """Case 1's image gets one NaN and one Inf near its centre."""
    path = folder / "case_001.b2nd"
    arr = blosc2.open(str(path))
    data = arr[:]
    data[0, 8, 8, 8] = np.nan
    data[0, 7, 7, 7] = np.inf
    blosc2.asarray(data, urlpath=str(path), mode="w", chunks=arr.chunks, blocks=arr.blocks)


@pytest.fixture
def nan_dataset(tmp_path):
    # Cases the size of the patch: every sample is a whole case.
    folder = write_dataset(tmp_path / "ds", [(1, 16, 16, 16)] * 3)
    plant_nan_and_inf(folder)
    return folder


AUGMENT = {"patch_size": (8, 8, 8)}


@pytest.mark.parametrize("augmentation", [None, AUGMENT])
def test_check_finite_fails_the_sample_naming_it(nan_dataset, augmentation):
    loader = make_loader(nan_dataset, batch_size=2, check_finite=True, need_to_pad=(0, 0, 0),
                         augmentation=augmentation)
    with loader:
        with pytest.raises(patchfeed.CorruptDataError) as info:
            for _ in range(30):
                del loader.next_batch()["image"]
        assert loader.metrics()["samples_nonfinite"] >= 1
    message = str(info.value)
    assert "case 'case_001' (#1), array 'image'" in message
    assert str(nan_dataset / "case_001.b2nd") in message
    assert "NaN or infinite" in message
    if augmentation is None:
        assert ": 2 values are NaN or infinite" in message


@pytest.mark.parametrize("augmentation", [None, AUGMENT])
def test_check_finite_skip_redraws(nan_dataset, augmentation):
    with make_loader(nan_dataset, batch_size=2, check_finite=True, error_policy="skip",
                     need_to_pad=(0, 0, 0), augmentation=augmentation, as_numpy=True) as loader:
        for _ in range(10):
            batch = loader.next_batch()
            assert np.isfinite(batch["image"]).all()
            assert 1 not in {s.case_index for s in loader.last_batch.samples}
            if augmentation is None:
                check_batch(loader, batch)
            del batch
        # Batches read ahead keep counting while this runs: no equality between counters.
        metrics = loader.metrics()
        assert metrics["samples_nonfinite"] > 0 and metrics["samples_skipped"] > 0
        assert metrics["read_errors"] == 0


def test_without_check_finite_the_values_are_delivered(nan_dataset):
    with make_loader(nan_dataset, batch_size=2, need_to_pad=(0, 0, 0), as_numpy=True) as loader:
        seen = 0
        for _ in range(10):
            batch = loader.next_batch()
            check_batch(loader, batch)
            seen += int(np.isnan(batch["image"]).sum())
            del batch
        assert seen > 0


# ---- messages that say what was wrong and what to do -----------------------------------------

@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"batch_size": 0}, "sampler: batch_size must be at least 1 (got 0)"),
        ({"batch_size": 1, "world_size": 2},
         "sampler: the global batch size 1 is smaller than the world size 2: every rank needs a "
         "sample; give batch_size >= 2"),
        ({"patch_size": (16, 16)},
         "loader: patch_size has 2 dimensions but the cases' arrays have 3 spatial dimensions "
         "(array 'image' of case 'case_000' has shape (1, 24, 20, 20)); give 3 sizes, or "
         "(1, Y, X) for 2-D patches from 3-D cases"),
        ({"patch_size": (16, 0, 16)},
         "sampler: patch_size must be at least 1 on every axis (got 0 on axis 1)"),
        ({"arrays": ["image", "label"]},
         "loader: the dataset has no array 'label'; its arrays are 'image', 'seg'"),
        ({"ring_size": 0},
         "loader: ring_size must be at least 1 (got 0): the ring holds the batches being read "
         "and those you hold; 2 to 4 is usual"),
        ({"num_threads": -1}, "loader: num_threads must be at least 0 (got -1); 0 uses every core"),
        ({"max_open_files": 0}, "loader: max_open_files must be at least 1 (got 0)"),
        ({"case_weights": [1, 1]},
         "loader: case_weights has 2 weights for 4 cases; give one per case, in dataset order"),
        ({"augmentation": {"patch_size": (8, 8)}},
         "loader: the augmentation's patch_size has 2 dimensions but patch_size (the crop the "
         "sampler draws) has 3; give 2, or a (1, Y, X) crop for 2-D patches from 3-D cases"),
        ({"rank": 2, "world_size": 2},
         "sampler: rank must be in [0, world_size) (got rank 2, world_size 2)"),
    ],
)
def test_construction_messages(dataset_dir, kwargs, message):
    kwargs.setdefault("patch_size", PATCH)
    with pytest.raises(ValueError) as info:
        patchfeed.Loader(dataset_dir, kwargs.pop("patch_size"), kwargs.pop("batch_size", 2),
                         num_threads=kwargs.pop("num_threads", 1), **kwargs)
    assert str(info.value) == message


def test_memory_budget_message_says_what_to_change(dataset_dir):
    with pytest.raises(MemoryError) as info:
        make_loader(dataset_dir, memory_budget=1 << 16)
    assert str(info.value).startswith("loader: this configuration needs ")
    assert str(info.value).endswith(
        "more than memory_budget, 0.1 MiB (65536 bytes); lower batch_size, patch_size or "
        "ring_size, or raise memory_budget")


def test_position_messages(dataset_dir):
    with make_loader(dataset_dir, epoch_mode="without_replacement") as loader:  # 2 batches
        with pytest.raises(ValueError, match=r"^loader: epoch must be >= 0 \(got -1\)$"):
            loader.set_epoch(-1)
        state = loader.state_dict()
        with pytest.raises(ValueError, match=r"^loader: batch index must be >= 0 \(got -1\)$"):
            loader.load_state_dict({**state, "next_batch": -1})
        with pytest.raises(ValueError, match=r"batch index 9 is past the end of the epoch "
                                             r"\(2 batches\); give 0 to 2$"):
            loader.load_state_dict({**state, "next_batch": 9})
