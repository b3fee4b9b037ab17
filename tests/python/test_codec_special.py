# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Chunks without regular streams, and unusual layouts, against python-blosc2 (c-blosc2):
special-value chunks (zeros, NaN, uninitialised, repeated value) from c-blosc2 and made by
hand, memcpyed chunks (clevel 0, incompressible data, tiny buffers), the empty chunk, blocks
stored out of index order, and bytes after the chunk's end.
"""

from __future__ import annotations

import struct

import blosc2
import numpy as np
import patchfeed
import pytest
from codec_matrix import B2_CODEC, CODECS, bstarts, parse_header
from conftest import make_data


def schunk_special(special, nitems: int, typesize: int, value=None) -> bytes:
    """A special chunk as c-blosc2 writes it (SChunk.fill_special + get_chunk)."""
    s = blosc2.SChunk(chunksize=nitems * typesize, cparams={"typesize": typesize})
    if value is None:
        s.fill_special(nitems, special)
    else:
        s.fill_special(nitems, special, value=value)
    return s.get_chunk(0)


def special_header(
    nbytes: int,
    special: int,
    typesize: int = 4,
    value: bytes = b"",
    flags: int = 0x05,
    filters: bytes = bytes(6),
) -> bytes:
    """A hand-made 32-byte special-value chunk (+ value bytes for the repeated value)."""
    head = struct.pack("<BBBBiii", 5, 1, flags, typesize, nbytes, nbytes, 32 + len(value))
    return head + filters + bytes(2) + bytes(6) + bytes(1) + bytes([special << 4]) + value


@pytest.mark.parametrize("nitems", [1, 7, 1000, 262145])
@pytest.mark.parametrize("dtype", ["f4", "f8"])
def test_blosc2_nan_chunk(dtype, nitems):
    """A c-blosc2 NaN chunk decodes to quiet NaNs with c-blosc2's exact bit pattern."""
    ts = np.dtype(dtype).itemsize
    chunk = schunk_special(blosc2.SpecialValue.NAN, nitems, ts)
    assert parse_header(chunk).special == 2 and len(chunk) == 32
    want = np.full(nitems, np.nan, dtype=dtype).tobytes()
    assert patchfeed.decompress(chunk) == want
    assert blosc2.decompress2(chunk) == want  # the reference agrees on the bit pattern
    assert patchfeed.chunk_info(chunk)["special"] == 2


@pytest.mark.parametrize(
    "special", [blosc2.SpecialValue.ZERO, blosc2.SpecialValue.UNINIT], ids=["zeros", "uninit"]
)
@pytest.mark.parametrize(
    "nbytes_ts", [(4, 1), (4000, 4), (100003, 1), (8388608, 8)], ids=lambda p: f"n{p[0]}-ts{p[1]}"
)
def test_blosc2_zero_and_uninit_chunks(special, nbytes_ts):
    """c-blosc2 zero chunks and uninitialised chunks decode to zeros (uninit: for
    determinism, as the format notes recommend)."""
    nbytes, ts = nbytes_ts
    chunk = schunk_special(special, nbytes // ts, ts)
    assert len(chunk) == 32
    assert patchfeed.decompress(chunk) == bytes(nbytes)
    assert patchfeed.chunk_info(chunk)["special"] == special.value


@pytest.mark.parametrize(
    "value",
    [
        np.float32(3.5),
        np.float64(-1e300),
        np.int16(-2),
        np.uint8(7),
        np.frombuffer(bytes(range(256)) + b"xyz" * 15, dtype="V301")[0],
    ],
    ids=["f4", "f8", "i2", "u1", "V301"],
)
def test_blosc2_repeated_value_chunk(value):
    """A c-blosc2 repeated-value chunk decodes to the value repeated; the value size comes
    from cbytes - 32, also for values wider than the 255 a typesize byte can hold."""
    ts = value.dtype.itemsize
    chunk = schunk_special(blosc2.SpecialValue.VALUE, 1001, ts, value=value)
    assert len(chunk) == 32 + ts
    assert patchfeed.decompress(chunk) == value.tobytes() * 1001


def test_blosc2_compress_of_zeros_is_special():
    """c-blosc2 turns an all-zero buffer into a zeros special chunk that keeps the codec and
    filter bits; patchfeed decodes it."""
    for codec in CODECS:
        chunk = blosc2.compress2(bytes(300000), typesize=4, codec=B2_CODEC[codec], nthreads=1)
        assert parse_header(chunk).special == 1
        assert patchfeed.decompress(chunk) == bytes(300000)


HAND_MADE = {
    "zeros": (special_header(1000, 1), bytes(1000)),
    "zeros-codec-bits": (
        special_header(999, 1, flags=0x95, filters=b"\x01\x00\x00\x00\x00\x02"),
        bytes(999),
    ),
    "nan-f4": (special_header(40, 2, 4), struct.pack("<I", 0x7FC00000) * 10),
    "nan-f8": (special_header(80, 2, 8), struct.pack("<Q", 0x7FF8000000000000) * 10),
    "uninit": (special_header(4096, 4), bytes(4096)),
    "repeat-3": (special_header(30, 3, 1, value=b"abc"), b"abc" * 10),
    "repeat-typesize-mismatch": (special_header(24, 3, 4, value=b"\x01\x02"), b"\x01\x02" * 12),
}


@pytest.mark.parametrize("name", HAND_MADE)
def test_hand_made_special_chunks(name):
    """32-byte special chunks built from the format description decode as specified, and
    c-blosc2 agrees (except for uninitialised chunks, which it leaves undefined)."""
    chunk, want = HAND_MADE[name]
    assert patchfeed.decompress(chunk) == want
    if name != "uninit":
        assert blosc2.decompress2(chunk) == want


@pytest.mark.parametrize("codec", CODECS)
def test_clevel0_is_memcpyed_both_ways(codec):
    """clevel 0 stores the bytes verbatim (memcpyed, cbytes = nbytes + 32) in both libraries;
    each decodes the other's."""
    data = make_data("smooth_f32", 70001)
    theirs = blosc2.compress2(data, typesize=4, codec=B2_CODEC[codec], clevel=0, nthreads=1)
    ours = patchfeed.compress(data, typesize=4, codec=codec, clevel=0)
    assert parse_header(theirs).memcpyed
    info = patchfeed.chunk_info(ours)
    assert info["memcpyed"] and info["cbytes"] == len(data) + 32 == len(ours)
    assert ours[32:] == data
    assert patchfeed.decompress(theirs) == data
    assert blosc2.decompress2(ours) == data


@pytest.mark.parametrize("nbytes", [1, 31, 32, 100, 65536, 1000003])
@pytest.mark.parametrize("codec", CODECS)
def test_incompressible_data(codec, nbytes):
    """Random bytes never grow by more than the header (memcpyed fallback or raw streams),
    and chunks from both libraries decode exactly in the other one."""
    data = make_data("random", nbytes, seed=nbytes)
    theirs = blosc2.compress2(data, typesize=1, codec=B2_CODEC[codec], clevel=9, nthreads=1)
    ours = patchfeed.compress(data, typesize=1, codec=codec, clevel=9, filters=[])
    assert len(ours) <= nbytes + 32
    assert patchfeed.decompress(theirs) == data
    assert blosc2.decompress2(ours) == data


def test_empty_chunk_both_ways():
    """Compressing b'' gives a 32-byte chunk with nbytes 0 in both libraries; each decodes
    the other's to b''."""
    theirs = blosc2.compress2(b"", typesize=4, nthreads=1)
    ours = patchfeed.compress(b"", typesize=4, codec="zstd")
    assert patchfeed.decompress(theirs) == b""
    assert blosc2.decompress2(ours) == b""
    info = patchfeed.chunk_info(ours)
    assert info["nbytes"] == 0 and info["cbytes"] == len(ours) == 32


def test_zero_length_input_is_corrupt():
    """b'' is not a chunk: decompress raises CorruptDataError, not a crash or b''."""
    with pytest.raises(patchfeed.CorruptDataError):
        patchfeed.decompress(b"")


def reorder_blocks(chunk: bytes, order: list[int]) -> bytes:
    """Rewrites `chunk` with its blocks stored in `order` (bstarts updated)."""
    h = parse_header(chunk)
    starts = bstarts(chunk)
    ends = {s: e for s, e in zip(sorted(starts), sorted(starts)[1:] + [h.cbytes], strict=True)}
    pieces = [chunk[starts[j] : ends[starts[j]]] for j in range(len(starts))]
    data_start = min(starts)
    new_starts, body, pos = [0] * len(starts), b"", data_start
    for j in order:
        new_starts[j] = pos
        body += pieces[j]
        pos += len(pieces[j])
    head = chunk[: h.header_size] + struct.pack(f"<{len(starts)}i", *new_starts)
    return head + chunk[len(head) : data_start] + body


@pytest.mark.parametrize("codec", CODECS)
def test_blocks_out_of_index_order(codec):
    """Blocks stored in reverse order (as a multi-threaded c-blosc2 may write them) decode
    exactly; c-blosc2 accepts the rewritten chunk too, which validates the construction."""
    data = make_data("smooth_f32", 50003)
    for chunk in (
        blosc2.compress2(data, typesize=4, codec=B2_CODEC[codec], blocksize=8192, nthreads=1),
        patchfeed.compress(data, typesize=4, codec=codec, blocksize=8192),
    ):
        n = len(bstarts(chunk))
        assert n == 7
        shuffled = reorder_blocks(chunk, list(reversed(range(n))))
        assert shuffled != chunk
        assert blosc2.decompress2(shuffled) == data
        assert patchfeed.decompress(shuffled) == data


def test_bytes_after_cbytes_ignored():
    """Bytes after the chunk's cbytes (a chunk sliced out of a larger file) are ignored, as
    c-blosc2 does."""
    data = make_data("labels_i16", 30000)
    for chunk in (
        blosc2.compress2(data, typesize=2, nthreads=1),
        patchfeed.compress(data, typesize=2, codec="zstd"),
    ):
        assert blosc2.decompress2(chunk + b"\xff" * 100) == data
        assert patchfeed.decompress(chunk + b"\xff" * 100) == data


@pytest.mark.parametrize("blocksize", [16, 1000, 4096, 65536, 1 << 20])
@pytest.mark.parametrize("typesize", [1, 4, 12])
def test_explicit_blocksize(typesize, blocksize):
    """An explicit blocksize is honoured (rounded to a multiple of typesize when needed) and
    recorded truthfully: c-blosc2 decodes the chunk exactly; c-blosc2's chunks with the same
    blocksize decode exactly in patchfeed."""
    data = make_data("smooth_f32", 200003)
    ours = patchfeed.compress(data, typesize=typesize, codec="lz4", blocksize=blocksize)
    info = patchfeed.chunk_info(ours)
    assert info["blocksize"] % typesize == 0 or info["blocksize"] == len(data)
    assert info["blocksize"] <= max(blocksize, typesize)
    assert blosc2.decompress2(ours) == data
    if blocksize % typesize:
        return  # c-blosc2 >= 3.0 records the block size asked for, not the one used (notes 8.14)
    theirs = blosc2.compress2(
        data, typesize=typesize, codec=blosc2.Codec.LZ4, blocksize=blocksize, nthreads=1
    )
    recorded = min(parse_header(theirs).blocksize, len(data))
    if recorded % typesize == 0:
        assert patchfeed.decompress(theirs) == data
    else:
        # Block size clamped to an nbytes that is no multiple of typesize: c-blosc2 cannot
        # decode this chunk either. patchfeed must refuse it, not return wrong bytes.
        with pytest.raises(patchfeed.CorruptDataError):
            patchfeed.decompress(theirs)
