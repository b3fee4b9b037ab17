# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""`patchfeed.write_b2nd` writes `.b2nd` files (contiguous) and sparse frame directories that
python-blosc2 opens with the same shape, dtype, chunks and blocks and decodes to exactly the
array written; patchfeed reads its own files back exactly; all-zero chunks become special
offsets (no stored bytes, no chunk file); `patchfeed info` reports what python-blosc2 sees.

python-blosc2 is checked two ways: `blosc2.open(p)[:]` (its slice path) for pipelines without
DELTA, and for every file the array rebuilt from its whole-chunk decompression
(`array_from_chunks`), because its slice path mis-decodes DELTA in edge chunks even for files it
wrote itself.
"""

from __future__ import annotations

import itertools
import json
import subprocess

import blosc2
import numpy as np
import patchfeed
import pytest
from frame_testlib import (
    CODECS,
    DTYPES,
    GEOMETRY,
    array_from_chunks,
    assert_same,
    blosc2_write,
    check_reads,
    make_values,
)

PF_FILTERS = {
    "none": [],
    "shuffle": ["shuffle"],
    "bitshuffle": ["bitshuffle"],
    "delta": ["delta"],
    "delta+shuffle": ["delta", "shuffle"],
    "bytedelta": ["shuffle", "bytedelta"],
}
B2_FILTER_NAMES = {
    blosc2.Filter.SHUFFLE: "shuffle",
    blosc2.Filter.BITSHUFFLE: "bitshuffle",
    blosc2.Filter.DELTA: "delta",
    blosc2.Filter.TRUNC_PREC: "trunc_prec",
    blosc2.Filter.BYTEDELTA: "bytedelta",
}


def write(tmp_path, data, chunks, blocks, sparse=False, **kw):
    """patchfeed.write_b2nd into tmp_path; returns the path."""
    path = tmp_path / ("a.b2frame" if sparse else "a.b2nd")
    patchfeed.write_b2nd(str(path), data, chunks, blocks, sparse=sparse, **kw)
    return path


def check_written(path, data, chunks, blocks, filters=(), seed=0) -> None:
    """python-blosc2 sees the written metadata and decodes `data` exactly; patchfeed re-reads
    every box exactly."""
    arr = blosc2.open(str(path))
    assert arr.shape == data.shape, (arr.shape, data.shape)
    assert arr.dtype == data.dtype, (arr.dtype, data.dtype)
    assert tuple(arr.chunks) == tuple(chunks) and tuple(arr.blocks) == tuple(blocks)
    assert arr.schunk.contiguous == path.is_file()
    assert_same(array_from_chunks(path), data, f"{path}: python-blosc2 chunk decode")
    if "delta" not in filters:
        assert_same(arr[()] if data.ndim == 0 else arr[:], data, f"{path}: blosc2 [:]")
    check_reads(path, data, seed=seed, n_random=8)


RANK_CASES = [
    (dtype, ndim, list(CODECS)[i % 5], list(PF_FILTERS)[i % 6], i % 2 == 1)
    for i, (dtype, ndim) in enumerate(itertools.product(DTYPES, GEOMETRY))
]


@pytest.mark.parametrize("dtype,ndim,codec,filters,sparse", RANK_CASES)
def test_dtype_rank_matrix(tmp_path, dtype, ndim, codec, filters, sparse):
    """Every dtype in every rank 1-5 with uneven chunks and blocks; codec, filters and
    contiguous/sparse rotate."""
    shape, chunks, blocks = GEOMETRY[ndim]
    data = make_values(dtype, shape, seed=ndim + 10 * DTYPES.index(dtype))
    path = write(tmp_path, data, chunks, blocks, sparse, codec=codec, filters=PF_FILTERS[filters])
    check_written(path, data, chunks, blocks, PF_FILTERS[filters], seed=ndim)


@pytest.mark.parametrize("codec", list(CODECS))
@pytest.mark.parametrize("filters", list(PF_FILTERS))
def test_codec_filter_matrix(tmp_path, codec, filters):
    """Every codec with every filter pipeline, clevel 0-9, split modes auto/always/never,
    contiguous and sparse."""
    i = list(CODECS).index(codec) + 5 * list(PF_FILTERS).index(filters)
    dtype = ("<f4", "<i2", "<f8", "|u1")[i % 4]
    shape, chunks, blocks = GEOMETRY[2 + i % 3]
    data = make_values(dtype, shape, seed=i)
    split = ("auto", "always", "never")[i % 3]
    path = write(
        tmp_path,
        data,
        chunks,
        blocks,
        i % 2 == 0,
        codec=codec,
        clevel=i % 10,
        filters=PF_FILTERS[filters],
        splitmode=split,
    )
    check_written(path, data, chunks, blocks, PF_FILTERS[filters], seed=i)


def random_geometry(rng):
    ndim = int(rng.integers(1, 5))
    shape = [int(rng.integers(1, {1: 500, 2: 50, 3: 18, 4: 9}[ndim])) for _ in range(ndim)]
    chunks = [int(rng.integers(1, s + 1)) for s in shape]
    blocks = [int(rng.integers(1, c + 1)) for c in chunks]
    return tuple(shape), tuple(chunks), tuple(blocks)


@pytest.mark.parametrize("seed", range(16))
def test_random_geometries(tmp_path, seed):
    """Seeded random shapes, chunks and blocks (including extents of 1)."""
    rng = np.random.default_rng(500 + seed)
    shape, chunks, blocks = random_geometry(rng)
    data = make_values(DTYPES[seed % len(DTYPES)], shape, seed)
    filters = list(PF_FILTERS.values())[seed % 6]
    path = write(
        tmp_path, data, chunks, blocks, seed % 3 == 0, codec=list(CODECS)[seed % 5], filters=filters
    )
    check_written(path, data, chunks, blocks, filters, seed=seed)


@pytest.mark.parametrize("sparse", [False, True])
def test_zero_chunks_become_special_offsets(tmp_path, sparse):
    """Chunks whose items are all zero (bit patterns, so -0.0 is not zero) are stored as
    special zero offsets: python-blosc2 reports exactly those as special, a sparse frame has
    no file for them, and the frame's cbytes counts only the stored chunks."""
    shape, chunks, blocks = (25, 14, 9), (10, 7, 9), (4, 3, 4)
    data = make_values("<f4", shape, seed=1)
    data[0:10, 0:7] = 0  # chunk (0, 0)
    data[20:25, 7:14] = 0  # the corner edge chunk (2, 1)
    data[10:20, 0:7] = -0.0  # chunk (1, 0): not all-zero bytes
    data[0:10, 7:14] = 0
    data[3, 9, 8] = 1e-30  # chunk (0, 1): one non-zero item
    path = write(tmp_path, data, chunks, blocks, sparse, codec="zstd")
    check_written(path, data, chunks, blocks, seed=2)
    arr = blosc2.open(str(path))
    specials = [c.special for c in arr.schunk.iterchunks_info()]
    zero = blosc2.SpecialValue.ZERO
    want = [
        zero,
        blosc2.SpecialValue.NOT_SPECIAL,
        blosc2.SpecialValue.NOT_SPECIAL,
        blosc2.SpecialValue.NOT_SPECIAL,
        blosc2.SpecialValue.NOT_SPECIAL,
        zero,
    ]
    assert specials == want
    if sparse:
        files = sorted(p.name for p in path.iterdir())
        assert files == [
            "00000000.chunk",
            "00000001.chunk",
            "00000002.chunk",
            "00000003.chunk",
            "chunks.b2frame",
        ]
        stored = sum((path / f).stat().st_size for f in files[:-1])
    else:
        stored = sum(len(arr.schunk.get_chunk(i)) for i in (1, 2, 3, 4))
    assert arr.schunk.cbytes == stored


def test_all_zero_array(tmp_path):
    """An all-zero array stores no chunk at all; both libraries read zeros."""
    data = np.zeros((30, 20), np.int16)
    path = write(tmp_path, data, (8, 8), (4, 3))
    check_written(path, data, (8, 8), (4, 3))
    assert blosc2.open(str(path)).schunk.cbytes == 0


def test_nnunet_sized_arrays(tmp_path):
    """A (1, 64, 80, 72) float32 image and int16 segmentation written with nnU-Net 2.8's
    codec settings (lz4hc 5, shuffle / no filter) round-trip through python-blosc2."""
    shape, chunks, blocks = (1, 64, 80, 72), (1, 48, 60, 60), (1, 32, 32, 32)
    image = make_values("<f4", shape, seed=3)
    seg = (make_values("<i2", shape, seed=4) % 3).astype(np.int16)
    for data, filters in ((image, ["shuffle"]), (seg, ["none"])):
        path = write(tmp_path, data, chunks, blocks, codec="lz4hc", clevel=5, filters=filters)
        check_written(path, data, chunks, blocks, filters)


@pytest.mark.parametrize("shape,chunks", [((3, 0, 4), (3, 1, 4)), ((0,), (5,))])
def test_zero_size(tmp_path, shape, chunks):
    """Zero-size arrays: python-blosc2 opens them with the shape written; no chunks."""
    data = np.zeros(shape, np.float32)
    path = write(tmp_path, data, chunks, chunks)
    arr = blosc2.open(str(path))
    assert arr.shape == shape and arr.schunk.nchunks == 0 and arr[:].shape == shape
    assert patchfeed.open_array(str(path)).shape == shape


def test_scalar(tmp_path):
    """A 0-d array is written as ndim 0 (shape ()), as python-blosc2 writes it."""
    data = np.array(2.5)
    path = write(tmp_path, data, (), ())
    arr = blosc2.open(str(path))
    assert arr.shape == () and arr[()] == 2.5
    assert patchfeed.open_array(str(path)).shape == ()


def test_trunc_prec_needs_a_precision(tmp_path):
    """write_b2nd takes no filters_meta, so trunc_prec would have precision 0: it is refused
    with a ValueError naming the file and the filter, and no file is left behind."""
    path = tmp_path / "t.b2nd"
    with pytest.raises(ValueError, match=r"t\.b2nd.*trunc_prec"):
        patchfeed.write_b2nd(
            str(path), np.ones((8, 8), np.float32), (4, 4), (2, 2), filters=["trunc_prec"]
        )
    assert not path.exists()


def test_bad_arguments(tmp_path):
    """Blocks larger than chunks, wrong rank, unknown codec/filter/split: ValueError."""
    data = np.ones((8, 8), np.float32)
    p = str(tmp_path / "x.b2nd")
    for kw in (
        {"chunks": (4, 4), "blocks": (5, 2)},
        {"chunks": (4,), "blocks": (2,)},
        {"chunks": (4, 0), "blocks": (2, 0)},
        {"chunks": (4, 4), "blocks": (2, 2), "codec": "snappy"},
        {"chunks": (4, 4), "blocks": (2, 2), "filters": ["frobnicate"]},
        {"chunks": (4, 4), "blocks": (2, 2), "splitmode": "sometimes"},
    ):
        with pytest.raises(ValueError):
            patchfeed.write_b2nd(p, data, **kw)


def info(cli_path, path) -> dict:
    proc = subprocess.run(
        [str(cli_path), "info", str(path)], check=False, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def blosc2_view(path) -> dict:
    """What python-blosc2 says about the file, in `patchfeed info`'s terms."""
    arr = blosc2.open(str(path))
    s = arr.schunk
    cp = s.cparams
    used = [(f, m) for f, m in zip(cp.filters, cp.filters_meta) if f != blosc2.Filter.NOFILTER]
    return {
        "sparse": not s.contiguous,
        "shape": list(arr.shape),
        "dtype": arr.dtype.str,
        "chunks": list(arr.chunks),
        "blocks": list(arr.blocks),
        "typesize": s.typesize,
        "codec": cp.codec.name.lower(),
        "clevel": cp.clevel,
        "filters": [B2_FILTER_NAMES[f] for f, _ in used],
        "filters_meta": [m for _, m in used],
        "nchunks": s.nchunks,
        "chunksize": s.chunksize,
        "blocksize": s.blocksize,
        "nbytes": s.nbytes,
        "cbytes": s.cbytes,
        "metalayers": list(s.meta.keys()),
        "vlmetalayers": list(s.vlmeta.getall()),
    }


@pytest.mark.parametrize("writer", ["patchfeed", "blosc2"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("case", range(3))
def test_info_matches_blosc2(tmp_path, cli_path, writer, sparse, case):
    """`patchfeed info` JSON equals python-blosc2's view of the same file (shape, NumPy dtype
    str, chunks, blocks, codec, clevel, filters and their meta, nchunks, sizes, metalayers)
    for files written by either library, contiguous or sparse."""
    dtype, ndim, codec, filters = [
        ("<f4", 3, "lz4hc", "shuffle"),
        ("|u1", 2, "zlib", "none"),
        ("<i8", 4, "blosclz", "delta+shuffle"),
    ][case]
    shape, chunks, blocks = GEOMETRY[ndim]
    data = make_values(dtype, shape, seed=case)
    data[(0,) * (ndim - 1)] = 0
    if writer == "patchfeed":
        path = write(
            tmp_path,
            data,
            chunks,
            blocks,
            sparse,
            codec=codec,
            clevel=case + 3,
            filters=PF_FILTERS[filters],
        )
    else:
        path = tmp_path / ("b.b2frame" if sparse else "b.b2nd")
        blosc2_write(
            path,
            data,
            chunks,
            blocks,
            codec=codec,
            clevel=case + 3,
            filters=filters,
            contiguous=not sparse,
        )
    got = info(cli_path, path)
    assert got.pop("path") == str(path)
    assert got == blosc2_view(path)


def test_sixteen_dimensions(tmp_path):
    """A 16-d array (the most b2nd allows): python-blosc2 and patchfeed both read it."""
    shape = (2,) * 15 + (3,)
    data = make_values("|u1", shape, seed=16)
    chunks, blocks = (2,) * 15 + (2,), (1,) * 15 + (2,)
    path = write(tmp_path, data, chunks, blocks)
    check_written(path, data, chunks, blocks)
