# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Shared helpers of the frame tests (test_frames_*.py): python-blosc2 parameter names, seeded
array data of every dtype, the geometries of the rank matrix, box generators and the NumPy
reference for padded box reads, exact comparison, the CLI `read` wrapper, an independent
decoder of a `.b2nd` file from its chunks (python-blosc2 decompresses each chunk; the b2nd block
layout is undone here), and a small parser of the frame layout for the corruption tests.
"""

from __future__ import annotations

import struct
import subprocess

import blosc2
import numpy as np
import patchfeed

F = blosc2.Filter
C = blosc2.Codec
CODECS = {"blosclz": C.BLOSCLZ, "lz4": C.LZ4, "lz4hc": C.LZ4HC, "zlib": C.ZLIB, "zstd": C.ZSTD}
# Filter pipelines (slot 0 first) and their filters_meta.
FILTERS = {
    "none": ([], []),
    "shuffle": ([F.SHUFFLE], [0]),
    "bitshuffle": ([F.BITSHUFFLE], [0]),
    "delta": ([F.DELTA], [0]),
    "delta+shuffle": ([F.DELTA, F.SHUFFLE], [0, 0]),
    "bytedelta": ([F.SHUFFLE, F.BYTEDELTA], [0, 0]),
    "trunc_prec": ([F.TRUNC_PREC, F.SHUFFLE], [11, 0]),
}
SPLITS = [blosc2.SplitMode.AUTO_SPLIT, blosc2.SplitMode.ALWAYS_SPLIT, blosc2.SplitMode.NEVER_SPLIT]
DTYPES = ["|u1", "<i2", "<i4", "<f4", "<f8", "|b1", "<c8", ">i4", "<u2", "<i8"]
# Per rank: shape, chunks, blocks; no shape is a multiple of its chunks, no chunk of its blocks.
GEOMETRY = {
    1: ((1000,), (300,), (64,)),
    2: ((37, 29), (10, 12), (4, 5)),
    3: ((13, 11, 9), (6, 5, 4), (4, 3, 3)),
    4: ((5, 7, 6, 9), (3, 4, 4, 5), (2, 3, 3, 2)),
    5: ((3, 4, 5, 6, 7), (2, 3, 4, 4, 5), (1, 2, 3, 3, 2)),
}


def make_values(dtype: str, shape, seed: int) -> np.ndarray:
    """Seeded data of `dtype` that compresses somewhat: random walks plus noise."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if dt.kind == "b":
        return (rng.random(n) < 0.3).reshape(shape)
    walk = np.cumsum(rng.normal(0, 3, n)) + rng.normal(0, 0.5, n)
    if dt.kind == "c":
        out = walk + 1j * np.cumsum(rng.normal(0, 1, n))
    elif dt.kind == "f":
        out = walk * 1.37
    else:
        # Wraps around into the type's range; 8-byte types get values using every byte.
        out = np.round(walk * 10).astype(np.int64) * (987654321 if dt.itemsize == 8 else 1)
    return np.asarray(out).astype(dt).reshape(shape)


def pad_value(dtype) -> float:
    """A non-zero pad representable in `dtype` (0 for complex, which only pads with 0)."""
    kind = np.dtype(dtype).kind
    return {"b": 1, "u": 3, "i": -1, "f": -7.25}.get(kind, 0)


def expected_box(arr: np.ndarray, start, stop, pad) -> np.ndarray:
    """arr[start:stop] with `pad` wherever the box lies outside the array."""
    shape = [max(0, b - a) for a, b in zip(start, stop)]
    # pad 0 means zero bytes in any dtype (np.full would write '0' into a string dtype).
    out = np.zeros(shape, arr.dtype) if pad == 0 else np.full(shape, pad, dtype=arr.dtype)
    src = tuple(slice(max(a, 0), min(b, n)) for a, b, n in zip(start, stop, arr.shape))
    if all(s.start < s.stop for s in src):
        dst = tuple(slice(s.start - a, s.stop - a) for s, a in zip(src, start))
        out[dst] = arr[src]
    return out


def boxes_for(shape, rng: np.random.Generator, n_random: int = 16):
    """The whole array, the array with a margin, boxes outside each face and across each face,
    an empty box, then `n_random` seeded random boxes (many crossing the border). Above rank 6
    margins and random extents shrink to 1-2 items per dimension to bound the box size."""
    shape = list(shape)
    n = len(shape)
    small = n > 6
    boxes = [([0] * n, shape)]
    if not small:
        boxes.append(([-2] * n, [s + 3 for s in shape]))
    for d, s in enumerate(shape):
        faces = ((-4, 0), (s, s + 3), (-2, min(s, 2)), (max(s - 2, 0), s + 2))
        for lo, hi in faces[:2] + ((-1, 1), (s - 1, s + 1)) if small else faces:
            start, stop = [0] * n, list(shape)
            start[d], stop[d] = lo, hi
            boxes.append((start, stop))
        start, stop = [0] * n, list(shape)
        stop[d] = start[d] = s // 2
        boxes.append((start, stop))
    for _ in range(n_random):
        start, stop = [], []
        for s in shape:
            a = int(rng.integers(-1, s + 1) if small else rng.integers(-s // 3 - 3, s + 3))
            start.append(a)
            stop.append(a + int(rng.integers(1, 3) if small else rng.integers(0, s // 2 + 4)))
        boxes.append((start, stop))
    return boxes


def assert_same(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Same dtype, shape and bytes (NaN payloads and signed zeros included)."""
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    if got.tobytes() != want.tobytes():
        bad = np.argwhere(got.view(np.uint8) != want.view(np.uint8))[:3].tolist()
        raise AssertionError(f"{what}: differs, first bytes at {bad}: got {got!r} want {want!r}")


def blosc2_write(
    path,
    arr,
    chunks,
    blocks,
    codec="zstd",
    clevel=5,
    filters="shuffle",
    split=blosc2.SplitMode.AUTO_SPLIT,
    nthreads=1,
    use_dict=False,
    contiguous=True,
):
    """Writes `arr` with python-blosc2 as nnU-Net does (blosc2.asarray with a urlpath)."""
    flist, fmeta = FILTERS[filters]
    cparams = {
        "codec": CODECS[codec],
        "clevel": clevel,
        "filters": flist,
        "filters_meta": fmeta,
        "splitmode": split,
        "nthreads": nthreads,
        "use_dict": use_dict,
    }
    return blosc2.asarray(
        arr,
        urlpath=str(path),
        mode="w",
        chunks=chunks,
        blocks=blocks,
        cparams=cparams,
        contiguous=contiguous,
    )


def cli_read(cli_path, path, start, stop, pad, io, out) -> np.ndarray:
    """`patchfeed read PATH --box a:b,... --pad V --io IO --out OUT --npy`, loaded back."""
    box = ",".join(f"{a}:{b}" for a, b in zip(start, stop))
    args = [
        str(cli_path),
        "read",
        str(path),
        "--pad",
        repr(pad),
        "--io",
        io,
        "--out",
        str(out),
        "--npy",
    ]
    if box:
        args += ["--box", box]
    proc = subprocess.run(args, check=False, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, f"{' '.join(args)} exited {proc.returncode}: {proc.stderr}"
    return np.load(out)


def check_reads(
    path,
    want: np.ndarray,
    seed: int,
    cli_path=None,
    tmp_path=None,
    n_random: int = 16,
    n_cli: int = 2,
    pad=None,
) -> None:
    """Opens `path` in both I/O modes; metadata and every box of boxes_for() must match
    `want`. The box with a margin and `n_cli - 1` random others also go through the CLI."""
    pad = pad_value(want.dtype) if pad is None else pad
    rng = np.random.default_rng(seed)
    boxes = boxes_for(want.shape, rng, n_random)
    for io in ("mmap", "pread"):
        arr = patchfeed.open_array(str(path), io=io)
        assert arr.shape == want.shape and arr.dtype == want.dtype, (arr.shape, arr.dtype)
        for start, stop in boxes:
            got = arr.read_box(start, stop, pad=pad)
            assert_same(got, expected_box(want, start, stop, pad), f"{path} [{start}, {stop}) {io}")
    if cli_path is None:
        return
    picks = [boxes[1]] + [boxes[int(i)] for i in rng.choice(len(boxes), n_cli - 1)]
    for k, (start, stop) in enumerate(picks):
        io = ("mmap", "pread")[k % 2]
        got = cli_read(cli_path, path, start, stop, pad, io, tmp_path / f"cli{k}.npy")
        assert_same(got, expected_box(want, start, stop, pad), f"CLI {path} [{start}, {stop})")


def array_from_chunks(path) -> np.ndarray:
    """The array in `path` rebuilt from python-blosc2's whole-chunk decompression (not its
    slice reads, which mis-handle DELTA in edge chunks): each chunk's blocks are placed by the
    b2nd layout (reference section 6.2) and the padding is dropped."""
    arr = blosc2.open(str(path))
    shape, chunks, blocks, dtype = arr.shape, arr.chunks, arr.blocks, arr.dtype
    out = np.zeros(shape, dtype)
    if 0 in shape:
        return out
    n = len(shape)
    ext = [-(-c // b) * b for c, b in zip(chunks, blocks)]
    grid = [-(-s // c) for s, c in zip(shape, chunks)]
    perm = [x for d in range(n) for x in (d, n + d)]
    for i, q in enumerate(np.ndindex(*grid)):
        raw = np.frombuffer(arr.schunk.decompress_chunk(i), dtype)
        nblocks = [e // b for e, b in zip(ext, blocks)]
        chunk = raw.reshape(nblocks + list(blocks)).transpose(perm).reshape(ext)
        origin = [qd * c for qd, c in zip(q, chunks)]
        ext_valid = [min(c, s - o) for c, s, o in zip(chunks, shape, origin)]
        dst = tuple(slice(o, o + e) for o, e in zip(origin, ext_valid))
        out[dst] = chunk[tuple(slice(0, e) for e in ext_valid)]
    return out


class FrameLayout:
    """Where the parts of a contiguous frame lie (reference section 4): header, chunk data,
    offsets chunk, trailer; and the decoded chunk offsets."""

    def __init__(self, frame: bytes) -> None:
        self.frame = frame
        self.header_len = struct.unpack_from(">i", frame, 11)[0]
        self.frame_len = struct.unpack_from(">Q", frame, 16)[0]
        self.cbytes = struct.unpack_from(">q", frame, 39)[0]
        self.sparse = frame[26] & 0x0F == 1
        self.trailer_len = struct.unpack_from(">I", frame, self.frame_len - 22)[0]
        self.offsets_start = self.header_len + (0 if self.sparse else self.cbytes)
        self.trailer_start = self.frame_len - self.trailer_len
        self.offsets_chunk = frame[self.offsets_start : self.trailer_start]
        raw = patchfeed.decompress(self.offsets_chunk) if self.offsets_chunk else b""
        self.offsets = list(struct.unpack(f"<{len(raw) // 8}q", raw))

    def chunk_pos(self, i: int) -> int:
        """Absolute position of (stored) chunk `i` in the frame."""
        assert self.offsets[i] >= 0, "special chunk"
        return self.header_len + self.offsets[i]

    def with_offsets(self, offsets: list[int]) -> bytes:
        """The frame with its offsets chunk replaced (memcpyed, any length) and frame_len
        patched; everything else unchanged."""
        chunk = patchfeed.compress(struct.pack(f"<{len(offsets)}q", *offsets), typesize=8, clevel=0)
        head = bytearray(self.frame[: self.offsets_start])
        new_len = len(head) + len(chunk) + self.trailer_len
        struct.pack_into(">Q", head, 16, new_len)
        return bytes(head) + chunk + self.frame[self.trailer_start : self.frame_len]
