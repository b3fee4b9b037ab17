# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""zarr-python 3 round trips with patchfeed's Blosc selected, read back by stock zarr, and the
reverse: zarr v3 arrays through `zarr.config.set({"codecs.blosc": ...})`, zarr v2 arrays
through numcodecs' "blosc" replaced (`patchfeed.numcodecs.register(replace_blosc=True)`).
Several dtypes, uneven edge chunks, every shuffle."""

from __future__ import annotations

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", minversion="3.1")
numcodecs = pytest.importorskip("numcodecs")

from patchfeed import numcodecs as pf_numcodecs  # noqa: E402
from patchfeed import zarr_blosc  # noqa: E402

OURS = "patchfeed.zarr_blosc.BloscCodec"
CASES = [("float32", (37, 41, 29), (16, 16, 16), "shuffle", "lz4"),
         ("uint16", (100, 90), (32, 50), "bitshuffle", "zstd"),
         ("int64", (1000,), (300,), "noshuffle", "blosclz"),
         (">f8", (13, 7, 5, 3), (4, 4, 4, 2), "shuffle", "zlib"),
         ("uint8", (64, 64), (20, 30), "bitshuffle", "lz4hc")]


def data(dtype, shape):
    rng = np.random.default_rng(len(shape))
    return (rng.normal(50, 10, shape) + np.arange(np.prod(shape)).reshape(shape) % 7).astype(dtype)


@pytest.fixture(autouse=True, scope="module")
def registered():
    zarr_blosc.register()


def blosc_config(shuffle, cname):
    return {"name": "blosc", "configuration": {"cname": cname, "clevel": 5, "shuffle": shuffle,
                                               "typesize": 1, "blocksize": 0}}


@pytest.mark.parametrize("dtype,shape,chunks,shuffle,cname", CASES)
def test_v3_written_by_patchfeed_read_by_zarr_and_back(tmp_path, dtype, shape, chunks, shuffle,
                                                       cname):
    x = data(dtype, shape)
    with zarr.config.set({"codecs.blosc": OURS}):
        a = zarr.create_array(tmp_path / "ours.zarr", shape=shape, chunks=chunks, dtype=dtype,
                              compressors=[blosc_config(shuffle, cname)])
        assert type(a.metadata.codecs[-1]) is zarr_blosc.BloscCodec
        a[...] = x
    stock = zarr.open_array(tmp_path / "ours.zarr")
    assert type(stock.metadata.codecs[-1]) is zarr.codecs.BloscCodec
    np.testing.assert_array_equal(stock[...], x)

    b = zarr.create_array(tmp_path / "theirs.zarr", shape=shape, chunks=chunks, dtype=dtype,
                          compressors=[blosc_config(shuffle, cname)])
    assert type(b.metadata.codecs[-1]) is zarr.codecs.BloscCodec
    b[...] = x
    with zarr.config.set({"codecs.blosc": OURS}):
        ours = zarr.open_array(tmp_path / "theirs.zarr")
        assert type(ours.metadata.codecs[-1]) is zarr_blosc.BloscCodec
        np.testing.assert_array_equal(ours[...], x)
        part = tuple(slice(1, None, 2) for _ in shape)  # a strided read across chunks
        np.testing.assert_array_equal(ours[part], x[part])


@pytest.mark.parametrize("dtype,shape,chunks,shuffle,cname", CASES)
def test_v2_blosc_replaced_in_numcodecs(tmp_path, dtype, shape, chunks, shuffle, cname):
    from numcodecs.registry import codec_registry

    x = data(dtype, shape)
    shuffle_code = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}[shuffle]
    compressor = numcodecs.Blosc(cname=cname, clevel=5, shuffle=shuffle_code)
    theirs = zarr.create_array(tmp_path / "theirs.zarr", shape=shape, chunks=chunks, dtype=dtype,
                               zarr_format=2, compressors=compressor)
    theirs[...] = x
    saved = codec_registry.get("blosc")
    try:
        pf_numcodecs.register(replace_blosc=True)
        read = zarr.open_array(tmp_path / "theirs.zarr")
        assert isinstance(read.metadata.compressor, pf_numcodecs.Blosc)
        np.testing.assert_array_equal(read[...], x)
        ours = zarr.create_array(tmp_path / "ours.zarr", shape=shape, chunks=chunks,
                                 dtype=dtype, zarr_format=2,
                                 compressors=numcodecs.get_codec(compressor.get_config()))
        assert isinstance(ours.metadata.compressor, pf_numcodecs.Blosc)
        ours[...] = x
    finally:
        codec_registry["blosc"] = saved
    stock = zarr.open_array(tmp_path / "ours.zarr")
    assert type(stock.metadata.compressor) is numcodecs.Blosc
    assert stock.metadata.compressor.get_config() == compressor.get_config()
    np.testing.assert_array_equal(stock[...], x)
