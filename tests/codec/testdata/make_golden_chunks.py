#!/usr/bin/env python3
"""Writes the golden chunks that tests/codec/golden_chunks_test.cc decodes.

Each case is a pair NAME.chunk (written by the real library) and NAME.raw (the original bytes).
Producers: python-blosc2 (c-blosc2) and the PyPI `blosc` package (c-blosc 1.x). Re-run after
changing the list: `python3 tests/codec/testdata/make_golden_chunks.py`. The versions that made
the committed files are recorded in VERSIONS.txt.
"""

import pathlib

import blosc
import blosc2
import numpy as np

OUT = pathlib.Path(__file__).resolve().parent / "golden"


def smooth_float32(n):
    x = np.arange(n, dtype=np.float64)
    v = 100 * np.sin(x / 37.0) + 20 * np.cos(x / 5.3) + np.floor(x / 997.0)
    return np.round(v * 16) / 16


def labels(n):
    x = np.arange(n)
    return ((x // 300) % 7 == 3).astype(np.uint8) + ((x // 50) % 11 == 0).astype(np.uint8)


def data(kind, n_bytes, typesize):
    n = max(1, n_bytes // typesize + 1)
    if kind == "smooth":
        if typesize == 4:
            arr = smooth_float32(n).astype(np.float32)
        elif typesize == 8:
            arr = smooth_float32(n).astype(np.float64)
        else:
            arr = (smooth_float32(n * typesize) * 7).astype(np.int64).astype(np.uint8)
        raw = arr.tobytes()
    elif kind == "labels":
        raw = np.repeat(labels(n), typesize).tobytes()
    else:  # random
        raw = np.random.default_rng(n_bytes + typesize).integers(0, 256, n_bytes).astype(
            np.uint8).tobytes()
    return raw[:n_bytes]


B2_CODECS = {
    "blosclz": blosc2.Codec.BLOSCLZ,
    "lz4": blosc2.Codec.LZ4,
    "lz4hc": blosc2.Codec.LZ4HC,
    "zlib": blosc2.Codec.ZLIB,
    "zstd": blosc2.Codec.ZSTD,
}
B2_FILTERS = {
    "none": [blosc2.Filter.NOFILTER],
    "shuffle": [blosc2.Filter.SHUFFLE],
    "bitshuffle": [blosc2.Filter.BITSHUFFLE],
    "delta": [blosc2.Filter.DELTA, blosc2.Filter.SHUFFLE],
    "bytedelta": [blosc2.Filter.SHUFFLE, blosc2.Filter.BYTEDELTA],
}
B2_SPLIT = {"auto": blosc2.SplitMode.AUTO_SPLIT, "always": blosc2.SplitMode.ALWAYS_SPLIT,
            "never": blosc2.SplitMode.NEVER_SPLIT}


def write(name, chunk, raw):
    (OUT / f"{name}.chunk").write_bytes(chunk)
    (OUT / f"{name}.raw").write_bytes(raw)


def main():
    OUT.mkdir(exist_ok=True)
    for f in OUT.iterdir():
        f.unlink()
    blosc2.set_nthreads(1)
    cases = [
        # codec, filter, typesize, nbytes, clevel, split, kind, blocksize
        ("lz4", "shuffle", 4, 40000, 5, "auto", "smooth", 0),
        ("lz4", "shuffle", 4, 40003, 5, "always", "smooth", 8192),
        ("lz4hc", "shuffle", 2, 30001, 5, "never", "smooth", 4096),
        ("zstd", "shuffle", 4, 50000, 1, "auto", "smooth", 0),
        ("zstd", "bitshuffle", 4, 33333, 5, "never", "smooth", 8192),
        ("zstd", "bitshuffle", 8, 20000, 3, "always", "smooth", 4096),
        ("zlib", "shuffle", 8, 24000, 6, "always", "smooth", 8192),
        ("blosclz", "shuffle", 4, 40000, 5, "always", "smooth", 16384),
        ("blosclz", "none", 1, 20000, 9, "never", "labels", 0),
        ("blosclz", "bitshuffle", 3, 10000, 5, "auto", "smooth", 2049),
        ("lz4", "delta", 4, 30000, 5, "auto", "smooth", 4096),
        ("zstd", "delta", 2, 12345, 5, "never", "labels", 2048),
        ("zstd", "bytedelta", 4, 40000, 5, "auto", "smooth", 8192),
        ("lz4", "shuffle", 1, 30000, 5, "always", "labels", 8192),
        ("lz4", "shuffle", 16, 32000, 5, "always", "smooth", 8192),
        ("lz4", "none", 1, 50000, 5, "never", "random", 0),
        ("lz4", "shuffle", 4, 1000, 0, "auto", "smooth", 0),
        ("zstd", "shuffle", 4, 10, 5, "auto", "smooth", 0),
        ("lz4", "shuffle", 1, 8192, 5, "auto", "labels", 0),
    ]
    for codec, filt, ts, n, clevel, split, kind, bs in cases:
        raw = data(kind, n, ts)
        chunk = blosc2.compress2(raw, codec=B2_CODECS[codec], clevel=clevel, typesize=ts,
                                 filters=B2_FILTERS[filt], splitmode=B2_SPLIT[split],
                                 blocksize=bs)
        write(f"blosc2_{codec}_{filt}_ts{ts}_n{n}_c{clevel}_{split}_{kind}", chunk, raw)
    # Dictionaries (zstd, lz4).
    for codec in ("zstd", "lz4"):
        raw = data("smooth", 80000, 4)
        chunk = blosc2.compress2(raw, codec=B2_CODECS[codec], clevel=5, typesize=4,
                                 filters=[blosc2.Filter.SHUFFLE], use_dict=True, blocksize=16384)
        write(f"blosc2_{codec}_dict_ts4_n80000", chunk, raw)
    # Constant data: zero and byte runs, and the all-zero special chunk.
    write("blosc2_zeros_n5000", blosc2.compress2(bytes(5000), typesize=4), bytes(5000))
    write("blosc2_runs_n65536", blosc2.compress2(b"\x07" * 65536, typesize=4, blocksize=8192),
          b"\x07" * 65536)
    # A repeated-value special chunk: 32-byte header + the 4-byte value.
    schunk = blosc2.SChunk(chunksize=4000, cparams={"typesize": 4})
    schunk.fill_special(1000, blosc2.SpecialValue.VALUE, value=np.float32(1.5))
    write("blosc2_repeat_ts4_n4000", schunk.get_chunk(0),
          np.full(1000, 1.5, dtype=np.float32).tobytes())
    # Several compression threads store blocks in the order they finish, so block starts need
    # not increase; retry until they do not (the point of this case).
    raw = data("smooth", 80000, 4)
    for _ in range(100):
        chunk = blosc2.compress2(raw, codec=blosc2.Codec.LZ4, clevel=5, typesize=4,
                                 filters=[blosc2.Filter.SHUFFLE], blocksize=4096, nthreads=4)
        starts = np.frombuffer(chunk, dtype="<i4", count=20, offset=32)
        if np.any(np.diff(starts) < 0):
            break
    else:
        raise RuntimeError("c-blosc2 wrote the blocks in order 100 times; use more threads")
    write("blosc2_lz4_shuffle_ts4_n80000_threads4_unordered", chunk, raw)

    # c-blosc 1.x.
    shuffles = {"none": blosc.NOSHUFFLE, "shuffle": blosc.SHUFFLE, "bitshuffle": blosc.BITSHUFFLE}
    b1_cases = [
        ("lz4", "shuffle", 4, 40000, 5, 0), ("lz4hc", "bitshuffle", 4, 40004, 5, 8192),
        ("zlib", "shuffle", 2, 30000, 5, 0), ("zstd", "shuffle", 8, 30000, 5, 4096),
        ("blosclz", "shuffle", 4, 50000, 5, 0), ("blosclz", "bitshuffle", 3, 9999, 5, 0),
        ("lz4", "bitshuffle", 4, 4004, 5, 0), ("blosclz", "none", 1, 100, 5, 0),
        ("lz4", "bitshuffle", 1, 20003, 9, 2048),
    ]
    for codec, filt, ts, n, clevel, bs in b1_cases:
        raw = data("smooth", n, ts)
        blosc.set_blocksize(bs)
        chunk = blosc.compress(raw, typesize=ts, clevel=clevel, shuffle=shuffles[filt],
                               cname=codec)
        write(f"blosc1_{codec}_{filt}_ts{ts}_n{n}_c{clevel}_bs{bs}", chunk, raw)
    blosc.set_blocksize(0)
    (OUT / "VERSIONS.txt").write_text(
        f"python-blosc2 {blosc2.__version__} (c-blosc2 {blosc2.blosclib_version})\n"
        f"blosc {blosc.__version__} (c-blosc {blosc.blosclib_version})\n")


if __name__ == "__main__":
    main()
