# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""The `patchfeed` command-line tool: `compress` writes chunks the reference libraries decode
exactly, `decompress` decodes chunks they wrote, and failures exit non-zero with a message on
stderr that names the offending file.
"""

from __future__ import annotations

import random
import resource
import struct
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


def _limit_address_space() -> None:
    """Runs in the child before exec: 1 GiB of address space, too little for a 2 GB buffer."""
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def test_decompress_checks_the_header_before_allocating(cli_path, tmp_path):
    """A 17-byte memcpyed chunk claiming 2 GB and a valid 32-byte zeros chunk declaring 2 GB:
    `decompress` refuses both with one line on stderr and exit code 1 in a process that could
    not allocate the claim. Nothing sized by the header is allocated before the header is
    checked (memcpyed: cbytes must be nbytes + 16), nor above --max-bytes (default 1 GiB)."""
    nbytes = 2**31 - 1 - 32
    memcpyed = bytes([2, 1, 0x02, 1]) + struct.pack("<iii", nbytes, 536866816, 17) + b"\0"
    zeros = bytes([5, 1, 0x05, 1]) + struct.pack("<iii", nbytes, 1 << 20, 32)
    zeros += bytes(15) + b"\x10"  # blosc2_flags: special value 1, zeros
    for name, chunk, says in (
        ("memcpyed.chunk", memcpyed, "memcpyed chunk: cbytes 17"),
        ("zeros.chunk", zeros, f"decompresses to {nbytes} bytes, more than the limit"),
    ):
        src, dst = tmp_path / name, tmp_path / (name + ".out")
        src.write_bytes(chunk)
        proc = subprocess.run(
            [str(cli_path), "decompress", str(src), str(dst)],
            capture_output=True,
            text=True,
            timeout=60,
            preexec_fn=_limit_address_space,
        )
        assert proc.returncode == 1, (name, proc.returncode, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and name in lines[0] and says in lines[0], proc.stderr
        assert not dst.exists()
    # The limit is the caller's: a small one refuses a small valid chunk, naming both sizes.
    src = tmp_path / "small.chunk"
    src.write_bytes(blosc2.compress2(make_data("smooth_f32", 40000), typesize=4, nthreads=1))
    proc = run(cli_path, "decompress", src, tmp_path / "small.out", "--max-bytes", 1000,
               check=False)
    assert proc.returncode == 1 and "40000 bytes, more than the limit of 1000" in proc.stderr
    run(cli_path, "decompress", src, tmp_path / "small.out", "--max-bytes", 40000)
    assert (tmp_path / "small.out").stat().st_size == 40000


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
