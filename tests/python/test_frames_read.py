# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""patchfeed reads `.b2nd` arrays that python-blosc2 wrote: every box it returns (seeded random
boxes, boxes crossing the border on either side, boxes entirely outside, empty boxes) equals
NumPy slicing of the array that was written, with the pad value outside the array, through
`open_array(...).read_box` in both I/O modes and through `patchfeed read ... --npy`.

The expected values always come from the NumPy array handed to python-blosc2, never from
python-blosc2's own slice reads (those are wrong for some DELTA and dictionary files); the only
exception is the lossy TRUNC_PREC filter, whose result is python-blosc2's full decode `arr[:]`.
The matrix is sampled (each dtype with each rank, each codec with each filter, seeded random
geometries) so that the whole file runs in a few seconds.
"""

from __future__ import annotations

import itertools

import blosc2
import numpy as np
import patchfeed
import pytest
from frame_testlib import (
    CODECS,
    DTYPES,
    FILTERS,
    GEOMETRY,
    SPLITS,
    FrameLayout,
    assert_same,
    blosc2_write,
    check_reads,
    cli_read,
    expected_box,
    make_values,
)

# Each dtype with each rank; codec, filter and split mode rotate through the cases.
RANK_CASES = [
    (
        dtype,
        ndim,
        list(CODECS)[i % 5],
        ["shuffle", "bitshuffle", "none", "delta"][i % 4],
        SPLITS[i % 3],
    )
    for i, (dtype, ndim) in enumerate(itertools.product(DTYPES, GEOMETRY))
]


@pytest.mark.parametrize("dtype,ndim,codec,filters,split", RANK_CASES)
def test_dtype_rank_matrix(tmp_path, cli_path, dtype, ndim, codec, filters, split):
    """Every dtype in every rank 1-5, shapes not divisible by chunks and chunks not divisible
    by blocks: boxes read by the API (mmap and pread) and the CLI equal NumPy's."""
    shape, chunks, blocks = GEOMETRY[ndim]
    data = make_values(dtype, shape, seed=ndim * 100 + DTYPES.index(dtype))
    path = tmp_path / "a.b2nd"
    blosc2_write(path, data, chunks, blocks, codec=codec, filters=filters, split=split)
    check_reads(path, data, seed=ndim, cli_path=cli_path, tmp_path=tmp_path)


@pytest.mark.parametrize("codec", list(CODECS))
@pytest.mark.parametrize("filters", list(FILTERS))
def test_codec_filter_matrix(tmp_path, codec, filters):
    """Every codec with every filter pipeline (3-D float32 or 2-D float64/int32, clevel 1-9,
    all split modes). TRUNC_PREC is lossy: its reference is python-blosc2's full decode."""
    i = list(CODECS).index(codec) + 5 * list(FILTERS).index(filters)
    dtype = ("<f4", "<f8", "<i4")[i % 3] if filters != "trunc_prec" else ("<f4", "<f8")[i % 2]
    shape, chunks, blocks = GEOMETRY[2 + i % 2]
    data = make_values(dtype, shape, seed=i)
    path = tmp_path / "a.b2nd"
    written = blosc2_write(
        path,
        data,
        chunks,
        blocks,
        codec=codec,
        clevel=1 + i % 9,
        filters=filters,
        split=SPLITS[i % 3],
    )
    if filters == "trunc_prec":
        data = written[:]
        assert not np.array_equal(data, make_values(dtype, shape, seed=i)), "nothing truncated"
    check_reads(path, data, seed=i, n_random=12)


def random_geometry(rng: np.random.Generator):
    """A random rank 1-5 array geometry with some block or chunk extents of 1 or equal to
    the shape."""
    ndim = int(rng.integers(1, 6))
    shape, chunks, blocks = [], [], []
    for _ in range(ndim):
        s = int(rng.integers(1, {1: 400, 2: 40, 3: 16, 4: 9, 5: 6}[ndim]))
        c = int(rng.integers(1, s + 1)) if rng.random() < 0.8 else s
        b = int(rng.integers(1, c + 1)) if rng.random() < 0.8 else c
        shape.append(s), chunks.append(c), blocks.append(b)
    return tuple(shape), tuple(chunks), tuple(blocks)


@pytest.mark.parametrize("seed", range(24))
def test_random_geometries(tmp_path, seed):
    """Seeded random shapes, chunks and blocks (extents 1, equal, uneven), random dtype,
    codec and filter: every box equals NumPy's."""
    rng = np.random.default_rng(1000 + seed)
    shape, chunks, blocks = random_geometry(rng)
    dtype = DTYPES[seed % len(DTYPES)]
    codec = list(CODECS)[seed % 5]
    filters = ["shuffle", "bitshuffle", "none", "delta+shuffle", "bytedelta"][seed % 5]
    data = make_values(dtype, shape, seed)
    path = tmp_path / "a.b2nd"
    blosc2_write(path, data, chunks, blocks, codec=codec, filters=filters, split=SPLITS[seed % 3])
    check_reads(path, data, seed=seed, n_random=20)


@pytest.mark.parametrize("codec", ["zstd", "lz4", "lz4hc"])
def test_dictionaries(tmp_path, codec):
    """Chunks with trained dictionaries (use_dict) read exactly."""
    shape, chunks, blocks = (40, 50, 30), (20, 25, 30), (10, 10, 15)
    data = make_values("<i2", shape, seed=7) % 13
    path = tmp_path / "a.b2nd"
    blosc2_write(path, data, chunks, blocks, codec=codec, use_dict=True)
    check_reads(path, data, seed=3, n_random=12)


def test_memcpyed_chunks(tmp_path, cli_path):
    """clevel 0 stores every chunk memcpyed; boxes still read exactly."""
    shape, chunks, blocks = GEOMETRY[3]
    data = make_values("<f4", shape, seed=5)
    path = tmp_path / "a.b2nd"
    blosc2_write(path, data, chunks, blocks, clevel=0)
    check_reads(path, data, seed=5, cli_path=cli_path, tmp_path=tmp_path)


@pytest.mark.parametrize("filters", ["shuffle", "none"])
def test_nnunet_28_files(tmp_path, cli_path, filters):
    """nnU-Net 2.8 writer settings: LZ4HC clevel 5, [SHUFFLE] or [NOFILTER] in slot 0, 4
    compression threads, a (1, 64, 80, 72) float32 image and its int16 segmentation with the
    current chunk rule's uneven chunks/blocks; patch-sized boxes padded with 0 and -1."""
    shape, chunks, blocks = (1, 64, 80, 72), (1, 48, 60, 60), (1, 32, 32, 32)
    image = make_values("<f4", shape, seed=28)
    z, y, x = np.meshgrid(*(np.arange(n) for n in shape[1:]), indexing="ij", sparse=True)
    seg = ((z - 30) ** 2 + (y - 41) ** 2 + (x - 33) ** 2 < 500).astype(np.int16)[None]
    seg[0, :, :3] = -1
    rng = np.random.default_rng(28)
    for name, data, pad in (("img", image, 0), ("seg", seg, -1)):
        path = tmp_path / f"case_{name}.b2nd"
        blosc2_write(
            path, data, chunks, blocks, codec="lz4hc", clevel=5, filters=filters, nthreads=4
        )
        check_reads(path, data, seed=28, cli_path=cli_path, tmp_path=tmp_path, n_random=8, pad=pad)
        arr = patchfeed.open_array(str(path))
        for _ in range(10):
            lo = [0] + [int(rng.integers(-20, n - 10)) for n in shape[1:]]
            hi = [1] + [a + p for a, p in zip(lo[1:], (32, 40, 40))]
            assert_same(
                arr.read_box(lo, hi, pad=pad), expected_box(data, lo, hi, pad), f"{name} patch {lo}"
            )


def special_offsets(arr) -> list[bool]:
    """Per chunk: whether python-blosc2 reports it as special (stored in the offsets)."""
    return [i.special != blosc2.SpecialValue.NOT_SPECIAL for i in arr.schunk.iterchunks_info()]


@pytest.mark.parametrize("contiguous", [True, False])
def test_zeros_partially_written(tmp_path, contiguous):
    """blosc2.zeros then slice assignments: untouched chunks stay special zero offsets, touched
    ones are stored; boxes over both read exactly (contiguous and sparse frames)."""
    shape, chunks, blocks = (20, 23, 9), (6, 7, 9), (4, 3, 5)
    path = tmp_path / ("z.b2nd" if contiguous else "z.b2frame")
    arr = blosc2.zeros(
        shape,
        dtype=np.int16,
        chunks=chunks,
        blocks=blocks,
        urlpath=str(path),
        mode="w",
        contiguous=contiguous,
    )
    want = np.zeros(shape, np.int16)
    for region in ((slice(1, 5), slice(2, 9), slice(0, 9)), (slice(13, 20), slice(20, 23))):
        vals = make_values("<i2", want[region].shape, seed=len(region))
        arr[region] = vals
        want[region] = vals
    special = special_offsets(arr)
    assert any(special) and not all(special), special
    del arr
    check_reads(path, want, seed=11, n_random=24)


@pytest.mark.parametrize(
    "make,marker,fill",
    [("empty", 0x81, 0.0), ("uninit", 0x84, 0.0), ("nans", 0x82, np.nan), ("zeros", 0x81, 0.0)],
)
def test_special_offsets(tmp_path, make, marker, fill):
    """blosc2.empty/uninit/nans/zeros with whole chunks written (one interior, one edge chunk):
    the other chunks stay special offsets (0x81 zeros, 0x84 uninitialized, 0x82 NaN, checked
    in the file) and read as zeros (uninitialized too) or NaN."""
    shape, chunks, blocks = (10, 12), (4, 5), (3, 2)
    path = tmp_path / "e.b2nd"
    arr = getattr(blosc2, make)(
        shape, dtype=np.float32, chunks=chunks, blocks=blocks, urlpath=str(path), mode="w"
    )
    want = np.full(shape, fill, np.float32)
    for region in ((slice(4, 8), slice(5, 10)), (slice(8, 10), slice(10, 12))):
        vals = make_values("<f4", want[region].shape, seed=3)
        arr[region] = vals
        want[region] = vals
    del arr
    offsets = FrameLayout(path.read_bytes()).offsets
    special = [(o & (1 << 64) - 1) >> 56 for o in offsets if o < 0]
    assert special == [marker] * 7, [hex(o & (1 << 64) - 1) for o in offsets]
    check_reads(path, want, seed=12, n_random=24)


@pytest.mark.parametrize("dtype,value", [("<i4", 7), ("<f4", np.nan), ("<f8", 2.5), ("|u1", 0)])
def test_full(tmp_path, dtype, value):
    """blosc2.full: repeated-value chunks (7, 2.5), NaN chunks and all-zero offsets read as
    the fill value, bit for bit."""
    shape, chunks, blocks = (11, 13, 5), (4, 6, 5), (3, 4, 2)
    path = tmp_path / "f.b2nd"
    blosc2.full(
        shape, value, dtype=dtype, chunks=chunks, blocks=blocks, urlpath=str(path), mode="w"
    )
    check_reads(path, np.full(shape, value, dtype=dtype), seed=13, n_random=12)


def test_sparse_frame(tmp_path, cli_path):
    """A sparse frame (directory, contiguous=False) reads like the contiguous one."""
    shape, chunks, blocks = GEOMETRY[4]
    data = make_values("<f8", shape, seed=4)
    path = tmp_path / "s.b2frame"
    blosc2_write(path, data, chunks, blocks, codec="lz4", filters="bitshuffle", contiguous=False)
    assert (path / "chunks.b2frame").is_file() and (path / "00000000.chunk").is_file()
    check_reads(path, data, seed=4, cli_path=cli_path, tmp_path=tmp_path)


@pytest.mark.parametrize("shape", [(3, 0, 4), (0,), (0, 5)])
def test_zero_size(tmp_path, cli_path, shape):
    """Arrays with a zero extent: no chunks; every box is all padding."""
    path = tmp_path / "e.b2nd"
    data = np.zeros(shape, np.int16)
    blosc2.asarray(data, urlpath=str(path), mode="w")
    check_reads(path, data, seed=0, cli_path=cli_path, tmp_path=tmp_path, n_random=4)
    arr = patchfeed.open_array(str(path))
    assert arr.read_box([-1] * len(shape), [2] * len(shape), pad=9).tolist() == (
        np.full([3] * len(shape), 9, np.int16).tolist()
    )


@pytest.mark.parametrize("value", [np.float64(3.5), np.int16(-7), np.bool_(True)])
def test_scalar(tmp_path, cli_path, value):
    """ndim 0: one chunk with one item; the empty box () reads it."""
    path = tmp_path / "s.b2nd"
    data = np.array(value)
    blosc2.asarray(data, urlpath=str(path), mode="w")
    arr = patchfeed.open_array(str(path))
    assert arr.shape == () and arr.dtype == data.dtype
    assert_same(arr.read_box([], []), data, "scalar")
    assert_same(cli_read(cli_path, path, [], [], 0, "mmap", tmp_path / "o.npy"), data, "CLI")


def test_getitem_matches_numpy(tmp_path):
    """NdArray[...] basic slicing (ints, negative ints, open slices) equals NumPy's."""
    shape, chunks, blocks = GEOMETRY[3]
    data = make_values("<i4", shape, seed=9)
    path = tmp_path / "a.b2nd"
    blosc2_write(path, data, chunks, blocks)
    arr = patchfeed.open_array(str(path))
    for key in (np.s_[:], np.s_[3], np.s_[-1, 2:7], np.s_[1:4, :, -3:], np.s_[:, 5, 2:2],
                np.s_[...], np.s_[..., 2], np.s_[1, ...], np.s_[1, ..., 2:5], np.s_[np.int64(2)],
                np.s_[2, 3, 4, ...]):
        assert_same(arr[key], data[key], f"key {key}")
    # NumPy's errors for what NumPy refuses; a TypeError for what only NumPy takes.
    for key, error in ((np.s_[..., ...], IndexError), (np.s_[len(data)], IndexError),
                       (np.s_[-len(data) - 1], IndexError), (np.s_[0, 0, 0, 0], IndexError),
                       (np.s_[1.5], IndexError)):
        with pytest.raises(error):
            data[key]
        with pytest.raises((error, TypeError)):
            arr[key]
    for key in (np.s_[None], np.s_[[1, 2]], np.s_[1.5]):
        with pytest.raises(TypeError, match="integers, slices and '...'"):
            arr[key]


def test_structured_and_string_dtypes(tmp_path):
    """python-blosc2 stores a structured dtype as str(dtype) (the list of fields) and a
    string dtype as '<U3': open_array gives NumPy the same dtype and reads exact boxes."""
    cases = {
        "str": np.array(["ab", "cde", "", "xyz"] * 10, dtype="<U3"),
        "rec": np.array([(i, i * 0.5) for i in range(40)], dtype=[("a", "<i4"), ("b", "<f8")]),
    }
    for name, data in cases.items():
        path = tmp_path / f"{name}.b2nd"
        blosc2.asarray(data, urlpath=str(path), mode="w", chunks=(16,), blocks=(5,))
        arr = patchfeed.open_array(str(path))
        assert arr.dtype == data.dtype, (arr.dtype, data.dtype)
        for start, stop in (([3], [37]), ([-2], [3]), ([33], [45]), ([41], [44])):
            want = expected_box(data, start, stop, 0)
            assert_same(arr.read_box(start, stop, pad=0), want, f"{name} [{start}, {stop})")


@pytest.mark.parametrize("ndim", [15, 16])
def test_many_dimensions(tmp_path, ndim):
    """Up to 16 dimensions (c-blosc2's B2ND_MAX_DIM): for ndim 16 c-blosc2 writes the
    shape-array marker as 0x90 + 16 = 0xA0 and skips it when reading."""
    shape = (2,) * (ndim - 1) + (3,)
    data = make_values("<i2", shape, seed=ndim)
    path = tmp_path / "a.b2nd"
    blosc2.asarray(data, urlpath=str(path), mode="w", chunks=shape, blocks=(1,) * (ndim - 1) + (2,))
    check_reads(path, data, seed=ndim, n_random=4)
