# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Differential tests against c-blosc 1.x (PyPI `blosc` and numcodecs, both bundle 1.21.x):
Blosc1 chunks (16-byte header, format version 2) written by c-blosc 1.x decode exactly in
patchfeed, and patchfeed's `blosc1=True` chunks decode exactly in c-blosc 1.x.

The hazards covered: the Blosc1 bitshuffle rule (blocks whose element count is not a multiple
of 8 are stored untransformed), the Blosc1 split rule, forced block sizes (rounded down to a
multiple of typesize by c-blosc 1.x), leftover blocks, sizes not a multiple of typesize, the
128-byte memcpy threshold, and every c-blosc 1.x split mode.
"""

from __future__ import annotations

import dataclasses

import blosc
import numcodecs
import patchfeed
import pytest
from codec_matrix import CODECS, parse_header
from conftest import make_data

SHUFFLES = {"none": blosc.NOSHUFFLE, "shuffle": blosc.SHUFFLE, "bitshuffle": blosc.BITSHUFFLE}
CNAME_CODE = {"blosclz": 0, "lz4": 1, "lz4hc": 2, "zlib": 4, "zstd": 5}
B1_SPLITS = ("ALWAYS", "NEVER", "AUTO", "FORWARD_COMPAT")


@dataclasses.dataclass(frozen=True)
class B1Case:
    """One Blosc1 chunk to write: codec, shuffle, typesize, size, level, forced block size
    (0: automatic), split mode (None: library default) and data kind."""

    cname: str = "lz4"
    shuffle: str = "shuffle"
    typesize: int = 4
    nbytes: int = 100003
    clevel: int = 5
    blocksize: int = 0
    split: str | None = None
    kind: str = "smooth_f32"

    @property
    def id(self) -> str:
        bs = f"-bs{self.blocksize}" if self.blocksize else ""
        sp = f"-{self.split.lower()}" if self.split else ""
        return (
            f"{self.cname}-c{self.clevel}-{self.shuffle}-ts{self.typesize}-n{self.nbytes}"
            f"{bs}{sp}-{self.kind}"
        )


def b1_cases() -> list[B1Case]:
    out = [B1Case(cname=c, shuffle=s) for c in CODECS for s in SHUFFLES]
    i = 0
    for ts in (1, 2, 3, 4, 8, 12, 16):
        # Element counts that are / are not multiples of 8, sizes that are not a multiple of
        # typesize, sizes around the 128-byte memcpy threshold, and a multi-block buffer.
        for n in (1, 100, 127, 128, 129, 1000, ts * 8001, ts * 65536 + 5, 1_000_003):
            for s in SHUFFLES:
                out.append(B1Case(cname=CODECS[i % 5], shuffle=s, typesize=ts, nbytes=n))
                i += 1
    for bs in (128, 1000, 4096, 65536, 300000):
        for ts in (1, 4, 12):
            for s in ("shuffle", "bitshuffle"):
                out.append(
                    B1Case(cname=CODECS[i % 5], shuffle=s, typesize=ts, nbytes=200003, blocksize=bs)
                )
                i += 1
    out += [B1Case(cname=c, clevel=lv) for c in CODECS for lv in range(10)]
    out += [
        B1Case(cname=c, split=sp, typesize=ts, shuffle="shuffle" if ts < 16 else "none")
        for c in CODECS
        for sp in B1_SPLITS
        for ts in (2, 16)
    ]
    ts_of = {
        "smooth_f32": 4,
        "smooth_f64": 8,
        "labels_u8": 1,
        "labels_i16": 2,
        "random": 8,
        "runs": 1,
        "zeros": 4,
    }
    out += [
        B1Case(cname=c, kind=k, typesize=ts_of[k], shuffle="bitshuffle")
        for c in CODECS
        for k in ts_of
    ]
    return out


CASES = b1_cases()


def blosc1_compress(case: B1Case, data: bytes, monkeypatch) -> bytes:
    if case.split:
        monkeypatch.setenv("BLOSC_SPLITMODE", case.split)
    blosc.set_blocksize(case.blocksize)
    try:
        return blosc.compress(data, case.typesize, case.clevel, SHUFFLES[case.shuffle], case.cname)
    finally:
        blosc.set_blocksize(0)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_blosc1_chunk_decodes_exactly(case: B1Case, monkeypatch):
    """patchfeed decodes a c-blosc 1.x chunk to exactly the original bytes, and reports its
    16-byte, version-2 header faithfully."""
    data = make_data(case.kind, case.nbytes)
    chunk = blosc1_compress(case, data, monkeypatch)
    assert blosc.decompress(chunk) == data  # the writer's own round trip
    assert patchfeed.decompress(chunk) == data
    info, raw = patchfeed.chunk_info(chunk), parse_header(chunk)
    assert (info["version"], info["header_size"]) == (2, 16)
    assert (info["flags"], info["typesize"], info["nbytes"], info["cbytes"]) == (
        raw.flags,
        raw.typesize,
        raw.nbytes,
        raw.cbytes,
    )
    assert info["memcpyed"] == raw.memcpyed
    if not raw.memcpyed:
        want_slot5 = {0: 0, 1: 1, 4: 2}[raw.flags & 0x05]
        assert info["filters"] == [0, 0, 0, 0, 0, want_slot5]
        assert info["compcode"] == CNAME_CODE[case.cname] or (
            case.cname == "lz4hc" and info["compcode"] == 1
        ), "LZ4HC is LZ4 format in Blosc1"


def pf_blosc1_kwargs(case: B1Case) -> dict:
    return {
        "typesize": case.typesize,
        "codec": case.cname,
        "clevel": case.clevel,
        "filters": [] if case.shuffle == "none" else [case.shuffle],
        "splitmode": (case.split or "forward_compat").lower(),
        "blocksize": case.blocksize,
        "blosc1": True,
    }


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_patchfeed_blosc1_chunk_decodes_in_cblosc1(case: B1Case):
    """c-blosc 1.x (python-blosc and numcodecs) decodes patchfeed's Blosc1 chunk to exactly
    the original bytes; the header is version 2, 16 bytes, with the Blosc1 flag bits."""
    data = make_data(case.kind, case.nbytes)
    chunk = patchfeed.compress(data, **pf_blosc1_kwargs(case))
    assert blosc.decompress(chunk) == data
    assert numcodecs.Blosc().decode(chunk) == data
    assert patchfeed.decompress(chunk) == data
    info = patchfeed.chunk_info(chunk)
    assert (info["version"], info["header_size"]) == (2, 16)
    assert info["cbytes"] == len(chunk) <= len(data) + 16
    assert info["typesize"] == case.typesize and info["nbytes"] == len(data)
    assert chunk[1] == 1, "c-blosc 1.x refuses versionlz != 1"
    if case.clevel == 0:
        assert info["memcpyed"]
    if not info["memcpyed"]:
        flags = info["flags"]
        assert flags & 0x05 == {"none": 0, "shuffle": 1, "bitshuffle": 4}[case.shuffle] or (
            case.shuffle == "shuffle" and case.typesize == 1 and flags & 0x05 == 0
        )
        assert flags & 0x08 == 0, "no delta bit in Blosc1 chunks"
        assert flags >> 5 == {"blosclz": 0, "lz4": 1, "lz4hc": 1, "zlib": 3, "zstd": 4}[case.cname]
    if case.blocksize and info["nbytes"] > case.blocksize and not info["memcpyed"]:
        assert info["blocksize"] <= case.blocksize


@pytest.mark.parametrize("cname", CODECS)
def test_numcodecs_written_chunk(cname):
    """numcodecs.Blosc (its own bundled c-blosc 1.x) writes chunks patchfeed decodes exactly,
    with an explicit block size as zarr v2 stores may use."""
    data = make_data("labels_i16", 500001)
    for shuffle in (numcodecs.Blosc.SHUFFLE, numcodecs.Blosc.BITSHUFFLE, numcodecs.Blosc.NOSHUFFLE):
        codec = numcodecs.Blosc(cname=cname, clevel=5, shuffle=shuffle, blocksize=20000)
        chunk = codec.encode(data)
        assert parse_header(chunk).version == 2
        assert patchfeed.decompress(chunk) == data


def test_blosc1_options_rejected():
    """Blosc1 chunks cannot express filter chains, delta, bytedelta, trunc_prec or
    dictionaries: ValueError (not CorruptDataError) instead of a chunk c-blosc 1.x misreads."""
    data = make_data("smooth_f32", 10000)
    bad = [
        {"filters": ["delta"]},
        {"filters": ["shuffle", "bitshuffle"]},
        {"filters": ["shuffle", "bytedelta"]},
        {"filters": ["trunc_prec"], "filters_meta": [10]},
        {"codec": "zstd", "use_dict": True},
    ]
    for kwargs in bad:
        kwargs = {"typesize": 4, **kwargs}
        with pytest.raises(ValueError) as err:
            patchfeed.compress(data, blosc1=True, **kwargs)
        assert not isinstance(err.value, patchfeed.CorruptDataError), kwargs
