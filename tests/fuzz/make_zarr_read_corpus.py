# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Writes the seed corpus of the zarr read fuzzer (patchfeed_zarr_read_fuzzer): for each layout
of tests/fuzz/zarr_read_fuzzer.cc (kept in step: same order, same parameters), the chunk or
shard file zarr-python 3.1 writes for a few arrays of shape (8, 12), prefixed by the layout's
number. Shards with some inner chunks never written are among them (empty index entries).

Usage: python3 tests/fuzz/make_zarr_read_corpus.py DIR
"""

from __future__ import annotations

import pathlib
import sys
import tempfile

import numcodecs
import numpy as np
import zarr
from zarr.codecs import BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, ShardingCodec
from zarr.codecs import TransposeCodec, ZstdCodec

SHAPE = (8, 12)


def layouts():
    v2 = dict(chunks=SHAPE, zarr_format=2, chunk_key_encoding={"name": "v2", "separator": "."})
    return [
        ("<u2", dict(v2, fill_value=0,
                     compressors=numcodecs.Blosc("lz4", 5, numcodecs.Blosc.SHUFFLE, 64))),
        (">i4", dict(v2, fill_value=3, compressors=numcodecs.Zstd(level=1))),
        ("<f4", dict(v2, fill_value=0.0, compressors=numcodecs.LZ4())),
        ("<i2", dict(v2, fill_value=0, compressors=numcodecs.GZip(level=1))),
        ("|u1", dict(v2, fill_value=0, compressors=numcodecs.Zlib(level=1))),
        ("uint16", dict(chunks=SHAPE, fill_value=0, compressors=None, serializer=ShardingCodec(
            chunk_shape=(4, 6), codecs=[BytesCodec(), BloscCodec(cname="lz4", shuffle="shuffle")],
            index_location="end"))),
        ("int16", dict(chunks=SHAPE, fill_value=7, compressors=None, serializer=ShardingCodec(
            chunk_shape=(4, 6), codecs=[BytesCodec(endian="big"), ZstdCodec(level=0)],
            index_codecs=[BytesCodec()], index_location="start"))),
        ("float32", dict(chunks=SHAPE, fill_value=0.0, filters=[TransposeCodec(order=(1, 0))],
                         serializer=BytesCodec(), compressors=[GzipCodec(level=1),
                                                               Crc32cCodec()])),
    ]


def main(out: pathlib.Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    count = 0
    for i, (dtype, kwargs) in enumerate(layouts()):
        for variant in range(3):
            with tempfile.TemporaryDirectory() as tmp:
                arr = zarr.create_array(f"{tmp}/a", shape=SHAPE, dtype=dtype, **kwargs)
                data = (rng.integers(0, 50, size=SHAPE) * (variant + 1)).astype(dtype)
                if variant == 2:
                    arr[:4, :6] = data[:4, :6]  # one inner chunk (one corner) only
                else:
                    arr[...] = data
                key = "0.0" if kwargs.get("zarr_format") == 2 else "c/0/0"
                chunk = pathlib.Path(tmp, "a", key)
                if chunk.exists():
                    (out / f"layout{i}_v{variant}").write_bytes(bytes([i]) + chunk.read_bytes())
                    count += 1
    print(f"{count} seed inputs in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1])))
