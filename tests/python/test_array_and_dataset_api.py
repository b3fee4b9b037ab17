# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""What a NumPy / torch user expects of patchfeed's objects: `NdArray` behaves like an array
(repr, ndim, size, nbytes, len, np.asarray), and `Dataset.from_zarr_group` finds each case's
label as `patchfeed convert` does."""

from __future__ import annotations

import numpy as np
import patchfeed
import pytest
import zarr


def test_ndarray_is_array_like(tmp_path):
    data = np.arange(2 * 5 * 6 * 7, dtype=np.float32).reshape(2, 5, 6, 7)
    path = str(tmp_path / "a.b2nd")
    patchfeed.write_b2nd(path, data, chunks=(1, 4, 4, 4), blocks=(1, 2, 2, 4))
    arr = patchfeed.open_array(path)
    assert (arr.ndim, arr.size, arr.nbytes, len(arr)) == (4, data.size, data.nbytes, 2)
    np.testing.assert_array_equal(np.asarray(arr), data)
    np.testing.assert_array_equal(np.array(arr, dtype=np.float64), data.astype(np.float64))
    assert np.asarray(arr).dtype == np.float32
    assert np.asarray(arr).flags.writeable and arr[0, 1:3].flags.writeable  # new arrays
    text = repr(arr)
    for part in (repr(path), "b2nd", "(2, 5, 6, 7)", "float32", "chunks=(1, 4, 4, 4)"):
        assert part in text, text
    with pytest.raises(ValueError, match="copy"):
        np.asarray(arr, copy=False)


def _zarr_case(folder, name, label_name, rng, shape=(1, 12, 10, 8)):
    group = zarr.open_group(str(folder / name), mode="w")
    image = rng.standard_normal(shape).astype(np.float32)
    group.create_array("image", shape=shape, dtype="<f4", chunks=(1, 6, 5, 4))[...] = image
    if label_name:
        label = rng.integers(0, 3, size=shape).astype(np.int16)
        group.create_array(label_name, shape=shape, dtype="<i2", chunks=(1, 6, 5, 4))[...] = label


def test_from_zarr_group_finds_labels_as_convert_does(tmp_path):
    rng = np.random.default_rng(1)
    for i, label_name in enumerate(("seg", "label", "labels")):
        _zarr_case(tmp_path, f"case{i}", label_name, rng)
    found = patchfeed.Dataset.from_zarr_group(tmp_path)
    assert found.case_ids == ["case0", "case1", "case2"]
    assert found.array_names == ["image", "seg"]
    assert found.paths(1)[1].endswith("case1/label")
    with patchfeed.Loader(found, (8, 8, 8), 2, seed=3, as_numpy=True, num_threads=1) as loader:
        batch = loader.next_batch()
        assert set(batch) == {"image", "seg"} and batch["seg"].dtype == np.int16


def test_from_zarr_group_refuses_a_half_labelled_group(tmp_path):
    rng = np.random.default_rng(2)
    _zarr_case(tmp_path, "a", "seg", rng)
    _zarr_case(tmp_path, "b", None, rng)
    with pytest.raises(ValueError, match="1 cases have a label and 1 do not"):
        patchfeed.Dataset.from_zarr_group(tmp_path)
    images = patchfeed.Dataset.from_zarr_group(tmp_path, ["image"])
    assert images.case_ids == ["a", "b"] and images.array_names == ["image"]


def test_from_zarr_group_of_plain_arrays_is_image_only(tmp_path):
    rng = np.random.default_rng(3)
    for name in ("x", "y"):
        zarr.create_array(str(tmp_path / name), shape=(1, 8, 8, 8), dtype="<f4",
                          chunks=(1, 4, 4, 4))[...] = rng.standard_normal((1, 8, 8, 8))
    ds = patchfeed.Dataset.from_zarr_group(tmp_path)
    assert ds.case_ids == ["x", "y"] and ds.array_names == ["image"]
