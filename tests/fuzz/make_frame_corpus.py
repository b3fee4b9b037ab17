# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Writes the seed corpus of the frame fuzzer (patchfeed_frame_fuzzer): small contiguous
`.b2nd` frames from python-blosc2 and from patchfeed covering the features a reader meets
(codecs, filters incl. DELTA and BYTEDELTA, dictionaries, memcpyed chunks, special offsets,
repeated-value and NaN chunks, uneven chunks/blocks, ranks 0-4, a zero-size array).

Usage: python3 tests/fuzz/make_frame_corpus.py DIR
Needs python-blosc2; patchfeed when importable (PYTHONPATH=build/<dir>/python), else only the
python-blosc2 files are written.
"""

from __future__ import annotations

import pathlib
import sys

import blosc2
import numpy as np

F, C = blosc2.Filter, blosc2.Codec


def b2(path, arr, chunks, blocks, **cparams) -> None:
    cparams.setdefault("nthreads", 1)
    blosc2.asarray(arr, urlpath=str(path), mode="w", chunks=chunks, blocks=blocks, cparams=cparams)


def main(out: pathlib.Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    f4 = (np.cumsum(rng.normal(size=(9, 10, 7)), axis=2) * 8).round().astype(np.float32) / 8
    i2 = (np.arange(11 * 13).reshape(11, 13) % 7).astype(np.int16)
    b2(out / "b2-zstd-shuffle-3d.b2nd", f4, (4, 6, 5), (3, 4, 2), codec=C.ZSTD)
    b2(
        out / "b2-lz4hc-delta-2d.b2nd",
        i2,
        (5, 6),
        (2, 4),
        codec=C.LZ4HC,
        filters=[F.DELTA, F.SHUFFLE],
        filters_meta=[0, 0],
    )
    b2(
        out / "b2-blosclz-bitshuffle-1d.b2nd",
        np.arange(300, dtype=np.uint8),
        (100,),
        (32,),
        codec=C.BLOSCLZ,
        filters=[F.BITSHUFFLE],
        filters_meta=[0],
    )
    b2(
        out / "b2-zlib-bytedelta-4d.b2nd",
        f4.reshape(3, 3, 10, 7),
        (2, 2, 5, 4),
        (1, 2, 3, 2),
        codec=C.ZLIB,
        filters=[F.SHUFFLE, F.BYTEDELTA],
        filters_meta=[0, 0],
    )
    b2(
        out / "b2-zstd-dict.b2nd",
        np.tile(i2, (4, 4)),
        (22, 26),
        (11, 13),
        codec=C.ZSTD,
        use_dict=True,
    )
    b2(out / "b2-memcpyed.b2nd", f4, (9, 10, 7), (5, 5, 7), clevel=0)
    b2(out / "b2-scalar.b2nd", np.array(2.5), None, None)
    b2(out / "b2-zero-size.b2nd", np.zeros((3, 0, 4), np.int16), None, None)
    z = blosc2.zeros(
        (12, 10),
        dtype=np.int32,
        chunks=(5, 4),
        blocks=(2, 3),
        urlpath=str(out / "b2-zeros-partial.b2nd"),
        mode="w",
    )
    z[1:4, 2:7] = 9
    del z
    blosc2.full(
        (7, 6),
        3,
        dtype=np.int16,
        chunks=(4, 4),
        blocks=(2, 2),
        urlpath=str(out / "b2-full-repeat.b2nd"),
        mode="w",
    )
    blosc2.full(
        (7, 6),
        np.nan,
        dtype=np.float64,
        chunks=(4, 4),
        blocks=(2, 2),
        urlpath=str(out / "b2-full-nan.b2nd"),
        mode="w",
    )
    try:
        import patchfeed
    except ImportError:
        print("patchfeed not importable: wrote only the python-blosc2 files", file=sys.stderr)
        return 0
    with_zeros = i2.copy()
    with_zeros[:5, :6] = 0
    patchfeed.write_b2nd(
        str(out / "pf-lz4-shuffle-zero-chunk.b2nd"),
        with_zeros,
        (5, 6),
        (2, 4),
        codec="lz4",
        filters=["shuffle"],
    )
    patchfeed.write_b2nd(
        str(out / "pf-zstd-delta-3d.b2nd"),
        f4,
        (4, 6, 5),
        (3, 4, 2),
        codec="zstd",
        filters=["delta", "shuffle"],
        splitmode="always",
    )
    patchfeed.write_b2nd(
        str(out / "pf-zlib-bitshuffle-1d.b2nd"),
        np.arange(200, dtype="<u8"),
        (64,),
        (16,),
        codec="zlib",
        filters=["bitshuffle"],
    )
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(pathlib.Path(sys.argv[1])))
