# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Error behaviour of the Python codec API: corrupt or truncated chunks raise
CorruptDataError (never a crash, never data of the wrong length), unsupported features raise
NotImplementedError naming what is unsupported, bad arguments raise a plain ValueError.
"""

from __future__ import annotations

import random
import struct

import blosc
import blosc2
import patchfeed
import pytest
from conftest import make_data


def _corpus() -> dict[str, bytes]:
    """Small valid chunks of many shapes (writers, codecs, filters, split, dict, Blosc1)."""
    f32 = make_data("smooth_f32", 6000)
    lab = make_data("labels_u8", 9000)
    b2 = blosc2.Filter
    return {
        "pf-lz4-shuffle-split": patchfeed.compress(
            f32, typesize=4, codec="lz4", blocksize=2048, splitmode="always"
        ),
        "pf-zstd-dict": patchfeed.compress(
            lab, typesize=1, codec="zstd", blocksize=1024, use_dict=True
        ),
        "pf-lz4-dict": patchfeed.compress(
            lab, typesize=1, codec="lz4", blocksize=1024, use_dict=True
        ),
        "pf-blosclz-delta-shuffle": patchfeed.compress(
            f32, typesize=4, codec="blosclz", filters=["delta", "shuffle"], blocksize=2000
        ),
        "pf-zlib-bitshuffle": patchfeed.compress(
            f32[:5999], typesize=4, codec="zlib", filters=["bitshuffle"], blocksize=1600
        ),
        "pf-lz4hc-bytedelta": patchfeed.compress(
            f32, typesize=4, codec="lz4hc", filters=["shuffle", "bytedelta"]
        ),
        "pf-blosc1-bitshuffle": patchfeed.compress(
            f32[:5997], typesize=4, codec="lz4", filters=["bitshuffle"], blosc1=True, blocksize=1024
        ),
        "pf-memcpyed": patchfeed.compress(f32[:500], typesize=4, clevel=0),
        "b2-zstd-split": blosc2.compress2(
            f32, typesize=4, codec=blosc2.Codec.ZSTD, clevel=1, blocksize=2048, nthreads=1
        ),
        "b2-blosclz-bitshuffle": blosc2.compress2(
            lab,
            typesize=2,
            codec=blosc2.Codec.BLOSCLZ,
            filters=[b2.BITSHUFFLE],
            blocksize=4096,
            nthreads=1,
        ),
        "b1-lz4-shuffle": blosc.compress(f32, 4, 5, blosc.SHUFFLE, "lz4"),
        "b1-zstd-bitshuffle": blosc.compress(f32[:4001], 4, 5, blosc.BITSHUFFLE, "zstd"),
    }


CORPUS = _corpus()
SPECIALS = {
    "zeros": struct.pack("<BBBBiii", 5, 1, 5, 4, 4000, 4000, 32) + bytes(15) + b"\x10",
    "repeat": struct.pack("<BBBBiii", 5, 1, 5, 4, 4000, 4000, 36) + bytes(15) + b"\x30" + b"abcd",
}


@pytest.mark.parametrize("name", list(CORPUS) + list(SPECIALS))
def test_every_truncation_is_corrupt(name):
    """Every proper prefix of a valid chunk (0 .. len-1 bytes) makes decompress and
    chunk_info raise CorruptDataError; the full chunk still decodes."""
    chunk = CORPUS.get(name) or SPECIALS[name]
    assert len(patchfeed.decompress(chunk)) == struct.unpack_from("<i", chunk, 4)[0]
    for k in range(len(chunk)):
        with pytest.raises(patchfeed.CorruptDataError):
            patchfeed.decompress(chunk[:k])
        with pytest.raises(patchfeed.CorruptDataError):
            patchfeed.chunk_info(chunk[:k])


def test_random_byte_flips():
    """4000 seeded corruptions (1-3 bytes XORed, half of them inside the header) of the corpus
    chunks: decompress either raises CorruptDataError/NotImplementedError or returns exactly
    the corrupted header's nbytes bytes; nothing else (and no crash)."""
    rng = random.Random(1234)
    names = sorted(CORPUS)
    outcomes = {"corrupt": 0, "unimplemented": 0, "returned": 0}
    for trial in range(4000):
        name = names[trial % len(names)]
        buf = bytearray(CORPUS[name])
        where = []
        for _ in range(rng.randint(1, 3)):
            limit = 32 if rng.random() < 0.5 else len(buf)
            pos = rng.randrange(min(limit, len(buf)))
            buf[pos] ^= rng.randint(1, 255)
            where.append(pos)
        what = f"trial {trial}: {name} corrupted at {where} -> {bytes(buf[:32]).hex()}"
        try:
            out = patchfeed.decompress(bytes(buf))
        except patchfeed.CorruptDataError:
            outcomes["corrupt"] += 1
            continue
        except NotImplementedError:
            outcomes["unimplemented"] += 1
            continue
        except Exception as e:
            raise AssertionError(f"{what}: raised {type(e).__name__}: {e}") from e
        outcomes["returned"] += 1
        assert len(out) == struct.unpack_from("<i", buf, 4)[0], what
    assert outcomes["corrupt"] > 1000, outcomes  # corruption is actually being detected


def with_bytes(chunk: bytes, **at: int) -> bytes:
    """A copy of `chunk` with single bytes replaced: with_bytes(c, b22=200) sets byte 22."""
    buf = bytearray(chunk)
    for key, value in at.items():
        buf[int(key[1:])] = value
    return bytes(buf)


BASE = patchfeed.compress(make_data("smooth_f32", 20000), typesize=4, codec="lz4")


@pytest.mark.parametrize("codec_id", [7, 33, 38, 160, 200, 255])
def test_unknown_codec_id_names_it(codec_id):
    """A Blosc2 chunk whose flags say 'codec in byte 0x16' (format 6) with a codec patchfeed
    lacks raises NotImplementedError naming the codec id."""
    chunk = with_bytes(BASE, b2=(BASE[2] & 0x1F) | (6 << 5), b22=codec_id)
    with pytest.raises(NotImplementedError, match=rf"\b{codec_id}\b"):
        patchfeed.decompress(chunk)


@pytest.mark.parametrize("fmt", [2, 5, 7])
def test_unsupported_codec_format_bits(fmt):
    """Codec format 2 (Snappy), 5 (reserved) and 7 (super-chunk codec) are unsupported."""
    for chunk in (BASE, blosc.compress(make_data("smooth_f32", 20000), 4, 5, blosc.SHUFFLE, "lz4")):
        with pytest.raises(NotImplementedError):
            patchfeed.decompress(with_bytes(chunk, b2=(chunk[2] & 0x1F) | (fmt << 5)))


@pytest.mark.parametrize("filter_id", [160, 255, 32, 33, 34, 36])
@pytest.mark.parametrize("slot", [0, 5])
def test_unsupported_filter_names_it(filter_id, slot):
    """A user (160-255) or plugin (32, 33, 34 = old BYTEDELTA, 36) filter id in any slot
    raises NotImplementedError naming the id."""
    chunk = with_bytes(BASE, **{f"b{16 + slot}": filter_id})
    with pytest.raises(NotImplementedError, match=rf"\b{filter_id}\b"):
        patchfeed.decompress(chunk)


CORRUPT_HEADERS = {
    "version-0": {"b0": 0},
    "typesize-0": {"b3": 0},
    "lazy-flag": {"b31": 0x08},
    "reserved-special-5": {"b31": 0x50},
    "nan-special-typesize-2": {"b31": 0x20, "b3": 2},
    "blocksize-0": {"b8": 0, "b9": 0, "b10": 0, "b11": 0},
    "blocksize-negative": {"b11": 0x80},
    "cbytes-below-header": {"b12": 20, "b13": 0, "b14": 0, "b15": 0},
    "cbytes-past-end": {"b14": 0x10},
    "nbytes-negative": {"b7": 0x80},
    "memcpyed-cbytes-mismatch": {"b2": BASE[2] | 0x02},
    "bstart-0": {"b32": 0, "b33": 0, "b34": 0, "b35": 0},
    "bstart-past-end": {"b32": 0xFF, "b33": 0xFF, "b34": 0, "b35": 0},
    "bstart-negative": {"b35": 0x80},
}


@pytest.mark.parametrize("name", CORRUPT_HEADERS)
def test_corrupt_header_fields(name):
    """Inconsistent header fields and block offsets raise CorruptDataError."""
    with pytest.raises(patchfeed.CorruptDataError):
        patchfeed.decompress(with_bytes(BASE, **CORRUPT_HEADERS[name]))


@pytest.mark.parametrize("name", ["vl-blocks", "flags2-reserved", "instrumented"])
def test_unsupported_header_features(name):
    """Variable-length blocks, unknown blosc2_flags2 bits and instrumented chunks raise
    NotImplementedError."""
    at = {"vl-blocks": {"b30": 1}, "flags2-reserved": {"b30": 4}, "instrumented": {"b31": 0x80}}[
        name
    ]
    with pytest.raises(NotImplementedError):
        patchfeed.decompress(with_bytes(BASE, **at))


def test_corrupt_stream_payloads():
    """Garbage inside the codec streams (every byte after the block offsets replaced) raises
    CorruptDataError for every codec."""
    data = make_data("smooth_f32", 20000)
    for codec in ("blosclz", "lz4", "lz4hc", "zlib", "zstd"):
        chunk = patchfeed.compress(data, typesize=4, codec=codec, splitmode="never")
        info = patchfeed.chunk_info(chunk)
        first = 32 + 4 * info["nblocks"]
        # Keep each csize word plausible (the first block's) but scramble the payload.
        bad = bytearray(chunk)
        rng = random.Random(codec)
        for i in range(first + 4, len(bad)):
            bad[i] = rng.randrange(256)
        with pytest.raises(patchfeed.CorruptDataError):
            patchfeed.decompress(bytes(bad))


BAD_ARGS = {
    "codec-snappy": {"codec": "snappy"},
    "codec-empty": {"codec": ""},
    "clevel-10": {"clevel": 10},
    "clevel-negative": {"clevel": -1},
    "typesize-0": {"typesize": 0},
    "filter-unknown": {"filters": ["rot13"]},
    "seven-filters": {"filters": ["shuffle"] * 7},
    "splitmode-unknown": {"splitmode": "sometimes"},
    "trunc_prec-typesize-2": {"typesize": 2, "filters": ["trunc_prec"], "filters_meta": [5]},
    "trunc_prec-too-many-bits": {"typesize": 4, "filters": ["trunc_prec"], "filters_meta": [40]},
    "dict-blosclz": {"codec": "blosclz", "use_dict": True},
    "dict-zlib": {"codec": "zlib", "use_dict": True},
    "blocksize-negative": {"blocksize": -1},
    "delta-after-trunc_prec": {
        "typesize": 4,
        "filters": ["trunc_prec", "delta"],
        "filters_meta": [10, 0],
    },
}


@pytest.mark.parametrize("name", BAD_ARGS)
def test_bad_compress_arguments(name):
    """Arguments the format cannot express raise ValueError, and not its subclass
    CorruptDataError (nothing is corrupt)."""
    with pytest.raises(ValueError) as err:
        patchfeed.compress(make_data("smooth_f32", 4000), **BAD_ARGS[name])
    assert not isinstance(err.value, patchfeed.CorruptDataError)


def test_decompress_refuses_sizes_above_max_nbytes():
    """A valid 32-byte zeros chunk may declare 2 GB: decompress checks the header, then refuses
    a size above max_nbytes (default 1 GiB) with MemoryError before allocating anything."""
    nbytes = 2**31 - 1 - 32
    zeros = bytes([5, 1, 0x05, 4]) + struct.pack("<iii", nbytes, 1 << 20, 32) + bytes(15) + b"\x10"
    with pytest.raises(MemoryError, match=f"{nbytes} bytes, more than the limit of {1 << 30}"):
        patchfeed.decompress(zeros)
    small = blosc2.compress2(make_data("smooth_f32", 4000), typesize=4, nthreads=1)
    with pytest.raises(MemoryError, match="4000 bytes, more than the limit of 3999"):
        patchfeed.decompress(small, max_nbytes=3999)
    assert len(patchfeed.decompress(small, max_nbytes=4000)) == 4000


def test_corrupt_data_error_is_value_error():
    """CorruptDataError subclasses ValueError, so callers catching ValueError catch it."""
    assert issubclass(patchfeed.CorruptDataError, ValueError)
    with pytest.raises(ValueError):
        patchfeed.decompress(b"\x05\x01\x05")
