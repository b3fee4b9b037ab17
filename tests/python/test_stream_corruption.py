# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Single-byte damage inside compressed chunks: wherever the reference decoder raises,
patchfeed raises too.

Blosc writes zstd frames without a checksum, so a damaged frame is caught only by zstd's own
consistency checks, and libzstd before 1.5.6 (Debian 12 ships 1.5.4) makes fewer of them than
the 1.5.6+ that numcodecs, python-blosc and python-blosc2 bundle: it decodes some damaged
frames to the right size with wrong bytes. patchfeed then checks each frame bit for bit
(codec/blosc/internal/zstd_frame_check.cc). tests/codec/testdata/zstd/ holds one such frame.

The flips are seeded (the same every run) and bounded; each case must see the reference raise
at least once, so the comparison is never empty.
"""

from __future__ import annotations

import pathlib
import random
import subprocess

import blosc2
import numcodecs
import numpy as np
import patchfeed
import pytest
from conftest import make_data

ZSTD_DATA = pathlib.Path(__file__).resolve().parents[1] / "codec" / "testdata" / "zstd"
FLIPS_PER_CASE = 150


def _refuses(decode, chunk: bytes) -> bool:
    try:
        decode(chunk)
    except Exception:  # noqa: BLE001 - any refusal counts
        return True
    return False


def test_the_zstd_flip_chunk_is_refused():
    clean = (ZSTD_DATA / "zstd_clean_chunk.blosc").read_bytes()
    flip = (ZSTD_DATA / "zstd_flip_chunk.blosc").read_bytes()
    assert patchfeed.decompress(clean) == numcodecs.Blosc().decode(clean)
    assert _refuses(numcodecs.Blosc().decode, flip)
    with pytest.raises(patchfeed.CorruptDataError,
                       match=r"block 0: stream 0: zstd stream is corrupt: .*sequence bitstream"):
        patchfeed.decompress(flip)


def test_the_cli_refuses_the_zstd_flip_chunk(cli_path, tmp_path):
    flip = ZSTD_DATA / "zstd_flip_chunk.blosc"
    out = tmp_path / "out.raw"
    proc = subprocess.run([str(cli_path), "decompress", str(flip), str(out)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode != 0
    assert str(flip) in proc.stderr
    assert "zstd stream is corrupt" in proc.stderr
    assert not out.exists()


def _blosc1(cname: str, shuffle: int, typesize: int, kind: str) -> bytes:
    data = make_data(kind, 48 * 1024, seed=5)
    codec = numcodecs.Blosc(cname=cname, clevel=5, shuffle=shuffle, blocksize=16 * 1024)
    return codec.encode(np.frombuffer(data, dtype=f"u{typesize}" if typesize > 1 else "u1"))


def _blosc2(codec, split, typesize: int, kind: str, use_dict: bool) -> bytes:
    data = make_data(kind, 48 * 1024, seed=6)
    return blosc2.compress2(data, codec=codec, clevel=5, typesize=typesize, blocksize=16 * 1024,
                            filters=[blosc2.Filter.SHUFFLE], splitmode=split,
                            use_dict=use_dict, nthreads=1)


BLOSC1_CASES = [
    (cname, shuffle, typesize, kind)
    for cname in ("zstd", "lz4", "zlib")
    for shuffle, typesize, kind in ((numcodecs.Blosc.SHUFFLE, 2, "labels_i16"),
                                    (numcodecs.Blosc.BITSHUFFLE, 4, "smooth_f32"),
                                    (numcodecs.Blosc.NOSHUFFLE, 1, "labels_u8"))
]

BLOSC2_CASES = [
    (codec, split, use_dict)
    for codec in (blosc2.Codec.ZSTD, blosc2.Codec.LZ4, blosc2.Codec.ZLIB)
    for split, use_dict in ((blosc2.SplitMode.ALWAYS_SPLIT, False),
                            (blosc2.SplitMode.NEVER_SPLIT, False),
                            (blosc2.SplitMode.NEVER_SPLIT, True))
    if not use_dict or codec != blosc2.Codec.ZLIB  # Blosc2 has no zlib dictionaries
]


def _compare(chunk: bytes, reference, seed: str, header: int) -> tuple[int, list[str]]:
    """Flips single bytes after the header; returns how often the reference raised and the
    flips it refused that patchfeed decoded."""
    rng = random.Random(seed)
    refused, missed = 0, []
    for _ in range(FLIPS_PER_CASE):
        pos = rng.randrange(header, len(chunk))
        mask = rng.randrange(1, 256)
        bad = bytearray(chunk)
        bad[pos] ^= mask
        if _refuses(reference, bytes(bad)):
            refused += 1
            if not _refuses(patchfeed.decompress, bytes(bad)):
                missed.append(f"byte {pos} ^ {mask:#x}")
    return refused, missed


@pytest.mark.parametrize("cname,shuffle,typesize,kind", BLOSC1_CASES)
def test_blosc1_flips_numcodecs_refuses_are_refused(cname, shuffle, typesize, kind):
    chunk = _blosc1(cname, shuffle, typesize, kind)
    assert patchfeed.decompress(chunk) == numcodecs.Blosc().decode(chunk)
    refused, missed = _compare(chunk, numcodecs.Blosc().decode,
                               f"{cname}-{shuffle}-{typesize}", header=16)
    assert refused > 0, "no flip was refused by numcodecs: the comparison tested nothing"
    assert not missed, f"numcodecs refused, patchfeed decoded: {missed}"


@pytest.mark.parametrize("codec,split,use_dict", BLOSC2_CASES)
def test_blosc2_flips_python_blosc2_refuses_are_refused(codec, split, use_dict):
    chunk = _blosc2(codec, split, 4, "smooth_f32", use_dict)
    assert patchfeed.decompress(chunk) == blosc2.decompress2(chunk)
    refused, missed = _compare(chunk, blosc2.decompress2, f"{codec}-{split}-{use_dict}",
                               header=32)
    assert refused > 0, "no flip was refused by python-blosc2: the comparison tested nothing"
    assert not missed, f"python-blosc2 refused, patchfeed decoded: {missed}"
