# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Broken `.b2nd` files never crash patchfeed and never give an unclear error: opening or
reading a truncated, empty, wrong-magic, inconsistent or corrupt frame raises
patchfeed.CorruptDataError (NotImplementedError only for bytes that happen to name an
unsupported feature), a missing file or sparse chunk file raises FileNotFoundError; the message
names the file and, for a chunk problem, the chunk index. `patchfeed read`/`info` exit non-zero
with such a message on stderr and write no output.

The frames are written by patchfeed (a known layout: `FrameLayout` finds the chunks, the offsets
chunk and the trailer) and by python-blosc2. Corruption stays inside bytes a reader has to
trust; flips that keep a frame valid (most bytes of compressed streams) may decode to other
values, which no format without checksums can detect.
"""

from __future__ import annotations

import os
import pathlib
import random
import shutil
import struct
import subprocess
import sys

import blosc2
import numpy as np
import patchfeed
import pytest
from frame_testlib import FrameLayout, blosc2_write, make_values

SHAPE, CHUNKS, BLOCKS = (13, 11, 9), (6, 5, 4), (4, 3, 3)
WHOLE = ([0, 0, 0], list(SHAPE))
MARGIN = ([-1, -1, -1], [s + 1 for s in SHAPE])
IO_MODES = ("mmap", "pread")
ACCEPTED = (patchfeed.CorruptDataError, NotImplementedError)


@pytest.fixture(scope="module")
def frames(tmp_path_factory):
    """name -> bytes of valid contiguous frames: 'pf' (patchfeed, lz4+shuffle, one all-zero
    chunk as a special offset) and 'b2' (python-blosc2, zstd+delta+shuffle)."""
    d = tmp_path_factory.mktemp("frames")
    data = np.round(make_values("<f4", SHAPE, seed=1)) / 4  # compressible: no memcpyed chunks
    data[6:12, 5:10, 4:8] = 0
    patchfeed.write_b2nd(str(d / "pf.b2nd"), data, CHUNKS, BLOCKS, codec="lz4")
    blosc2_write(d / "b2.b2nd", data, CHUNKS, BLOCKS, filters="delta+shuffle")
    return {name: (d / f"{name}.b2nd").read_bytes() for name in ("pf", "b2")}


def open_and_read(path, io="mmap", box=MARGIN):
    """Opens `path` and reads `box`, as a data loader would."""
    return patchfeed.open_array(str(path), io=io).read_box(*box)


def expect_error(path, exc=patchfeed.CorruptDataError, chunk=None, box=MARGIN, what=""):
    """Opening + reading `path` raises `exc` in both I/O modes, naming the file (and chunk)."""
    for io in IO_MODES:
        with pytest.raises(exc) as info:
            open_and_read(path, io, box)
        msg = str(info.value)
        assert str(path) in msg, f"{what} ({io}): message does not name the file: {msg}"
        if chunk is not None:
            assert f"chunk {chunk}" in msg, f"{what} ({io}): message does not name chunk: {msg}"


def run_cli(cli_path, *args):
    return subprocess.run(
        [str(cli_path), *map(str, args)], check=False, capture_output=True, text=True, timeout=60
    )


def expect_cli_error(cli_path, path, tmp_path, chunk=None):
    """`patchfeed read PATH --out OUT` exits 1, stderr names the file (and chunk), no OUT."""
    out = tmp_path / "cli.out"
    proc = run_cli(cli_path, "read", path, "--out", out, "--box", "-1:14,-1:12,-1:10")
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert str(path) in proc.stderr, proc.stderr
    if chunk is not None:
        assert f"chunk {chunk}" in proc.stderr, proc.stderr
    assert not out.exists()


@pytest.mark.parametrize("name", ["pf", "b2"])
def test_every_truncation(frames, tmp_path, cli_path, name):
    """Prefixes of a valid frame (every length in the header, the last 64, 150 seeded
    others) raise CorruptDataError naming the file, also when frame_len is patched to the new
    length so that the header agrees with the file size."""
    frame = frames[name]
    lengths = set(range(260)) | set(range(len(frame) - 64, len(frame)))
    lengths |= set(random.Random(name).sample(range(len(frame)), 150))
    path = tmp_path / "t.b2nd"
    for n in sorted(lengths):
        path.write_bytes(frame[:n])
        expect_error(path, what=f"{name} truncated to {n} bytes")
        if n >= 24:
            patched = bytearray(frame[:n])
            struct.pack_into(">Q", patched, 16, n)
            path.write_bytes(bytes(patched))
            expect_error(path, what=f"{name} truncated to {n} bytes, frame_len patched")
    path.write_bytes(frame[: len(frame) // 2])
    expect_cli_error(cli_path, path, tmp_path)
    proc = run_cli(cli_path, "info", path)
    assert proc.returncode == 1 and str(path) in proc.stderr, proc.stderr


def test_empty_file(tmp_path, cli_path):
    """An empty file is a corrupt frame, not an I/O error."""
    path = tmp_path / "empty.b2nd"
    path.write_bytes(b"")
    expect_error(path)
    expect_cli_error(cli_path, path, tmp_path)


def test_trailing_bytes_are_ignored(frames, tmp_path):
    """Bytes after frame_len are not part of the frame (reference 8.19): reads succeed."""
    path = tmp_path / "t.b2nd"
    path.write_bytes(frames["pf"] + b"\x00garbage" * 20)
    assert open_and_read(path, box=WHOLE).shape == SHAPE


@pytest.mark.parametrize("pos", range(10))
def test_wrong_magic(frames, tmp_path, cli_path, pos):
    """Any changed byte of the msgpack prefix and 'b2frame\\0' magic: not a frame."""
    bad = bytearray(frames["b2"])
    bad[pos] ^= 0x20
    path = tmp_path / "m.b2nd"
    path.write_bytes(bytes(bad))
    expect_error(path)
    if pos == 2:
        expect_cli_error(cli_path, path, tmp_path)


def patched(frame: bytes, fmt: str, offset: int, value) -> bytes:
    out = bytearray(frame)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


HEADER_CASES = {
    # name: (struct format, offset, value, expected exception)
    "header_len-below-87": (">i", 11, 40, patchfeed.CorruptDataError),
    "header_len-past-frame": (">i", 11, 1 << 30, patchfeed.CorruptDataError),
    "frame_len-past-file": (">Q", 16, 1 << 40, patchfeed.CorruptDataError),
    "frame_len-short": (">Q", 16, 300, patchfeed.CorruptDataError),
    "nbytes-negative": (">q", 30, -1152, patchfeed.CorruptDataError),
    "nbytes-extra-chunk": (">q", 30, 28 * 1152, patchfeed.CorruptDataError),
    "cbytes-negative": (">q", 39, -5, patchfeed.CorruptDataError),
    "cbytes-past-trailer": (">q", 39, 1 << 20, patchfeed.CorruptDataError),
    "typesize-0": (">i", 48, 0, patchfeed.CorruptDataError),
    "chunksize-other": (">i", 58, 1000, patchfeed.CorruptDataError),
    "chunksize-0": (">i", 58, 0, NotImplementedError),
    "version-7": ("B", 25, 0x17, NotImplementedError),
    "offsets-32-bit": ("B", 25, 0x02, NotImplementedError),
    "int32-marker": ("B", 47, 0xD3, patchfeed.CorruptDataError),
}


@pytest.mark.parametrize("name", HEADER_CASES)
def test_inconsistent_header(frames, tmp_path, name):
    """Inconsistent fixed-header fields raise CorruptDataError (NotImplementedError for
    valid-looking features patchfeed does not implement) naming the file."""
    fmt, offset, value, exc = HEADER_CASES[name]
    path = tmp_path / "h.b2nd"
    path.write_bytes(patched(frames["pf"], fmt, offset, value))
    expect_error(path, exc, what=name)


def test_trailer_damage(frames, tmp_path):
    """A missing 0xCE marker, an impossible trailer length or a broken trailer map."""
    frame = frames["pf"]
    n = len(frame)
    path = tmp_path / "tr.b2nd"
    for what, bad in (
        ("no 0xCE", patched(frame, "B", n - 23, 0xCC)),
        ("trailer_len 3", patched(frame, ">I", n - 22, 3)),
        ("trailer_len huge", patched(frame, ">I", n - 22, n)),
        ("no 0x94", patched(frame, "B", n - 35, 0x95)),
        ("map marker", patched(frame, "B", n - 32, 0x00)),
    ):
        path.write_bytes(bad)
        expect_error(path, what=what)


def find_meta(frame: bytes) -> int:
    """Position of the b2nd metalayer content (after 0xC6 + u32 length). For rank 3 and a
    3-byte dtype: shape values at +5/+14/+23, chunk values at +33/+38/+43, block values at
    +49/+54/+59, dtype string at +69 (reference section 6.1)."""
    m = frame.index(b"\xc6", 87) + 5
    assert frame[m : m + 5] == b"\x97\x00\x03\x93\xd3" and frame[m + 69 : m + 72] == b"<f4"
    return m


def test_inconsistent_b2nd_metalayer(frames, tmp_path):
    """A b2nd metalayer that disagrees with the frame (shape, chunk or block shape, dtype
    size, rank) or is malformed: CorruptDataError naming the file."""
    frame = frames["pf"]
    m = find_meta(frame)
    path = tmp_path / "meta.b2nd"
    cases = {
        "shape-more-chunks": patched(frame, ">q", m + 5, 40),
        "shape-negative": patched(frame, ">q", m + 5, -13),
        "chunkshape-0": patched(frame, ">i", m + 33, 0),
        "chunkshape-other": patched(frame, ">i", m + 43, 2),
        "blockshape-above-chunk": patched(frame, ">i", m + 59, 9),
        "blockshape-0": patched(frame, ">i", m + 49, 0),
        "dtype-size": frame[: m + 69] + b"<f8" + frame[m + 72 :],
        "ndim-17": patched(frame, "B", m + 2, 17),
        "ndim-2": patched(frame, "B", m + 2, 2),
        "shape-array-marker": patched(frame, "B", m + 3, 0x92),
        "int64-marker": patched(frame, "B", m + 13, 0xD2),
        "str32-marker": patched(frame, "B", m + 64, 0xD9),
        "dtype-length": patched(frame, ">i", m + 65, 1000),
    }
    for what, bad in cases.items():
        path.write_bytes(bad)
        expect_error(path, what=what)


@pytest.mark.parametrize("dtype", [b"\xff\xfe4", b"<q4", b"\x13f4"])
def test_garbage_dtype_string(frames, tmp_path, dtype):
    """A dtype string of the right size that is not UTF-8 or not a NumPy dtype raises
    CorruptDataError/NotImplementedError naming the file, not UnicodeDecodeError/TypeError."""
    frame = frames["pf"]
    m = find_meta(frame)
    path = tmp_path / "dt.b2nd"
    path.write_bytes(frame[: m + 69] + dtype + frame[m + 72 :])
    expect_error(path, ACCEPTED, what=repr(dtype))


def test_no_b2nd_metalayer(tmp_path, cli_path):
    """A valid frame that is not an N-d array (a plain SChunk) raises ValueError naming the
    file; `patchfeed info` still describes it."""
    path = tmp_path / "schunk.b2frame"
    schunk = blosc2.SChunk(chunksize=4000, urlpath=str(path), mode="w", contiguous=True)
    schunk.append_data(np.arange(1000, dtype=np.int32))
    del schunk
    with pytest.raises(ValueError, match="b2nd") as info:
        patchfeed.open_array(str(path))
    assert str(path) in str(info.value)
    proc = run_cli(cli_path, "info", path)
    assert proc.returncode == 0 and '"nchunks": 1' in proc.stdout, proc.stderr


OFFSET_CASES = {
    # name: function of (offsets, cbytes) -> new offsets
    "past-cbytes": lambda o, cb: o[:3] + [cb + 100] + o[4:],
    "at-cbytes-end": lambda o, cb: o[:3] + [cb - 16] + o[4:],
    "misaligned": lambda o, cb: o[:3] + [o[3] + 1] + o[4:],
    "invalid-special": lambda o, cb: o[:3] + [-(0x7D << 56)] + o[4:],
    "negative": lambda o, cb: o[:3] + [-5] + o[4:],
    "too-few": lambda o, cb: o[:-1],
    "too-many": lambda o, cb: [*o, 0],
}


@pytest.mark.parametrize("name", OFFSET_CASES)
def test_inconsistent_offsets(frames, tmp_path, cli_path, name):
    """An offsets chunk whose entry 3 points outside the chunk data, into the middle of a
    chunk, or is an invalid special value, or that has the wrong number of entries: the error
    names the file and the chunk (or the offsets chunk)."""
    layout = FrameLayout(frames["pf"])
    offsets = OFFSET_CASES[name](list(layout.offsets), layout.cbytes)
    path = tmp_path / "o.b2nd"
    path.write_bytes(layout.with_offsets(offsets))
    per_chunk = name not in ("too-few", "too-many")
    expect_error(path, chunk=3 if per_chunk else None, what=name)
    if not per_chunk:
        with pytest.raises(patchfeed.CorruptDataError, match="offsets chunk"):
            open_and_read(path)
    expect_cli_error(cli_path, path, tmp_path, chunk=3 if per_chunk else None)


def test_offsets_chunk_claiming_a_huge_size(frames, tmp_path):
    """An offsets chunk that claims 2 GB (a 40-byte repeated-value chunk) in a 12 KB file
    is rejected without allocating what it claims: opening it in a fresh interpreter raises
    CorruptDataError and grows the peak RSS by less than 64 MB."""
    layout = FrameLayout(frames["pf"])
    n = 2_000_000_000
    special = struct.pack("<BBBBiii", 5, 1, 5, 8, n, n, 40) + bytes(15) + b"\x30" + bytes(8)
    head = bytearray(layout.frame[: layout.offsets_start])
    struct.pack_into(">Q", head, 16, len(head) + len(special) + layout.trailer_len)
    path = tmp_path / "huge-offsets.b2nd"
    path.write_bytes(bytes(head) + special + layout.frame[layout.trailer_start :])
    code = (
        "import resource, sys, patchfeed\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "try:\n"
        "    patchfeed.open_array(sys.argv[1])\n"
        "    print('opened')\n"
        "except patchfeed.CorruptDataError as e:\n"
        "    print('CorruptDataError', e)\n"
        "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(pathlib.Path(patchfeed.__file__).parents[1])}
    proc = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    result, grown_mb = proc.stdout.rsplit("\n", 2)[:2]
    assert result.startswith("CorruptDataError") and str(path) in result, result
    assert int(grown_mb) < 64, (
        f"opening allocated {grown_mb} MB for a {path.stat().st_size}-byte file"
    )


def test_rewritten_offsets_still_read(frames, tmp_path):
    """Control for the offset tests: re-encoding the unchanged offsets keeps the file valid
    and its content identical."""
    layout = FrameLayout(frames["pf"])
    a, b = tmp_path / "a.b2nd", tmp_path / "b.b2nd"
    a.write_bytes(frames["pf"])
    b.write_bytes(layout.with_offsets(layout.offsets))
    assert b.read_bytes() != a.read_bytes()
    assert open_and_read(b).tobytes() == open_and_read(a).tobytes()


def stored_chunk(layout: FrameLayout, k: int) -> tuple[int, int, dict]:
    """(position, cbytes, chunk_info) of stored chunk k."""
    pos = layout.chunk_pos(k)
    cbytes = struct.unpack_from("<i", layout.frame, pos + 12)[0]
    return pos, cbytes, patchfeed.chunk_info(layout.frame[pos : pos + cbytes])


def chunk_field_cases(frame: bytes) -> dict[str, bytes]:
    """Structural damage to chunk 0 (every block of which a whole-array read needs)."""
    layout = FrameLayout(frame)
    pos, cbytes, info = stored_chunk(layout, 0)
    assert not info["memcpyed"] and info["nblocks"] == 8, info  # has bstarts and streams
    streams = pos + 32 + 4 * info["nblocks"]
    scrambled = bytearray(frame)
    rng = random.Random(3)
    for i in range(streams + 4, pos + cbytes):
        scrambled[i] = rng.randrange(256)
    return {
        "cbytes-past-section": patched(frame, "<i", pos + 12, 1 << 30),
        "cbytes-below-bstarts": patched(frame, "<i", pos + 12, 40),
        "nbytes": patched(frame, "<i", pos + 4, info["nbytes"] - 4),
        "blocksize": patched(frame, "<i", pos + 8, info["blocksize"] * 2),
        "version-0": patched(frame, "B", pos, 0),
        "bstart-past-end": patched(frame, "<i", pos + 32, cbytes + 1000),
        "bstart-in-header": patched(frame, "<i", pos + 32, 8),
        "csize-huge": patched(frame, "<i", streams, 1 << 20),
        "csize-negative": patched(frame, "<i", streams, -(1 << 20)),
        "scrambled-streams": bytes(scrambled),
    }


@pytest.mark.parametrize("name", ["pf", "b2"])
def test_corrupt_chunk(frames, tmp_path, cli_path, name):
    """Damaged fields or streams of chunk 0 (python-blosc2's zstd+DELTA chunk, patchfeed's lz4
    one): CorruptDataError naming the file and 'chunk 0'; a box that does not touch chunk 0
    still reads."""
    path = tmp_path / "c.b2nd"
    far = ([7, 6, 5], [13, 11, 9])
    for what, bad in chunk_field_cases(frames[name]).items():
        path.write_bytes(bad)
        expect_error(path, chunk=0, what=what)
        assert open_and_read(path, box=far).shape == (6, 5, 4)
    expect_cli_error(cli_path, path, tmp_path, chunk=0)


def flip_bytes(frame: bytes, lo: int, hi: int, rng: random.Random) -> tuple[bytes, list]:
    bad = bytearray(frame)
    where = [rng.randrange(lo, hi) for _ in range(rng.randint(1, 3))]
    for p in where:
        bad[p] ^= rng.randint(1, 255)
    return bytes(bad), where


def test_flips_inside_chunk_streams(frames, tmp_path):
    """400 seeded flips of 1-3 bytes inside one stored chunk's streams: the whole-array read
    either succeeds (the flip kept the streams valid) or raises CorruptDataError naming the
    file and that chunk. Detection must actually happen in a fair share of the trials."""
    rng = random.Random(42)
    path = tmp_path / "f.b2nd"
    detected, failures = 0, []
    for trial in range(400):
        name = ("pf", "b2")[trial % 2]
        layout = FrameLayout(frames[name])
        k = rng.choice([i for i, o in enumerate(layout.offsets) if o >= 0])
        pos, cbytes, info = stored_chunk(layout, k)
        if info["memcpyed"] or info["special"]:
            continue
        bad, where = flip_bytes(frames[name], pos + 32 + 4 * info["nblocks"], pos + cbytes, rng)
        path.write_bytes(bad)
        try:
            open_and_read(path, IO_MODES[trial % 2])
        except patchfeed.CorruptDataError as e:
            detected += 1
            if str(path) not in str(e) or f"chunk {k}:" not in str(e):
                failures.append(f"{name} chunk {k} flips {where}: unclear message {e}")
        except Exception as e:  # noqa: BLE001 - any other exception is what we look for
            failures.append(f"{name} chunk {k} flips {where}: {type(e).__name__}: {e}")
    assert not failures, "\n".join(failures[:20])
    assert detected > 100, detected


def test_random_flips_anywhere(frames, tmp_path):
    """600 seeded flips of 1-3 bytes anywhere in a frame (a third each in the header, the
    chunk data and the offsets chunk + trailer), both I/O modes: the read succeeds or raises
    CorruptDataError / NotImplementedError / ValueError (a frame left without its b2nd
    metalayer), always naming the file; never another exception type, never a crash."""
    rng = random.Random(7)
    path = tmp_path / "r.b2nd"
    outcomes, failures = {}, []
    for trial in range(600):
        name = ("pf", "b2")[trial % 2]
        layout = FrameLayout(frames[name])
        region = [
            (0, layout.header_len),
            (layout.header_len, layout.offsets_start),
            (layout.offsets_start, layout.frame_len),
        ][trial % 3]
        bad, where = flip_bytes(frames[name], *region, rng)
        path.write_bytes(bad)
        try:
            open_and_read(path, IO_MODES[(trial // 3) % 2])
            kind = "ok"
        except (patchfeed.CorruptDataError, NotImplementedError, ValueError) as e:
            kind = type(e).__name__
            if str(path) not in str(e):
                failures.append(f"{name} flips at {where}: message without the file: {e}")
        except Exception as e:  # noqa: BLE001 - any other exception is what we look for
            kind = type(e).__name__
            failures.append(f"{name} flips at {where} ({bad[min(where)]:#x}...): {kind}: {e}")
        outcomes[kind] = outcomes.get(kind, 0) + 1
    assert not failures, "\n".join(failures[:20])
    assert outcomes.get("CorruptDataError", 0) > 200, outcomes


@pytest.fixture
def sparse_dir(tmp_path):
    """A sparse frame written by patchfeed (chunk files 00000000..0000001A)."""
    path = tmp_path / "s.b2frame"
    data = make_values("<i2", SHAPE, seed=2)
    patchfeed.write_b2nd(str(path), data, CHUNKS, BLOCKS, codec="zstd", sparse=True)
    return path


def test_sparse_missing_chunk_file(sparse_dir, tmp_path, cli_path):
    """A missing chunk file: FileNotFoundError naming that file and the chunk, only for boxes
    that touch it; the CLI exits 1 naming both."""
    (sparse_dir / "00000003.chunk").unlink()
    expect_error(sparse_dir, FileNotFoundError, chunk=3)
    with pytest.raises(FileNotFoundError, match="00000003.chunk"):
        open_and_read(sparse_dir)
    assert open_and_read(sparse_dir, box=([0, 0, 0], [6, 5, 9])).shape == (6, 5, 9)
    expect_cli_error(cli_path, sparse_dir, tmp_path, chunk=3)
    assert "00000003.chunk" in run_cli(cli_path, "read", sparse_dir, "--out", "-").stderr


@pytest.mark.parametrize("damage", ["truncated", "empty", "garbage"])
def test_sparse_corrupt_chunk_file(sparse_dir, damage):
    """A truncated, empty or garbage chunk file: CorruptDataError naming chunk 4."""
    f = sparse_dir / "00000004.chunk"
    chunk = f.read_bytes()
    f.write_bytes(
        {
            "truncated": chunk[: len(chunk) // 2],
            "empty": b"",
            "garbage": chunk[:16] + bytes(range(200)),
        }[damage]
    )
    expect_error(sparse_dir, chunk=4)


def test_sparse_index_problems(sparse_dir, frames, tmp_path):
    """chunks.b2frame missing (FileNotFoundError), a contiguous frame in its place, or a
    sparse index opened outside its directory (CorruptDataError)."""
    index = sparse_dir / "chunks.b2frame"
    saved = index.read_bytes()
    single = tmp_path / "index-alone.b2nd"
    single.write_bytes(saved)
    expect_error(single)
    index.unlink()
    expect_error(sparse_dir, FileNotFoundError)
    index.write_bytes(frames["pf"])
    expect_error(sparse_dir)
    shutil.rmtree(sparse_dir)
    sparse_dir.mkdir()
    expect_error(sparse_dir, FileNotFoundError)


def test_missing_file(tmp_path, cli_path):
    """A path that does not exist: FileNotFoundError / CLI exit 1, naming the path."""
    path = tmp_path / "nope.b2nd"
    expect_error(path, FileNotFoundError)
    expect_cli_error(cli_path, path, tmp_path)


def test_bad_read_arguments(frames, tmp_path, cli_path):
    """A pad the dtype cannot hold, a box of the wrong rank, io not mmap/pread: ValueError
    (CLI: exit 2), and the file stays usable."""
    path = tmp_path / "u8.b2nd"
    patchfeed.write_b2nd(str(path), np.arange(60, dtype=np.uint8).reshape(6, 10), (4, 4), (2, 3))
    arr = patchfeed.open_array(str(path))
    for call in (
        lambda: arr.read_box([0, 0], [3, 3], pad=-1),
        lambda: arr.read_box([0, 0], [3, 3], pad=0.5),
        lambda: arr.read_box([0, 0], [3, 3], pad=256),
        lambda: arr.read_box([0], [3]),
        lambda: arr.read_box([0, 5], [3, 4]),
        lambda: patchfeed.open_array(str(path), io="aio"),
    ):
        with pytest.raises(ValueError):
            call()
    assert arr.read_box([0, 0], [1, 2]).tolist() == [[0, 1]]
    out = tmp_path / "o.npy"
    for args in (
        ["--pad", "-1"],
        ["--box", "0:2,3:1"],
        ["--box", "0:2,0:2,0:2"],
        ["--box", "a:b"],
        ["--io", "aio"],
        ["--pad", "x"],
    ):
        proc = run_cli(cli_path, "read", path, "--out", out, *args)
        assert proc.returncode == 2 and proc.stderr.strip(), (args, proc.returncode)
        assert not out.exists()


@pytest.mark.parametrize(
    "start,stop,message",
    [
        ([0, 0], [2**62, 2**62], "larger than"),
        ([-(2**63), 0], [2**63 - 1, 1], "not a valid start:stop"),
        ([5, 0], [3, 1], "not a valid start:stop"),
        ([0], [1, 1], "1 starts and 2 stops"),
    ],
)
def test_absurd_boxes_are_value_errors(tmp_path, start, stop, message):
    """Box coordinates are checked before anything is allocated: overflowing, reversed or
    mismatched ranges raise ValueError instead of allocating or reading garbage."""
    path = str(tmp_path / "a.b2nd")
    patchfeed.write_b2nd(path, np.arange(100, dtype=np.int16).reshape(10, 10), (5, 5), (5, 5))
    with pytest.raises(ValueError, match=message):
        patchfeed.open_array(path).read_box(start, stop)
