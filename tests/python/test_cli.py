# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""The `patchfeed` command-line tool: `compress` writes chunks the reference libraries decode
exactly, `decompress` decodes chunks they wrote, and failures exit non-zero with a message on
stderr that names the offending file.
"""

from __future__ import annotations

import random
import subprocess

import blosc
import blosc2
import numcodecs
import pytest
from conftest import make_data


def run(cli, *args, check=True):
    proc = subprocess.run(
        [str(cli), *map(str, args)], check=False, capture_output=True, text=True, timeout=60
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"patchfeed {' '.join(map(str, args))} exited {proc.returncode}: {proc.stderr}"
        )
    return proc


@pytest.mark.parametrize(
    "codec,filt,typesize",
    [
        ("zstd", "shuffle", 4),
        ("lz4", "bitshuffle", 2),
        ("blosclz", "none", 1),
        ("zlib", "delta,shuffle", 8),
        ("lz4hc", "shuffle,bytedelta", 4),
    ],
)
def test_compress_decodes_in_blosc2(cli_path, tmp_path, codec, filt, typesize):
    """`patchfeed compress IN OUT --typesize T --codec C --clevel 5 --filter F` writes one
    Blosc2 chunk that blosc2.decompress2 turns back into exactly IN, with the filters in the
    header's slots from 0."""
    src, dst = tmp_path / "in.raw", tmp_path / "out.b2chunk"
    data = make_data("smooth_f64" if typesize == 8 else "smooth_f32", 300007)
    src.write_bytes(data)
    run(
        cli_path,
        "compress",
        src,
        dst,
        "--typesize",
        typesize,
        "--codec",
        codec,
        "--clevel",
        5,
        "--filter",
        filt,
    )
    chunk = dst.read_bytes()
    assert blosc2.decompress2(chunk) == data
    ids = {"none": 0, "shuffle": 1, "bitshuffle": 2, "delta": 3, "bytedelta": 35}
    want = [ids[f] for f in filt.split(",") if f != "none"]
    assert list(chunk[16 : 16 + len(want)]) == want
    assert chunk[3] == typesize


def test_compress_options(cli_path, tmp_path):
    """--split never / --blocksize / --dict are honoured: c-blosc2 decodes the result, the
    header records no split, the block size and the dictionary flag."""
    src, dst = tmp_path / "in.raw", tmp_path / "out.chunk"
    data = make_data("labels_u8", 400000)
    src.write_bytes(data)
    run(
        cli_path,
        "compress",
        src,
        dst,
        "--typesize",
        1,
        "--codec",
        "zstd",
        "--split",
        "never",
        "--blocksize",
        32768,
        "--dict",
    )
    chunk = dst.read_bytes()
    assert blosc2.decompress2(chunk) == data
    assert chunk[2] & 0x10, "never split"
    assert int.from_bytes(chunk[8:12], "little") == 32768
    assert chunk[31] & 0x01, "dictionary flag"


@pytest.mark.parametrize("filt", ["shuffle", "bitshuffle", "none"])
def test_compress_blosc1(cli_path, tmp_path, filt):
    """--blosc1 writes a 16-byte-header, version-2 chunk that c-blosc 1.x (python-blosc and
    numcodecs) decodes to exactly IN."""
    src, dst = tmp_path / "in.raw", tmp_path / "out.blosc"
    data = make_data("labels_i16", 250003)
    src.write_bytes(data)
    run(
        cli_path,
        "compress",
        src,
        dst,
        "--typesize",
        2,
        "--codec",
        "lz4",
        "--clevel",
        5,
        "--filter",
        filt,
        "--blosc1",
    )
    chunk = dst.read_bytes()
    assert chunk[0] == 2 and chunk[2] & 0x05 != 0x05
    assert blosc.decompress(chunk) == data
    assert numcodecs.Blosc().decode(chunk) == data


@pytest.mark.parametrize("writer", ["blosc2", "blosc1"])
def test_decompress_reference_chunks(cli_path, tmp_path, writer):
    """`patchfeed decompress IN OUT` of a chunk written by c-blosc2 or by c-blosc 1.x writes
    exactly the original bytes."""
    data = make_data("smooth_f32", 1_000_003)
    if writer == "blosc2":
        chunk = blosc2.compress2(
            data,
            typesize=4,
            codec=blosc2.Codec.ZSTD,
            clevel=5,
            filters=[blosc2.Filter.BITSHUFFLE],
            nthreads=1,
        )
    else:
        chunk = blosc.compress(data, 4, 5, blosc.BITSHUFFLE, "lz4")
    src, dst = tmp_path / "in.chunk", tmp_path / "out.raw"
    src.write_bytes(chunk)
    run(cli_path, "decompress", src, dst)
    assert dst.read_bytes() == data


def test_missing_input_file(cli_path, tmp_path):
    """A missing input exits non-zero, writes no output, and names the file on stderr."""
    missing, dst = tmp_path / "does-not-exist.raw", tmp_path / "out"
    for command in ("compress", "decompress"):
        proc = run(cli_path, command, missing, dst, check=False)
        assert proc.returncode != 0
        assert str(missing) in proc.stderr or missing.name in proc.stderr, proc.stderr
        assert not dst.exists()


def test_corrupt_chunk(cli_path, tmp_path):
    """Decompressing a corrupt (truncated, then scrambled) chunk exits non-zero with stderr
    naming the file; no output file is left behind."""
    chunk = blosc2.compress2(make_data("smooth_f32", 100000), typesize=4, nthreads=1)
    nblocks = -(-100000 // int.from_bytes(chunk[8:12], "little"))
    keep = 32 + 4 * nblocks + 4  # header, block offsets and the first stream's size word
    noise = random.Random(7).randbytes(len(chunk) - keep)
    for name, bad in (("truncated.chunk", chunk[:-10]), ("scrambled.chunk", chunk[:keep] + noise)):
        src, dst = tmp_path / name, tmp_path / (name + ".out")
        src.write_bytes(bad)
        proc = run(cli_path, "decompress", src, dst, check=False)
        assert proc.returncode != 0
        assert name in proc.stderr, proc.stderr
        assert not dst.exists()


def test_usage_errors(cli_path, tmp_path):
    """Unknown options, codecs and missing arguments exit with code 2 and a message."""
    src = tmp_path / "in.raw"
    src.write_bytes(b"x" * 1000)
    for args in (
        ["compress", src, tmp_path / "o", "--codec", "snappy"],
        ["compress", src, tmp_path / "o", "--frobnicate", "1"],
        ["compress", src],
        ["decompress"],
        ["no-such-command"],
    ):
        proc = run(cli_path, *args, check=False)
        assert proc.returncode == 2, (args, proc.returncode, proc.stderr)
        assert proc.stderr.strip()
