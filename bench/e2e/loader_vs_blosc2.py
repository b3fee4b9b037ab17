#!/usr/bin/env python3
# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""patchfeed's Loader (bench/loader/loader_bench.cc) vs python-blosc2 on the same random boxes.

Workload A: 2-D crops, one crop per chunk (uint8, LZ4HC). Stored channel first, (3, 8, 512, 512)
with chunks (3, 1, 512, 512), because the loader's arrays are (C, *spatial); a crop has the same
786 KiB as a 512x512x3 HWC crop. Workload B: nnU-Net-like cases, float32 image + int16 seg
(1, 160, 160, 160), LZ4HC 5 + SHUFFLE, nnU-Net's chunks/blocks, random 128^3 patches, batch 2.

Every side reads the same number of samples; the sides run alternately, round after round (the
2 cores are shared with other jobs), and the best round of each is kept. A last table sets both
against the decode floor of the same files (decode_floor()).

  python3 bench/e2e/loader_vs_blosc2.py --quick
"""
import argparse
import concurrent.futures as cf
import json
import multiprocessing as mp
import os
import shutil
import subprocess
import sys
import time

import blosc2
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frames_vs_blosc2 import photo_crops

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "build", "lbench", "python"))

A_PATCH, A_BATCH = (1, 512, 512), 4
B_PATCH, B_BATCH = (128, 128, 128), 2


def lz4hc(clevel):
    return {"codec": blosc2.Codec.LZ4HC, "clevel": clevel, "filters": [blosc2.Filter.SHUFFLE],
            "filters_meta": [0]}


def write_datasets(root, n_a, n_b):
    import patchfeed._core as core
    rng = np.random.default_rng(0)
    a_dir, b_dir = os.path.join(root, "A"), os.path.join(root, "B")
    for d in (a_dir, b_dir):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    for i in range(n_a):
        # Photo-like crops (compressible about 1.2x, like decoded frames), channel-first because
        # the loader reads (C, *spatial) arrays: one chunk (3, 1, 512, 512) per crop.
        crops = np.ascontiguousarray(photo_crops(8, seed=i).transpose(3, 0, 1, 2))
        blosc2.asarray(crops, urlpath=os.path.join(a_dir, f"case_{i:03d}.b2nd"), mode="w",
                       chunks=(3, 1, 512, 512), cparams=lz4hc(9))
    shape = (1, 160, 160, 160)
    for i in range(n_b):
        # Quantized noise over a smooth ramp: compresses somewhat, like a CT/MR volume.
        img = (np.linspace(-1, 1, 160, dtype=np.float32)[None, :, None, None] +
               np.round(rng.standard_normal(shape, dtype=np.float32) * 16) / 16)
        seg = (img > 0.8).astype(np.int16)
        for arr, suffix in ((img, ".b2nd"), (seg, "_seg.b2nd")):
            chunks, blocks = core.nnunet_chunk_block_shapes(shape, B_PATCH, arr.itemsize)
            blosc2.asarray(arr, urlpath=os.path.join(b_dir, f"case_{i:03d}{suffix}"), mode="w",
                           chunks=tuple(chunks), blocks=tuple(blocks), cparams=lz4hc(5))
    return a_dir, b_dir


# ---- python-blosc2 side: each worker opens every file once, then reads random boxes ----------

_open = {}


def _files(workload, folder):
    names = sorted(f for f in os.listdir(folder) if f.endswith(".b2nd") and "_seg" not in f)
    if workload == "A":
        return [[os.path.join(folder, f)] for f in names]
    return [[os.path.join(folder, f), os.path.join(folder, f[:-5] + "_seg.b2nd")] for f in names]


def _arrays(workload, folder, mmap_mode="r"):
    key = (workload, folder, mmap_mode)
    if key not in _open:
        blosc2.set_nthreads(1)  # parallelism comes from the Python threads/processes only
        _open[key] = [[blosc2.open(p, mmap_mode=mmap_mode) for p in case]
                      for case in _files(workload, folder)]
    return _open[key]


def read_samples(workload, folder, n, seed, mmap_mode="r"):
    """Reads n random boxes; returns the bytes delivered. mmap_mode=None reads with file I/O
    (what a FUSE mount with direct_io allows, bench/e2e/loader_on_fuse.py)."""
    cases = _arrays(workload, folder, mmap_mode)
    patch = A_PATCH if workload == "A" else B_PATCH
    rng = np.random.default_rng(seed)
    total = 0
    for _ in range(n):
        arrs = cases[rng.integers(len(cases))]
        spatial = arrs[0].shape[1:]
        lo = [int(rng.integers(0, s - p + 1)) for s, p in zip(spatial, patch)]
        box = (slice(None),) + tuple(slice(l, l + p) for l, p in zip(lo, patch))
        for a in arrs:
            total += a[box].nbytes
    return total


def blosc2_threads(workload, folder, samples, workers):
    _arrays(workload, folder)  # opening is not timed, as on the loader side
    t0 = time.perf_counter()
    with cf.ThreadPoolExecutor(workers) as ex:
        nbytes = sum(ex.map(read_samples, [workload] * workers, [folder] * workers,
                            [samples // workers] * workers, range(workers)))
    return nbytes / (time.perf_counter() - t0) / 1e6


def blosc2_processes(workload, folder, samples, workers):
    with mp.get_context("fork").Pool(workers) as pool:
        pool.starmap(read_samples, [(workload, folder, 1, 100 + w) for w in range(workers)])
        t0 = time.perf_counter()
        nbytes = sum(pool.starmap(read_samples, [(workload, folder, samples // workers, w)
                                                 for w in range(workers)]))
        return nbytes / (time.perf_counter() - t0) / 1e6


# ---- patchfeed side: the C++ bench binary --------------------------------------------------------

def run_bench(binary, *args):
    out = subprocess.run([binary, *map(str, args)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


# workload -> [bytes decoded, bytes delivered] over all of the loader's runs: a run of few
# samples draws few boxes, and their alignment to the blocks moves the ratio by 10 %.
DECODED_BYTES = {}


def decoded_per_byte(workload):
    decoded, delivered = DECODED_BYTES[workload]
    return decoded / delivered


def patchfeed_mbs(binary, workload, folder, samples, threads):
    patch, batch = (A_PATCH, A_BATCH) if workload == "A" else (B_PATCH, B_BATCH)
    # --workers-only: `threads` arena workers read and the consuming thread only waits, so the
    # thread count is exact (by default Next() also reads on the consumer thread when it would
    # otherwise wait, which makes "1 thread" up to two).
    r = run_bench(binary, "--dataset", folder, "--workload", workload, "--threads", threads,
                  "--batches", samples // batch, "--batch-size", batch,
                  "--patch", ",".join(map(str, patch)), "--workers-only")
    totals = DECODED_BYTES.setdefault(workload, [0, 0])
    totals[0] += r["bytes_decoded"]
    totals[1] += r["bytes"]
    return r["mb_s"]


# ---- the decode floor ----------------------------------------------------------------------------

def decode_floor(workload, folder, rounds):
    """MB/s (decoded bytes) of decoding each array of the workload whole, one thread, into one
    reused buffer: the best of python-blosc2 and patchfeed's codec, best round. Entropy decoding
    and unshuffle of every byte with a cached destination and no slicing, which any reader of
    these files spends at least per byte of the blocks a box touches. Each array is decoded
    from an in-memory copy made one chunk (its blocks and compression unchanged, so the same
    block streams): the files' edge chunks are mostly padding beyond the array, which decodes
    far faster than data and would flatter the floor."""
    import patchfeed._core as core

    blosc2.set_nthreads(1)
    chunks = []
    for case in _files(workload, folder):
        for path in case:
            a = blosc2.open(path, mmap_mode="r")
            whole = blosc2.asarray(a[...], chunks=a.shape, blocks=a.blocks,
                                   cparams=a.schunk.cparams)
            chunks.append(whole.schunk.get_chunk(0))
    sizes = [blosc2.get_cbuffer_sizes(c)[0] for c in chunks]
    total = sum(sizes)
    buf = bytearray(max(sizes))
    out = np.frombuffer(buf, np.uint8)
    views = [np.frombuffer(c, np.uint8) for c in chunks]
    decoders = {
        "c-blosc2": lambda: [blosc2.decompress2(c, dst=memoryview(buf)[:n])
                             for c, n in zip(chunks, sizes)],
        "patchfeed": lambda: [core.decompress_into(v, out[:n]) for v, n in zip(views, sizes)],
    }
    best = {name: 0.0 for name in decoders}
    for _ in range(rounds):
        for name, run in decoders.items():
            t0 = time.perf_counter()
            run()
            best[name] = max(best[name], total / (time.perf_counter() - t0) / 1e6)
    return best


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, wl in zip(axes, ("A", "B")):
        for side in ("patchfeed threads", "blosc2 threads", "blosc2 processes"):
            xs = [1, 2]
            ax.plot(xs, [results[wl][side][x] for x in xs], marker="o", label=side)
        ax.set_title({"A": "A: 512x512x3 uint8 crops (1 chunk each)",
                      "B": "B: nnU-Net 128^3 patches, batch 2"}[wl], fontsize=9)
        ax.set_xlabel("threads / processes")
        ax.set_ylabel("MB/s delivered")
        ax.set_xticks([1, 2])
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default=os.path.join(
        REPO, "build", "lbench", "bench", "loader", "patchfeed_loader_bench"))
    ap.add_argument("--root", default="/dev/shm/patchfeed_loader_vs_blosc2")
    ap.add_argument("--quick", action="store_true", help="fewer cases, samples and rounds (~3 min)")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--plot", default=os.path.join(REPO, "bench", "loader_scaling.png"))
    args = ap.parse_args()
    n_a, n_b = (16, 4) if args.quick else (64, 8)
    samples = {"A": 96 if args.quick else 512, "B": 16 if args.quick else 64}
    rounds = args.rounds or (2 if args.quick else 3)

    a_dir, b_dir = write_datasets(args.root, n_a, n_b)
    folders = {"A": a_dir, "B": b_dir}
    sides = {
        "patchfeed threads":
            lambda wl, n: patchfeed_mbs(args.bench, wl, folders[wl], samples[wl], n),
        "blosc2 threads": lambda wl, n: blosc2_threads(wl, folders[wl], samples[wl], n),
        "blosc2 processes": lambda wl, n: blosc2_processes(wl, folders[wl], samples[wl], n),
    }
    results = {wl: {s: {1: 0.0, 2: 0.0} for s in sides} for wl in "AB"}
    for rnd in range(rounds):
        for wl in "AB":
            for n in (1, 2):
                for side, fn in sides.items():  # alternate the sides: shared cores drift
                    mbs = fn(wl, n)
                    results[wl][side][n] = max(results[wl][side][n], mbs)
                    print(f"round {rnd} {wl} {side} x{n}: {mbs:.0f} MB/s", file=sys.stderr)

    lat = [run_bench(args.bench, "--dataset", a_dir, "--workload", "A", "--threads", t,
                     "--batch-size", 1, "--patch", "1,512,512", "--latency",
                     "--reps", 50 if args.quick else 200) for t in (1, 2)]
    rss = {n: run_bench(args.bench, "--dataset", b_dir, "--workload", "B", "--threads", 2,
                        "--batches", 4, "--batch-size", 2, "--patch", "128,128,128",
                        "--open-cases", n) for n in (n_b, 1000)}
    floors = {wl: decode_floor(wl, folders[wl], 3 if args.quick else 5) for wl in "AB"}
    plot(results, args.plot)

    print("| workload | side | MB/s @1 | MB/s @2 | scaling eff. |")
    print("|---|---|---:|---:|---:|")
    for wl in "AB":
        for side in sides:
            r = results[wl][side]
            print(f"| {wl} | {side} | {r[1]:.0f} | {r[2]:.0f} | {r[2] / (2 * r[1]):.0%} |")
    print()
    print("| goal | measured | target | met |")
    print("|---|---:|---:|---|")
    for wl in "AB":
        pf, bp = results[wl]["patchfeed threads"], results[wl]["blosc2 processes"]
        best = max(pf[1], pf[2]) / max(bp[1], bp[2])
        ratio2 = pf[2] / bp[2]
        print(f"| {wl}: patchfeed 2 threads / blosc2 2 processes | {ratio2:.2f}x | >= 1.5x | "
              f"{'yes' if ratio2 >= 1.5 else 'no'} |")
        print(f"| {wl}: best patchfeed / best blosc2 processes | {best:.2f}x | >= 1.5x | "
              f"{'yes' if best >= 1.5 else 'no'} |")
        eff = pf[2] / (2 * pf[1])
        print(f"| {wl}: patchfeed scaling efficiency 1->2 threads | {eff:.0%} | >= 90% | "
              f"{'yes' if eff >= 0.9 else 'no'} |")
    for t, r in zip((1, 2), lat):
        print(f"| one-chunk batch / inline ReadBox, loader {t} thread(s) | {r['ratio']:.2f}x "
              f"({r['loader_us']:.0f} vs {r['inline_us']:.0f} us) | <= 1.1x | "
              f"{'yes' if r['ratio'] <= 1.1 else 'no'} |")
    for n, r in rss.items():
        print(f"| peak RSS, loader over {n} open cases (B) | {r['peak_rss_mb']:.0f} MB | "
              f"(report) | - |")
    print()
    print("Decode floor (decode_floor(): each array decoded whole, one thread, a reused buffer), "
          "in bytes delivered (box reads decode whole blocks: bytes_decoded / bytes delivered):")
    print()
    print("| workload | c-blosc2 / patchfeed codec MB/s decoded | decoded per delivered byte | "
          "floor MB/s delivered @1 | blosc2 threads @1 / floor | patchfeed @1 / floor | "
          "2 x floor / best blosc2 @2 |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for wl in "AB":
        f = floors[wl]
        per_byte = decoded_per_byte(wl)
        floor = max(f.values()) / per_byte
        r = results[wl]
        best2 = max(r["blosc2 threads"][2], r["blosc2 processes"][2])
        print(f"| {wl} | {f['c-blosc2']:.0f} / {f['patchfeed']:.0f} | {per_byte:.2f} | "
              f"{floor:.0f} | {r['blosc2 threads'][1] / floor:.0%} | "
              f"{r['patchfeed threads'][1] / floor:.0%} | {2 * floor / best2:.2f}x |")
    print(f"\nplot: {args.plot}")


if __name__ == "__main__":
    main()
