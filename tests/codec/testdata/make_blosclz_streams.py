# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Writes the BloscLZ golden streams in tests/codec/testdata/blosclz/ with the real c-blosc2.

For each input NAME it writes NAME.raw (the bytes) and NAME.clN.blosclz: the BloscLZ stream that
c-blosc2 produced at clevel N, taken out of a one-block chunk (NOFILTER, NEVER_SPLIT), whose
layout is a 32-byte header, one 4-byte bstart, one 4-byte csize and the stream. Levels at which
c-blosc2 stores the block raw (its entropy probe gives up), or writes the same stream as at a
lower level, are skipped. Inputs are deterministic.

  python3 make_blosclz_streams.py                  # regenerate the golden files
  python3 make_blosclz_streams.py --check DIR      # c-blosc2 decodes DIR/NAME.*.blosclz?

The --check mode wraps every DIR/NAME...blosclz stream (e.g. our encoder's output) into a
one-block chunk and asks blosc2.decompress2 to decode it, comparing with DIR/NAME.raw (or the
golden NAME.raw).
"""

import argparse
import pathlib
import struct
import sys

import blosc2
import numpy as np

OUT = pathlib.Path(__file__).resolve().parent / "blosclz"
LEVELS = (1, 5, 9)


def shuffle_bytes(a: np.ndarray) -> bytes:
    """Byte shuffle (Blosc's SHUFFLE filter for one block), done here so the chunk has none."""
    planes = np.frombuffer(a.tobytes(), np.uint8).reshape(-1, a.itemsize)
    return np.ascontiguousarray(planes.T).tobytes()


def inputs() -> dict:
    rng = np.random.default_rng(20260101)
    data = {}
    # A 32^3 label map: background with a few spheres (what segmentation masks look like).
    z, y, x = np.meshgrid(np.arange(32), np.arange(32), np.arange(32), indexing="ij")
    labels = np.zeros((32, 32, 32), np.uint8)
    for i, (cz, cy, cx, r) in enumerate([(15, 15, 15, 10), (20, 8, 24, 6), (6, 24, 8, 5)]):
        labels[(z - cz) ** 2 + (y - cy) ** 2 + (x - cx) ** 2 < r * r] = i + 1
    data["labels_u8"] = labels.tobytes()
    # A smooth float32 field, byte-shuffled as Blosc does before the codec.
    z, y, x = np.meshgrid(np.arange(4), np.arange(32), np.arange(32), indexing="ij")
    field = (100 * np.sin(x / 7.0) + 50 * np.cos(y / 5.0) + 3 * z).astype(np.float32)
    data["smooth_f32_shuffled"] = shuffle_bytes(field)
    # Far matches: a random block repeated 12500 bytes later (distance > 8191), behind a
    # compressible preamble so that c-blosc2's entropy probe (first 1/8) lets it compress.
    a = rng.integers(0, 256, 8500, dtype=np.uint8).tobytes()
    b = rng.integers(0, 256, 4000, dtype=np.uint8).tobytes()
    pre = (b"patchfeed reads blosc2 chunks; " * 100)[:3072]
    tail = bytes(range(256)) * 2
    data["far_u8"] = (pre + a + b + a + tail)[:24576]
    # Long runs, whose matches need many length-extension bytes.
    data["runs_u8"] = bytes(3000) + b"\x07" * 5000 + bytes(range(200)) + bytes(7000)
    # A small block.
    data["small_u8"] = (b"abcdefgh" * 8 + b"0123" * 5)[:84]
    return data


def max_distance(stream: bytes) -> int:
    """The largest match distance in a BloscLZ stream (format: blosc2-formats.md 2.3)."""
    i, best, first = 0, 0, True
    while i < len(stream):
        c = stream[i] & 31 if first else stream[i]
        i, first = i + 1, False
        if c < 32:
            i += c + 1
            continue
        if c >> 5 == 7:
            while stream[i] == 255:
                i += 1
            i += 1
        d = stream[i]
        i += 1
        if c & 31 == 31 and d == 255:
            best = max(best, 8192 + (stream[i] << 8 | stream[i + 1]))
            i += 2
        else:
            best = max(best, ((c & 31) << 8) + d + 1)
    return best


def stream_of(chunk: bytes, nbytes: int):
    """The BloscLZ stream inside a one-block chunk, or None if c-blosc2 stored it raw."""
    flags = chunk[2]
    if flags & 0x02:  # memcpyed chunk
        return None
    bstart, csize = struct.unpack_from("<iI", chunk, 32)
    assert bstart == 36, bstart
    if csize >= nbytes:
        return None
    return chunk[40 : 40 + csize]


def compress(data: bytes, clevel: int) -> bytes:
    return blosc2.compress2(
        data,
        codec=blosc2.Codec.BLOSCLZ,
        clevel=clevel,
        typesize=1,
        filters=[blosc2.Filter.NOFILTER],
        blocksize=len(data),
        splitmode=blosc2.SplitMode.NEVER_SPLIT,
    )


def wrap(stream: bytes, nbytes: int) -> bytes:
    """A one-block Blosc2 chunk (extended header, no filters, BloscLZ) around `stream`."""
    cbytes = 32 + 4 + 4 + len(stream)
    # flags 0x15: extended header (0x01|0x04), don't split (0x10), codec format 0 (BloscLZ).
    header = struct.pack("<BBBBiii", 5, 1, 0x15, 1, nbytes, nbytes, cbytes) + bytes(16)
    return header + struct.pack("<iI", 36, len(stream)) + stream


def generate() -> None:
    OUT.mkdir(exist_ok=True)
    total = 0
    for name, data in inputs().items():
        (OUT / f"{name}.raw").write_bytes(data)
        total += len(data)
        written, seen = [], set()
        for clevel in LEVELS:
            stream = stream_of(compress(data, clevel), len(data))
            if stream is None or stream in seen:  # raw, or the same as a lower level's
                continue
            seen.add(stream)
            if name == "far_u8":
                assert max_distance(stream) > 8191, "no far match in far_u8"
            # Our wrapper must reproduce a chunk c-blosc2 accepts.
            assert blosc2.decompress2(wrap(stream, len(data))) == data
            (OUT / f"{name}.cl{clevel}.blosclz").write_bytes(stream)
            total += len(stream)
            written.append(f"cl{clevel}: {len(stream)}")
        assert written, f"c-blosc2 compressed {name} at no level"
        print(f"{name}: {len(data)} bytes -> {', '.join(written)}")
    print(f"total {total} bytes, c-blosc2 {blosc2.blosclib_version}")


def check(directory: pathlib.Path) -> int:
    failures = 0
    streams = sorted(directory.glob("*.blosclz"))
    for path in streams:
        name = path.name.split(".")[0]
        raw_path = directory / f"{name}.raw"
        raw = (raw_path if raw_path.exists() else OUT / f"{name}.raw").read_bytes()
        try:
            ok = blosc2.decompress2(wrap(path.read_bytes(), len(raw))) == raw
        except (ValueError, RuntimeError) as e:  # how python-blosc2 reports a bad stream
            print(f"{path.name}: {e}")
            ok = False
        failures += not ok
        print(f"{path.name}: {'decoded by c-blosc2' if ok else 'REJECTED'}")
    print(f"{len(streams) - failures}/{len(streams)} streams decoded exactly by c-blosc2")
    return 1 if failures or not streams else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", type=pathlib.Path, help="directory of streams to decode")
    args = parser.parse_args()
    if args.check:
        return check(args.check)
    generate()
    return 0


if __name__ == "__main__":
    sys.exit(main())
