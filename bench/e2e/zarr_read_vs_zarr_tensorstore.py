#!/usr/bin/env python3
# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Random patches from zarr arrays: patchfeed vs zarr-python 3 vs tensorstore, same process.

Stores (written once into --dir, default /dev/shm/patchfeed_zarr_bench, so reads are warm):
- 3-D uint16 (256, 384, 384), image-like (smooth field plus noise):
  - `v3_sharded`: zarr v3, shards (128, 192, 192) of inner chunks (64, 64, 64), zstd (zarr
    3's default compressor), index at the end with crc32c (zarr's default);
  - `v2_blosc`: zarr v2, chunks (64, 64, 64), numcodecs Blosc lz4 + shuffle (zarr v2's default).
  Patches 128^3 at seeded random corners inside the array.
- 2-D uint8 (8192, 8192): `v3_sharded_2d` shards (2048, 2048) of (256, 256), zstd;
  `v2_blosc_2d` chunks (256, 256), Blosc lz4 + shuffle. Crops 512^2.

Readers, each given the same boxes and returning a NumPy array of the box:
- patchfeed: `open_array(path).read_box(start, stop)` (GIL released);
- zarr-python 3.1: `zarr.open_array(path, mode="r")[slices]`;
- tensorstore: `ts.open({driver: zarr3|zarr, kvstore: file})[slices].read().result()`, its
  thread pools (data_copy_concurrency, file_io_concurrency) limited to --threads.
"1 thread": one caller; "threads": --threads callers at once (Python threads; all three release
the GIL while they decode). zarr-python's own pool is left at its default; its CPU is counted.

Measured per reader and store: samples/s (wall) and samples per CPU-second (process CPU, all
threads: what one core delivers), each over at least --min-seconds (the round's boxes repeated).
Readers alternate within each round; --rounds rounds, the median per row; ratios are taken
within a round, then their median. The first read of each store by each reader is checked equal to zarr's.
Last, `patchfeed.Loader` over the array (uniform patches, batches of 2, its own C++ threads) at
1 and --threads threads: the loader is patchfeed's way to use every core (Python threads calling
read_box contend for the GIL between reads).
Goals (issue 14): patchfeed >= 3x tensorstore and >= 10x zarr-python samples per CPU-second;
patchfeed's threads scale >= 90 % (samples/s at T threads >= 0.9 T x 1 thread).

Usage: PYTHONPATH=build/test/python python3 bench/e2e/zarr_read_vs_zarr_tensorstore.py \\
         [--samples 24] [--rounds 3] [--threads 2]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import math
import os
import shutil
import statistics
import time

# NumPy's OpenBLAS threads spin while idle and count as this process's CPU time.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numcodecs  # noqa: E402
import numpy as np  # noqa: E402
import tensorstore as ts  # noqa: E402
import zarr  # noqa: E402
from zarr.codecs import ZstdCodec  # noqa: E402

import patchfeed  # noqa: E402


def image_like(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    grids = np.meshgrid(*[np.arange(n, dtype=np.float32) for n in shape], indexing="ij",
                        sparse=True)
    x = sum(np.sin(g / (17 + 9 * i)) for i, g in enumerate(grids))
    x = (x - x.min()) / (x.max() - x.min() + 1e-9)
    hi = 4000 if np.dtype(dtype).itemsize > 1 else 200
    return (x * hi + rng.normal(0, 2, shape)).clip(0, hi + 20).astype(dtype)


# A leading channel axis of 1, as OME-Zarr images and the loader's (C, *spatial) arrays have.
STORES = {
    "v3_sharded": dict(shape=(1, 256, 384, 384), dtype="uint16", patch=(1, 128, 128, 128),
                       kw=dict(chunks=(1, 64, 64, 64), shards=(1, 128, 192, 192),
                               compressors=ZstdCodec(level=0))),
    "v2_blosc": dict(shape=(1, 256, 384, 384), dtype="uint16", patch=(1, 128, 128, 128),
                     kw=dict(chunks=(1, 64, 64, 64), zarr_format=2,
                             compressors=numcodecs.Blosc("lz4", 5, numcodecs.Blosc.SHUFFLE))),
    "v3_sharded_2d": dict(shape=(1, 8192, 8192), dtype="uint8", patch=(1, 512, 512),
                          kw=dict(chunks=(1, 256, 256), shards=(1, 2048, 2048),
                                  compressors=ZstdCodec(level=0))),
    "v2_blosc_2d": dict(shape=(1, 8192, 8192), dtype="uint8", patch=(1, 512, 512),
                        kw=dict(chunks=(1, 256, 256), zarr_format=2,
                                compressors=numcodecs.Blosc("lz4", 5, numcodecs.Blosc.SHUFFLE))),
}


def write_stores(root):
    os.makedirs(root, exist_ok=True)
    for name, s in STORES.items():
        path = os.path.join(root, name)
        stamp = os.path.join(root, name + ".v2.done")
        if os.path.exists(stamp):
            continue
        shutil.rmtree(path, ignore_errors=True)
        data = image_like(s["shape"], s["dtype"])
        arr = zarr.create_array(path, shape=data.shape, dtype=data.dtype, **s["kw"])
        arr[...] = data
        open(stamp, "w").close()


def boxes_for(shape, patch, n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        start = [int(rng.integers(0, s - p + 1)) for s, p in zip(shape, patch)]
        out.append((start, [a + p for a, p in zip(start, patch)]))
    return out


def make_readers(path, threads, v3):
    pf = patchfeed.open_array(path)
    za = zarr.open_array(path, mode="r")
    ctx = ts.Context({"data_copy_concurrency": {"limit": threads},
                      "file_io_concurrency": {"limit": threads}})
    tsa = ts.open({"driver": "zarr3" if v3 else "zarr",
                   "kvstore": {"driver": "file", "path": path}}, context=ctx,
                  read=True).result()

    def sl(start, stop):
        return tuple(slice(a, b) for a, b in zip(start, stop))

    return {
        "patchfeed": lambda a, b: pf.read_box(a, b),
        "zarr-python": lambda a, b: za[sl(a, b)],
        "tensorstore": lambda a, b: tsa[sl(a, b)].read().result(),
    }


def run(fn, boxes, threads, pool):
    """Wall seconds and process CPU seconds to read every box with `threads` callers."""
    c0, t0 = time.process_time(), time.perf_counter()
    if threads == 1:
        for a, b in boxes:
            fn(a, b)
    else:
        list(pool.map(lambda box: fn(*box), boxes))
    return time.perf_counter() - t0, time.process_time() - c0


def timed(fn, boxes, threads, pool, min_seconds):
    """Samples/s and samples per CPU-second over at least `min_seconds`: the boxes once to
    warm up and size the run, then repeated as often as that takes."""
    wall, _ = run(fn, boxes, threads, pool)
    reps = max(1, math.ceil(min_seconds / max(wall, 1e-6)))
    work = boxes * reps
    wall, cpu = run(fn, work, threads, pool)
    return len(work) / wall, len(work) / max(cpu, 1e-9)


def loader_rates(path, patch, threads, min_seconds):
    """patchfeed.Loader over the one array (uniform random patches, batches of 2, C++ threads):
    samples/s and samples per CPU-second, after a warm-up of a few batches."""
    ds = patchfeed.Dataset.from_list(["image"], {"a": [path]})
    loader = patchfeed.Loader(ds, patch_size=patch[1:], batch_size=2, num_threads=threads,
                              as_numpy=True, foreground="off", seed=threads)
    it = iter(loader)
    for _ in range(3):
        next(it)
    n, c0, t0 = 0, time.process_time(), time.perf_counter()
    while time.perf_counter() - t0 < min_seconds:
        n += next(it)["image"].shape[0]
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    loader.close()
    return n / wall, n / max(cpu, 1e-9)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dir", default="/dev/shm/patchfeed_zarr_bench")
    p.add_argument("--samples", type=int, default=24)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    p.add_argument("--stores", default=",".join(STORES))
    p.add_argument("--min-seconds", type=float, default=0.5,
                   help="each measurement repeats the boxes for at least this long")
    args = p.parse_args()
    write_stores(args.dir)
    print(f"# samples {args.samples} per round, {args.rounds} rounds, threads {args.threads}; "
          "medians; sps = samples/s wall, spc = samples per CPU-second")
    header = (f"{'store':<14} {'threads':>7} {'reader':<12} {'sps':>8} {'spc':>8} "
              f"{'pf/reader sps':>13} {'pf/reader spc':>13}")
    print(header)
    for name in args.stores.split(","):
        s = STORES[name]
        path = os.path.join(args.dir, name)
        v3 = "v3" in name
        readers = make_readers(path, args.threads, v3)
        # Correctness first: every reader's first box equals zarr's.
        a, b = boxes_for(s["shape"], s["patch"], 1, 99)[0]
        ref = readers["zarr-python"](a, b)
        for r, fn in readers.items():
            np.testing.assert_array_equal(fn(a, b), ref, err_msg=f"{r} on {name}")
        results = {}
        with concurrent.futures.ThreadPoolExecutor(args.threads) as pool:
            for rnd in range(args.rounds):
                boxes = boxes_for(s["shape"], s["patch"], args.samples, rnd)
                for threads in (1, args.threads):
                    for r, fn in readers.items():
                        results.setdefault((threads, r), []).append(
                            timed(fn, boxes, threads, pool, args.min_seconds))
        for threads in (1, args.threads):
            pf = results[(threads, "patchfeed")]
            pf_sps = statistics.median(x[0] for x in pf)
            pf_spc = statistics.median(x[1] for x in pf)
            for r in readers:
                rows = results[(threads, r)]
                sps = statistics.median(x[0] for x in rows)
                spc = statistics.median(x[1] for x in rows)
                # Ratios per round, then their median (load drifts between rounds).
                rs = statistics.median(p_[0] / x[0] for p_, x in zip(pf, rows))
                rc = statistics.median(p_[1] / x[1] for p_, x in zip(pf, rows))
                print(f"{name:<14} {threads:>7} {r:<12} {sps:>8.1f} {spc:>8.1f} {rs:>12.2f}x "
                      f"{rc:>12.2f}x")
        one = statistics.median(x[0] for x in results[(1, "patchfeed")])
        many = statistics.median(x[0] for x in results[(args.threads, "patchfeed")])
        print(f"{name:<14} read_box from {args.threads} Python threads / 1: {many / one:.2f}x")
        # The loader: C++ threads, no GIL between reads; rounds alternate 1 and T threads.
        rates = {1: [], args.threads: []}
        for _ in range(args.rounds):
            for t in rates:
                rates[t].append(loader_rates(path, s["patch"], t, args.min_seconds))
        for t, rows in rates.items():
            print(f"{name:<14} {t:>7} {'pf Loader':<12} {statistics.median(x[0] for x in rows):>8.1f} "
                  f"{statistics.median(x[1] for x in rows):>8.1f}")
        scale = statistics.median(m[0] / o[0] for o, m in zip(rates[1], rates[args.threads]))
        print(f"{name:<14} Loader scaling {args.threads} threads / 1: {scale:.2f}x "
              f"({scale / args.threads:.0%} of linear)")


if __name__ == "__main__":
    main()
