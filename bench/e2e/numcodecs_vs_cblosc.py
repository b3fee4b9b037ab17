#!/usr/bin/env python3
# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""patchfeed.numcodecs.Blosc vs numcodecs.Blosc (c-blosc 1.x), one thread, same process.

Rows: cname {lz4, blosclz} x dtype {uint16, float32, float64} x size {1 MiB, 16 MiB}, clevel 5,
SHUFFLE, automatic blocksize. Data: a smooth field with small noise (an image-like array, about
2-4x compressible), the same for both codecs. numcodecs is held to one thread
(`numcodecs.blosc.use_threads = False`), as in a zarr read from worker threads.

Per row: encode MB/s of each codec on the same array; decode MB/s of each codec on the SAME
chunk written by c-blosc (what a zarr v2 store holds), into a fresh buffer (`decode(chunk)`)
and into a preallocated one (`decode(chunk, out=)`). Best of --reps calls, the two codecs
alternating call by call so load changes hit both alike; every decode is checked. MB = 10^6
bytes of uncompressed data. Goals (issue 14): decode >= 2x, encode >= 1x.

Usage: PYTHONPATH=build/test/python python3 bench/e2e/numcodecs_vs_cblosc.py [--reps 15]
"""

from __future__ import annotations

import argparse
import time

import numcodecs.blosc
import numpy as np
from numcodecs import Blosc as CBlosc

from patchfeed.numcodecs import Blosc


def field(dtype: str, nbytes: int) -> np.ndarray:
    n = nbytes // np.dtype(dtype).itemsize
    t = np.arange(n, dtype=np.float64)
    rng = np.random.default_rng(0)
    x = 1000 * np.sin(t / 3000) + 300 * np.cos(t / 170) + rng.normal(0, 3, n)
    return (x + 2000).astype(dtype)


def best(fn, reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def compare(fns, reps):
    """Best time of each function, calls alternating between them."""
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for _ in range(reps):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn()
            times[i].append(time.perf_counter() - t0)
    return [min(t) for t in times]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=15)
    args = ap.parse_args()
    numcodecs.blosc.use_threads = False
    print("| cname | dtype | size | ratio | encode MB/s c-blosc / patchfeed | x "
          "| decode MB/s c-blosc / patchfeed | x | decode out= MB/s c-blosc / patchfeed | x |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    worst_decode, worst_encode = float("inf"), float("inf")
    for cname in ("lz4", "blosclz"):
        for dtype in ("uint16", "float32", "float64"):
            for size in (1 << 20, 16 << 20):
                x = field(dtype, size)
                theirs, ours = CBlosc(cname, 5, CBlosc.SHUFFLE), Blosc(cname, 5, Blosc.SHUFFLE)
                chunk = theirs.encode(x)
                assert bytes(ours.decode(chunk)) == x.tobytes()
                assert bytes(theirs.decode(ours.encode(x))) == x.tobytes()
                out_c, out_p = np.empty_like(x), np.empty_like(x)
                enc = compare([lambda: theirs.encode(x), lambda: ours.encode(x)], args.reps)
                dec = compare([lambda: theirs.decode(chunk), lambda: ours.decode(chunk)], args.reps)
                dec_out = compare([lambda: theirs.decode(chunk, out=out_c),
                                   lambda: ours.decode(chunk, out=out_p)], args.reps)
                assert out_p.tobytes() == x.tobytes() and out_c.tobytes() == x.tobytes()
                mb = x.nbytes / 1e6
                e, d, o = ([mb / t for t in pair] for pair in (enc, dec, dec_out))
                worst_encode = min(worst_encode, e[1] / e[0])
                worst_decode = min(worst_decode, d[1] / d[0], o[1] / o[0])
                print(f"| {cname} | {dtype} | {size >> 20} MiB | {x.nbytes / len(chunk):.2f} | "
                      f"{e[0]:.0f} / {e[1]:.0f} | {e[1] / e[0]:.2f} | {d[0]:.0f} / {d[1]:.0f} | "
                      f"{d[1] / d[0]:.2f} | {o[0]:.0f} / {o[1]:.0f} | {o[1] / o[0]:.2f} |",
                      flush=True)
    print(f"\nworst row: decode {worst_decode:.2f}x (goal 2x), encode {worst_encode:.2f}x "
          "(goal 1x)")


if __name__ == "__main__":
    main()
