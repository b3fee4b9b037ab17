# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Zarr arrays written by tensorstore (Google's C++ zarr implementation, a second writer
besides zarr-python) read exactly by patchfeed: zarr v3 sharded (index at the start and the
end, with and without crc32c, partly written shards) and unsharded with gzip; zarr v2 with
Blosc, zstd and big-endian items.
"""

from __future__ import annotations

import numpy as np
import pytest

import patchfeed

ts = pytest.importorskip("tensorstore")


def _write(spec, data, region=None):
    spec["metadata"]["shape"] = list(data.shape)
    if spec["driver"] == "zarr3":
        spec["metadata"].setdefault("data_type", data.dtype.newbyteorder("=").name)
    arr = ts.open(spec, create=True).result()
    if region is None:
        arr[...].write(data).result()
    else:
        arr[region].write(data[region]).result()


def _boxes(shape, rng, n=10):
    out = [([0] * len(shape), list(shape))]
    for _ in range(n):
        start = [int(rng.integers(-2, s)) for s in shape]
        out.append((start, [a + int(rng.integers(1, s + 3)) for a, s in zip(start, shape)]))
    return out


def _reference(data, start, stop, fill):
    out = np.full([b - a for a, b in zip(start, stop)], fill, dtype=data.dtype)
    src = tuple(slice(max(a, 0), min(b, n)) for a, b, n in zip(start, stop, data.shape))
    dst = tuple(slice(max(a, 0) - a, min(b, n) - a) for a, b, n in zip(start, stop, data.shape))
    if all(s.start < s.stop for s in src):
        out[dst] = data[src]
    return out


def _check(path, expected, rng, fill=0):
    arr = patchfeed.open_array(str(path))
    assert arr.shape == expected.shape
    for start, stop in _boxes(expected.shape, rng):
        np.testing.assert_array_equal(arr.read_box(start, stop, pad=fill),
                                      _reference(expected, start, stop, fill),
                                      err_msg=f"{path} {start}:{stop}")


@pytest.mark.parametrize("index_location", ["start", "end"])
@pytest.mark.parametrize("index_crc", [False, True])
def test_tensorstore_zarr3_sharded(tmp_path, index_location, index_crc):
    rng = np.random.default_rng(1)
    data = rng.integers(0, 4000, size=(30, 26, 21)).astype(np.uint16)
    index_codecs = [{"name": "bytes", "configuration": {"endian": "little"}}]
    if index_crc:
        index_codecs.append({"name": "crc32c"})
    spec = {
        "driver": "zarr3",
        "kvstore": {"driver": "file", "path": str(tmp_path / "a.zarr")},
        "metadata": {
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [16, 16, 12]}},
            "chunk_key_encoding": {"name": "default"},
            "data_type": "uint16",
            "fill_value": 0,
            "codecs": [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [8, 4, 6],
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                           {"name": "zstd", "configuration": {"level": 1}}],
                "index_codecs": index_codecs,
                "index_location": index_location}}],
        },
    }
    # Only part written: absent inner chunks and whole shards never written read as fill.
    region = np.s_[:13, 3:20, :]
    _write(spec, data, region)
    expected = np.zeros_like(data)
    expected[region] = data[region]
    _check(tmp_path / "a.zarr", expected, rng)


def test_tensorstore_zarr3_gzip_big_endian(tmp_path):
    rng = np.random.default_rng(2)
    data = rng.standard_normal((17, 9)).astype(np.float32)
    spec = {
        "driver": "zarr3",
        "kvstore": {"driver": "file", "path": str(tmp_path / "b.zarr")},
        "metadata": {
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5, 4]}},
            "codecs": [{"name": "transpose", "configuration": {"order": [1, 0]}},
                       {"name": "bytes", "configuration": {"endian": "big"}},
                       {"name": "gzip", "configuration": {"level": 3}}],
        },
    }
    _write(spec, data)
    _check(tmp_path / "b.zarr", data, rng)


@pytest.mark.parametrize("compressor,dtype", [
    ({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1}, "<i2"),
    ({"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2}, "<f8"),
    ({"id": "zstd", "level": 2}, ">u4"),
])
def test_tensorstore_zarr2(tmp_path, compressor, dtype):
    rng = np.random.default_rng(3)
    data = (rng.standard_normal((23, 14, 5)) * 1000).astype(np.dtype(dtype).newbyteorder("="))
    if data.dtype.kind == "u":
        data = np.abs(data)
    spec = {
        "driver": "zarr",
        "kvstore": {"driver": "file", "path": str(tmp_path / "c.zarr")},
        "metadata": {"chunks": [8, 8, 5], "dtype": dtype, "compressor": compressor,
                     "fill_value": 0},
    }
    _write(spec, data)
    _check(tmp_path / "c.zarr", data, rng)
