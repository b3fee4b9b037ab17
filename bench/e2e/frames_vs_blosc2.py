#!/usr/bin/env python3
# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""patchfeed vs python-blosc2 reading `.b2nd` files: random patches, whole crops, open latency.

Same process, page cache warm (files on tmpfs /dev/shm when present), one thread
(`blosc2.set_nthreads(1)`, `dparams={'nthreads': 1}` as nnU-Net opens its files).
patchfeed reads with `patchfeed.open_array(path).read_box(start, stop)` (mmap), python-blosc2
with `blosc2.open(path, mode='r', mmap_mode='r', dparams=...)` and `arr[box]`; both return a
new NumPy array.

Workloads (all files written by python-blosc2 with `blosc2.asarray`, LZ4HC clevel 5):

* B, nnU-Net 2.8-like case: float32 image (1, 256, 256, 256) and int16 segmentation of the same
  shape; chunks and blocks by nnU-Net 2.8's rule for a 128^3 patch (nnU-Net's own
  `comp_blosc2_params` when nnunetv2 is installed, else patchfeed's C++ port), filters
  [SHUFFLE] for the image and, for the seg, the one nnU-Net's `_select_filter` trial picks
  (NOFILTER or SHUFFLE; the same trial is re-implemented here when nnunetv2 is absent).
  Random 128^3 patches inside the volume, all channels, as nnU-Net's data loader slices them;
  rows for the image, the seg, and a "patch" = image + seg (the unit a training sample needs).
* A, crops: uint8 (N, 512, 512, 3) photo-like images, chunks (1, 512, 512, 3) (one crop per
  chunk), blocks (1, 64, 512, 3); random whole crops.
* open: open the B image file anew and read one random 16^3 box, per call.

Timing: one warm-up pass, then --reps rounds; in each round both libraries read the same list
of random boxes (order alternating between rounds), each read timed on its own. The table
gives the median round's throughput and, as "best", boxes / (sum of each box's fastest
time), which is what survives interference from other processes on a shared machine. Open
latency: median and best of single open+read calls, alternating libraries call by call.
MB = 10^6 bytes of output (the decoded box). Outputs of both libraries are checked to be
equal before timing.

Usage: PYTHONPATH=build/dev/python python bench/e2e/frames_vs_blosc2.py [--quick] [--out f.md]
"""

from __future__ import annotations

import argparse
import gc
import os
import pathlib
import platform
import statistics
import sys
import tempfile
import time
import warnings

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]
try:
    import patchfeed
except ImportError:
    sys.path.insert(
        0, str(pathlib.Path(os.environ.get("PATCHFEED_BUILD_DIR", REPO / "build")) / "python")
    )
    import patchfeed

import blosc2
from patchfeed import _core

try:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from nnunetv2.training.dataloading import nnunet_dataset as _nnunet
except Exception:  # noqa: BLE001 - any import failure means "not available"
    _nnunet = None

MB = 1_000_000
DPARAMS = {"nthreads": 1}
GOALS = {"B": 1.5, "A": 3.0, "open": 1.0}


# --------------------------------------------------------------------------------------------
# Data


def ct_image(side: int, seed: int = 0) -> np.ndarray:
    """A CT-like volume after nnU-Net's CT normalisation, shape (1, side, side, side) float32:
    integer Hounsfield units (body ellipse in air at -1000, smooth soft-tissue variation,
    Gaussian organs and bone, mild noise), clipped and z-scored as nnU-Net does for CT."""
    rng = np.random.default_rng(seed)
    ax = np.arange(side, dtype=np.float32)
    z, y, x = np.meshgrid(ax, ax, ax, indexing="ij", sparse=True)
    c = side / 2
    v = 40 + 25 * np.sin(x / 23.0) * np.cos(y / 31.0) + 15 * np.sin(z / 11.0 + y / 47.0)
    v = np.broadcast_to(v, (side, side, side)).astype(np.float32)
    for _ in range(8):
        cz = rng.uniform(0, side)
        cy, cx = rng.uniform(0.2, 0.8, 2) * side
        r = rng.uniform(0.03, 0.12) * side
        d2 = ((z - cz) ** 2 + (y - cy) ** 2 + (x - cx) ** 2) / np.float32(2 * r * r)
        v += np.float32(rng.uniform(-60, 900)) * np.exp(-d2)
    body = ((y - c) / (0.43 * side)) ** 2 + ((x - c) / (0.47 * side)) ** 2 < 1
    v = np.where(body, v, np.float32(-1000))
    v += rng.normal(0, 6, size=v.shape).astype(np.float32)
    hu = np.round(v)  # scanners store integers
    hu = np.clip(hu, -1000, 1500)
    out = ((hu - np.float32(60.0)) / np.float32(180.0)).astype(np.float32)
    return out[None]


def seg_volume(side: int, seed: int = 1) -> np.ndarray:
    """An int16 segmentation (1, side, side, side): background 0 and a few nested blobs
    (organ 1 containing lesion 2 containing core 3), slightly wobbly."""
    rng = np.random.default_rng(seed)
    ax = np.arange(side, dtype=np.float32)
    z, y, x = np.meshgrid(ax, ax, ax, indexing="ij", sparse=True)
    out = np.zeros((side, side, side), dtype=np.int16)
    wobble = 1 + 0.15 * np.sin(x / 5.0) * np.cos(y / 7.0)
    for _ in range(4):
        cz, cy, cx = rng.uniform(0.15, 0.85, 3) * side
        r = rng.uniform(0.05, 0.16) * side
        d2 = ((z - cz) ** 2 + (y - cy) ** 2 + (x - cx) ** 2) * wobble
        for label, frac in ((1, 1.0), (2, 0.55), (3, 0.25)):
            out[d2 < (r * frac) ** 2] = label
    return out[None]


def photo_crops(n: int, seed: int = 2) -> np.ndarray:
    """n photo-like uint8 RGB images (n, 512, 512, 3): smooth gradients and flat shapes per
    image, fine texture, mild sensor noise (LZ4HC compresses them about 1.2-1.3x, so chunks
    are really compressed, as decoded JPEG/PNG frames are)."""
    rng = np.random.default_rng(seed)
    ax = np.arange(512, dtype=np.float32)
    y, x = np.meshgrid(ax, ax, indexing="ij", sparse=True)
    out = np.empty((n, 512, 512, 3), dtype=np.uint8)
    for i in range(n):
        img = np.empty((512, 512, 3), dtype=np.float32)
        for ch in range(3):
            a, b, ph = rng.uniform(20, 120, 2).tolist() + [rng.uniform(0, 6)]
            img[..., ch] = 120 + 60 * np.sin(x / a + ph) * np.cos(y / b) + 0.1 * (x + y) * (ch - 1)
        for _ in range(6):
            cy, cx, r = rng.uniform(0, 512), rng.uniform(0, 512), rng.uniform(20, 120)
            mask = (y - cy) ** 2 + (x - cx) ** 2 < r * r
            img[mask] = rng.uniform(0, 255, 3)
        img += 2 * np.sin(x / 2.3 + y / 3.1)[..., None]  # fine texture
        img += rng.normal(0, 0.7, size=img.shape).astype(np.float32)  # sensor noise
        out[i] = np.clip(np.round(img), 0, 255).astype(np.uint8)
    return out


# --------------------------------------------------------------------------------------------
# Layout and writing


def nnunet_layout(shape, patch, itemsize):
    """(chunks, blocks, source) by nnU-Net 2.8's rule."""
    if _nnunet is not None:
        blocks, chunks = _nnunet.comp_blosc2_params(shape, patch, itemsize)
        return tuple(chunks), tuple(blocks), "nnunetv2.comp_blosc2_params"
    chunks, blocks = _core.nnunet_chunk_block_shapes(list(shape), list(patch), itemsize)
    return tuple(chunks), tuple(blocks), "patchfeed C++ port"


def nnunet_filter(arr, chunks, blocks):
    """The filter nnU-Net 2.8's save_case would pick (its trial compression of a centred
    one-chunk slab with NOFILTER and SHUFFLE, ties to NOFILTER)."""
    if _nnunet is not None:
        f = _nnunet.nnUNetDatasetBlosc2._select_filter(arr, blocks, chunks, blosc2.Codec.LZ4HC, 5)
        return f
    shape = arr.shape
    slab_shape = [min(c, s) for c, s in zip(chunks, shape)]
    sl = tuple(slice((s - ss) // 2, (s - ss) // 2 + ss) for s, ss in zip(shape, slab_shape))
    slab = np.ascontiguousarray(arr[sl])
    tb = tuple(max(1, min(b, ss)) for b, ss in zip(blocks, slab_shape))
    best, best_bytes = blosc2.Filter.NOFILTER, None
    for f in (blosc2.Filter.NOFILTER, blosc2.Filter.SHUFFLE):
        cp = {"codec": blosc2.Codec.LZ4HC, "clevel": 5, "nthreads": 4, "filters": [f]}
        cb = blosc2.asarray(slab, chunks=tuple(slab_shape), blocks=tb, cparams=cp).schunk.cbytes
        if best_bytes is None or cb < best_bytes:
            best, best_bytes = f, cb
    return best


def write(path, arr, chunks, blocks, filt) -> float:
    """Writes arr with python-blosc2 as nnU-Net does; returns the compression ratio."""
    cp = {"codec": blosc2.Codec.LZ4HC, "clevel": 5, "filters": [filt], "nthreads": 4}
    a = blosc2.asarray(arr, urlpath=str(path), mode="w", chunks=chunks, blocks=blocks, cparams=cp)
    return a.schunk.nbytes / a.schunk.cbytes


# --------------------------------------------------------------------------------------------
# Timing


def timed_rounds(fns: dict, boxes, reps: int) -> dict:
    """Per function f(lo, hi), a reps x len(boxes) array of seconds: every box is timed on its
    own. One untimed warm-up pass each; the order of the functions alternates between rounds."""
    for fn in fns.values():
        for lo, hi in boxes:
            fn(lo, hi)
    names = list(fns)
    times = {n: np.zeros((reps, len(boxes))) for n in names}
    clock = time.perf_counter
    gc.collect()
    gc.disable()
    try:
        for r in range(reps):
            for n in names if r % 2 == 0 else reversed(names):
                fn, row = fns[n], times[n][r]
                for i, (lo, hi) in enumerate(boxes):
                    t0 = clock()
                    fn(lo, hi)
                    row[i] = clock() - t0
    finally:
        gc.enable()
    return times


def box_reader_pf(path):
    arr = patchfeed.open_array(str(path))
    return lambda lo, hi: arr.read_box(lo, hi)


def box_reader_b2(path):
    arr = blosc2.open(str(path), mode="r", mmap_mode="r", dparams=DPARAMS)
    return lambda lo, hi: arr[tuple(slice(a, b) for a, b in zip(lo, hi))]


def check_equal(readers, boxes, label):
    for lo, hi in boxes[:4]:
        outs = [np.asarray(rd(lo, hi)) for rd in readers]
        if not all(np.array_equal(outs[0], o) for o in outs[1:]):
            raise SystemExit(f"{label}: patchfeed and blosc2 differ on box {lo}..{hi}")


def random_boxes(rng, shape, size, n):
    boxes = []
    for _ in range(n):
        lo = [0] + [int(rng.integers(0, s - p + 1)) for s, p in zip(shape[1:], size)]
        hi = [shape[0]] + [a + p for a, p in zip(lo[1:], size)]
        boxes.append((lo, hi))
    return boxes


def throughput_row(name, unit, readers_by_lib, boxes, nbytes_per_box, reps):
    """readers_by_lib: lib -> list of readers; a box counts as read once every reader of the
    lib has read it. Median: the median round's boxes/s. Best: boxes / (sum over boxes of
    each box's fastest time), which filters out other processes' interference."""
    fns = {}
    for lib, readers in readers_by_lib.items():
        def run(lo, hi, readers=readers):
            for rd in readers:
                rd(lo, hi)
        fns[lib] = run
    t = timed_rounds(fns, boxes, reps)
    row = {"name": name, "unit": unit}
    for lib, ts in t.items():
        median = float(np.median(len(boxes) / ts.sum(axis=1)))
        best = len(boxes) / float(ts.min(axis=0).sum())
        row[lib] = (median, best)
        row[lib + "_MBs"] = median * nbytes_per_box / MB
    row["ratio"] = row["patchfeed"][0] / row["blosc2"][0]
    row["ratio_best"] = row["patchfeed"][1] / row["blosc2"][1]
    return row


def open_latency(path, shape, reps, rng):
    boxes = random_boxes(rng, shape, (16, 16, 16), reps)

    def pf(lo, hi):
        return patchfeed.open_array(str(path)).read_box(lo, hi)

    def b2(lo, hi):
        a = blosc2.open(str(path), mode="r", mmap_mode="r", dparams=DPARAMS)
        return a[tuple(slice(x, y) for x, y in zip(lo, hi))]

    check_equal([pf, b2], boxes, "open")
    for _ in range(5):
        pf(*boxes[0])
        b2(*boxes[0])
    t = {"patchfeed": [], "blosc2": []}
    gc.collect()
    gc.disable()
    try:
        for i, (lo, hi) in enumerate(boxes):
            order = (("patchfeed", pf), ("blosc2", b2)) if i % 2 == 0 else (
                ("blosc2", b2), ("patchfeed", pf))
            for lib, fn in order:
                t0 = time.perf_counter()
                fn(lo, hi)
                t[lib].append(time.perf_counter() - t0)
    finally:
        gc.enable()
    row = {"name": "open + read one 16^3 box (B image)", "unit": "us"}
    for lib, ts in t.items():
        row[lib] = (statistics.median(ts) * 1e6, min(ts) * 1e6)
    # Higher is better for the ratio: blosc2 time / patchfeed time.
    row["ratio"] = row["blosc2"][0] / row["patchfeed"][0]
    row["ratio_best"] = row["blosc2"][1] / row["patchfeed"][1]
    return row


# --------------------------------------------------------------------------------------------


def fmt(v):
    return f"{v:,.0f}" if v >= 100 else f"{v:,.1f}"


def table(rows, header_lines) -> str:
    out = list(header_lines) + [
        "",
        (
            "| workload | unit | patchfeed (median) | blosc2 (median) | patchfeed/blosc2 | goal"
            " | patchfeed MB/s | blosc2 MB/s | best pf | best b2 | best ratio |"
        ),
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        mbs_pf = fmt(r["patchfeed_MBs"]) if "patchfeed_MBs" in r else "–"
        mbs_b2 = fmt(r["blosc2_MBs"]) if "blosc2_MBs" in r else "–"
        goal = r.get("goal")
        goal_s = "–" if goal is None else (f"≥ {goal:g}x " + ("met" if r["ratio"] >= goal
                                                             else "**missed**"))
        out.append(
            f"| {r['name']} | {r['unit']} | {fmt(r['patchfeed'][0])} | {fmt(r['blosc2'][0])} | "
            f"{r['ratio']:.2f}x | {goal_s} | {mbs_pf} | {mbs_b2} | {fmt(r['patchfeed'][1])} | "
            f"{fmt(r['blosc2'][1])} | {r['ratio_best']:.2f}x |"
        )
    out.append("")
    out.append("Ratios > 1 mean patchfeed is faster (for latency: blosc2 time / patchfeed time).")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer boxes and rounds")
    ap.add_argument("--reps", type=int, help="timed rounds per workload (default 9, quick 3)")
    ap.add_argument("--side", type=int, default=256, help="B volume edge (default 256)")
    ap.add_argument("--crops", type=int, default=48, help="A: number of 512x512x3 crops")
    ap.add_argument("--dir", type=pathlib.Path, help="where to write the files (default: tmp)")
    ap.add_argument("--out", type=pathlib.Path, help="also write the markdown table here")
    args = ap.parse_args(argv)
    reps = args.reps or (3 if args.quick else 9)
    n_patches = 6 if args.quick else 24
    n_crops = 16 if args.quick else 96
    n_open = 60 if args.quick else 300

    blosc2.set_nthreads(1)
    t_start = time.perf_counter()
    load0 = os.getloadavg()[0]
    base = args.dir or (pathlib.Path("/dev/shm") if os.path.isdir("/dev/shm") else None)
    with tempfile.TemporaryDirectory(prefix="pf_frames_bench_", dir=base) as tmp:
        tmp = pathlib.Path(tmp)
        rng = np.random.default_rng(1234)
        side = args.side
        shape = (1, side, side, side)

        # ---- B: nnU-Net-like case
        img = ct_image(side)
        seg = seg_volume(side)
        ch_i, bl_i, src = nnunet_layout(shape, (128, 128, 128), 4)
        ch_s, bl_s, _ = nnunet_layout(shape, (128, 128, 128), 2)
        f_seg = nnunet_filter(seg, ch_s, bl_s)
        p_img, p_seg = tmp / "case.b2nd", tmp / "case_seg.b2nd"
        cr_i = write(p_img, img, ch_i, bl_i, blosc2.Filter.SHUFFLE)
        cr_s = write(p_seg, seg, ch_s, bl_s, f_seg)
        del img, seg
        psize = tuple(min(128, s) for s in shape[1:])
        boxes = random_boxes(rng, shape, psize, n_patches)
        pf_i, pf_s = box_reader_pf(p_img), box_reader_pf(p_seg)
        b2_i, b2_s = box_reader_b2(p_img), box_reader_b2(p_seg)
        check_equal([pf_i, b2_i], boxes, "B image")
        check_equal([pf_s, b2_s], boxes, "B seg")
        nvox = int(np.prod(psize))
        rows = []
        p = "x".join(map(str, psize))
        rows.append(throughput_row(f"B image {p} float32", "patches/s",
                                   {"patchfeed": [pf_i], "blosc2": [b2_i]}, boxes, 4 * nvox, reps))
        rows.append(throughput_row(f"B seg {p} int16", "patches/s",
                                   {"patchfeed": [pf_s], "blosc2": [b2_s]}, boxes, 2 * nvox, reps))
        rows.append(throughput_row(f"**B patch = image + seg {p}**", "patches/s",
                                   {"patchfeed": [pf_i, pf_s], "blosc2": [b2_i, b2_s]}, boxes,
                                   6 * nvox, reps))
        rows[-1]["goal"] = GOALS["B"]

        # ---- A: one 512x512x3 crop per chunk
        crops = photo_crops(args.crops)
        p_a = tmp / "crops.b2nd"
        cr_a = write(p_a, crops, (1, 512, 512, 3), (1, 64, 512, 3), blosc2.Filter.SHUFFLE)
        a_shape = crops.shape
        del crops
        idx = rng.integers(0, a_shape[0], size=n_crops)
        a_boxes = [([int(i), 0, 0, 0], [int(i) + 1, 512, 512, 3]) for i in idx]
        pf_a, b2_a = box_reader_pf(p_a), box_reader_b2(p_a)
        check_equal([pf_a, b2_a], a_boxes, "A")
        rows.append(throughput_row("**A crop 512x512x3 uint8**", "crops/s",
                                   {"patchfeed": [pf_a], "blosc2": [b2_a]}, a_boxes,
                                   512 * 512 * 3, reps))
        rows[-1]["goal"] = GOALS["A"]

        # ---- open latency
        rows.append(open_latency(p_img, shape, n_open, rng))
        rows[-1]["goal"] = GOALS["open"]

        elapsed = time.perf_counter() - t_start
        header = [
            (
                f"patchfeed {patchfeed.__version__} vs python-blosc2 {blosc2.__version__} "
                f"(c-blosc2 {blosc2.blosclib_version}), one thread, page cache warm "
                f"({tmp.parent}), {platform.processor() or platform.machine()}, "
                f"{os.cpu_count()} CPUs; {'quick, ' if args.quick else ''}{reps} rounds, run "
                f"took {elapsed:.0f} s; load average before/after {load0:.1f}/"
                f"{os.getloadavg()[0]:.1f}."
            ),
            "",
            (
                f"* B: shape {shape}; image float32 chunks {ch_i} blocks {bl_i} [SHUFFLE] "
                f"(ratio {cr_i:.2f}); seg int16 chunks {ch_s} blocks {bl_s} [{f_seg.name}] "
                f"(ratio {cr_s:.2f}); layout from {src}; LZ4HC 5; {n_patches} random patches "
                "per round."
            ),
            (
                f"* A: shape {a_shape} uint8, chunks (1, 512, 512, 3), blocks (1, 64, 512, 3), "
                f"[SHUFFLE] LZ4HC 5 (ratio {cr_a:.2f}); {n_crops} random crops per round."
            ),
            (
                f"* open: {n_open} calls each of open + one random 16^3 box from the B image; "
                "patchfeed.open_array vs blosc2.open(mmap_mode='r')."
            ),
        ]
        text = table(rows, header)
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
