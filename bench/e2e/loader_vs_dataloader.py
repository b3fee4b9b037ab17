#!/usr/bin/env python3
# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""patchfeed.Loader vs torch DataLoader vs python-blosc2 threads, as a training loop sees them.

Workload B of loader_vs_blosc2.py (same generator: nnU-Net-like cases (1, 160, 160, 160),
float32 image + int16 seg, LZ4HC 5 + SHUFFLE, nnU-Net 2.8's chunks/blocks), random 128^3
patches, batch 2. Every side reads the same boxes: side (a) draws them (patchfeed's sampler,
no oversampling, boxes inside the case) and the others replay that list.

  (a) patchfeed.Loader, torch tensors from the ring (zero-copy), num_threads = cores;
      patchfeed_lean: the same with io_mode='pread' and ring_size=2 (less RSS)
  (b) torch.utils.data.DataLoader(num_workers = cores, pin_memory=True, batch_size=2) over a
      Dataset that reads each box with python-blosc2 (files opened once per worker)
  (c) python-blosc2 in a ThreadPoolExecutor of `cores` threads, batches stacked with NumPy

The consumer is a training-loop stand-in: it takes a batch, touches every voxel once
(a NumPy max, as a host-to-device copy reads it) and drops it. Each side runs in a fresh
process; a monitor thread samples the CPU time and RSS of that process and all its children
(DataLoader workers included) from /proc. Reported: samples/s, CPU seconds per sample,
samples per CPU-second (the monitor thread's own CPU time left out), and peak RSS summed over
the processes (and PSS, which counts shared pages once). Sides alternate, round after round (the 2 cores are shared); best round kept.

  python3 bench/e2e/loader_vs_dataloader.py [--quick]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PATCH, BATCH = (128, 128, 128), 2
SIDES = ("patchfeed", "patchfeed_lean", "dataloader", "blosc2_threads")


# ---- measuring a process tree --------------------------------------------------------------

def _tree(pid: int) -> list[int]:
    pids, frontier = [pid], [pid]
    while frontier:
        p = frontier.pop()
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                kids = [int(k) for k in f.read().split()]
        except OSError:
            kids = []
        pids += kids
        frontier += kids
    return pids


def _cpu_seconds(pids) -> float:
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (all threads)
        except OSError:
            pass
    return total / tick


_PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024  # statm counts pages


def _memory_mb(pids, pss=True) -> tuple[float, float]:
    """RSS and PSS (MB) summed over `pids`. PSS needs smaps_rollup, which walks every page
    table of the process (4.4 ms of CPU per read at 1.1 GB here); without it RSS comes from statm,
    the kernel's counter, and PSS is reported as 0."""
    rss = pss_kb = 0
    for p in pids:
        try:
            if not pss:
                with open(f"/proc/{p}/statm") as f:
                    rss += int(f.read().split()[1]) * _PAGE_KB
                continue
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss_kb += int(line.split()[1])
        except OSError:
            pass
    return rss / 1024, pss_kb / 1024


class TreeMonitor:
    """Peak RSS/PSS of this process and its descendants, sampled every 20 ms. With `pss`
    False only RSS is sampled: the page-table walks PSS takes cost a fifth of a core at 20 ms
    for a 1 GB process, which on a 2-core machine slows the side being measured."""

    def __init__(self, pss=True):
        self.pss = pss
        self.peak_rss = self.peak_pss = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        self.tid = threading.get_native_id()
        while not self._stop.is_set():
            rss, pss = _memory_mb(_tree(os.getpid()), self.pss)
            self.peak_rss, self.peak_pss = max(self.peak_rss, rss), max(self.peak_pss, pss)
            self._stop.wait(0.02)

    def stop(self):
        self._stop.set()
        self._thread.join()

    def own_cpu_seconds(self) -> float:
        """CPU time of the monitor thread itself (reading /proc/*/smaps is not cheap), which
        timed() leaves out of the side's CPU time."""
        while not hasattr(self, "tid"):
            time.sleep(0.001)
        try:
            with open(f"/proc/self/task/{self.tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# ---- the three sides (each runs in its own process) ----------------------------------------

def consume(batch) -> float:
    # Touch every voxel once, as a host-to-device copy would; the value is discarded. The same
    # NumPy reduction on every side (a CPU tensor converts without a copy), so the consumer
    # costs the same everywhere.
    import numpy as np
    return float(np.asarray(batch["image"]).max()) + float(np.asarray(batch["seg"]).max())


def boxes_path(root):
    return os.path.join(root, "boxes.json")


def side_patchfeed(folder, threads, steps, warmup, root, lean=False):
    import patchfeed
    import torch  # noqa: F401  (a training loop has it loaded anyway)

    # lean: pread instead of mmap (the compressed file pages are not mapped into the
    # process, so they do not count in its RSS) and the smallest ring that still overlaps
    # reading with consuming (one slot held by the consumer, one being read). Same boxes.
    extra = {"io_mode": "pread", "ring_size": 2} if lean else {}
    loader = patchfeed.Loader(folder, PATCH, BATCH, num_threads=threads, seed=0,
                              oversample_foreground=0.0, pin_memory=None, **extra)
    it = iter(loader)
    boxes = []

    def step():
        b = next(it)
        boxes.extend((s.case_index, list(s.box_start)) for s in loader.last_batch.samples)
        consume(b)

    result = timed(step, steps, warmup)
    if not lean:
        with open(boxes_path(root), "w") as f:
            json.dump(boxes, f)
    loader.close()
    return result


def _read_box(arrays, box):
    case, start = box
    sl = (slice(None),) + tuple(slice(s, s + p) for s, p in zip(start, PATCH))
    return [a[sl] for a in arrays[case]]


class Blosc2Boxes:
    """A map-style dataset: item i is box i of the list, read with python-blosc2."""

    def __init__(self, folder, boxes):
        self.folder, self.boxes, self.arrays = folder, boxes, None

    def _open(self):
        import blosc2
        blosc2.set_nthreads(1)  # parallelism is the workers'
        names = sorted(f for f in os.listdir(self.folder)
                       if f.endswith(".b2nd") and not f.endswith("_seg.b2nd"))
        self.arrays = [[blosc2.open(os.path.join(self.folder, n), mmap_mode="r"),
                        blosc2.open(os.path.join(self.folder, n[:-5] + "_seg.b2nd"),
                                    mmap_mode="r")] for n in names]

    def __len__(self):
        return len(self.boxes)

    def __getitem__(self, i):
        import torch
        if self.arrays is None:
            self._open()
        img, seg = _read_box(self.arrays, self.boxes[i])
        return {"image": torch.from_numpy(img), "seg": torch.from_numpy(seg)}


def side_dataloader(folder, threads, steps, warmup, root):
    import torch
    from torch.utils.data import DataLoader

    with open(boxes_path(root)) as f:
        boxes = json.load(f)
    ds = Blosc2Boxes(folder, boxes)
    dl = DataLoader(ds, batch_size=BATCH, shuffle=False, num_workers=threads, pin_memory=True,
                    persistent_workers=False, prefetch_factor=2)
    it = iter(dl)
    del torch
    return timed(lambda: consume(next(it)), steps, warmup)


def side_blosc2_threads(folder, threads, steps, warmup, root):
    import collections
    import concurrent.futures as cf

    import numpy as np

    with open(boxes_path(root)) as f:
        boxes = json.load(f)
    ds = Blosc2Boxes(folder, boxes)
    ds._open()
    pool = cf.ThreadPoolExecutor(threads)
    # Read ahead like the others: two batches per thread in flight, in box order.
    ahead = collections.deque()
    nxt = [0]

    def fill():
        while len(ahead) < 2 * threads * BATCH and nxt[0] < len(boxes):
            ahead.append(pool.submit(_read_box, ds.arrays, boxes[nxt[0]]))
            nxt[0] += 1

    def step():
        fill()
        samples = [ahead.popleft().result() for _ in range(BATCH)]
        fill()
        consume({"image": np.stack([s[0] for s in samples]),
                 "seg": np.stack([s[1] for s in samples])})

    result = timed(step, steps, warmup)
    pool.shutdown(cancel_futures=True)
    return result


def timed(step, steps, warmup, pss=True):
    mon = TreeMonitor(pss)
    for _ in range(warmup):
        step()
    pids = _tree(os.getpid())
    m0 = mon.own_cpu_seconds()
    c0, t0 = _cpu_seconds(pids), time.perf_counter()
    for _ in range(steps):
        step()
    wall = time.perf_counter() - t0
    cpu = _cpu_seconds(_tree(os.getpid())) - c0 - (mon.own_cpu_seconds() - m0)
    mon.stop()
    samples = steps * BATCH
    return {"samples_per_s": samples / wall, "cpu_s_per_sample": cpu / samples,
            "samples_per_cpu_s": samples / cpu, "peak_rss_mb": mon.peak_rss,
            "peak_pss_mb": mon.peak_pss, "wall_s": wall, "cpu_s": cpu}


# ---- driver ----------------------------------------------------------------------------------

def run_side(side, args, folder):
    cmd = [sys.executable, os.path.abspath(__file__), "--side", side, "--folder", folder,
           "--root", args.root, "--threads", str(args.threads), "--steps", str(args.steps),
           "--warmup", str(args.warmup)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default="/dev/shm/patchfeed_loader_vs_dataloader")
    ap.add_argument("--quick", action="store_true", help="4 cases, 20 batches, 2 rounds")
    ap.add_argument("--cases", type=int, default=8)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--side", choices=SIDES)
    ap.add_argument("--folder")
    args = ap.parse_args()

    if args.side:
        fn = {"patchfeed": side_patchfeed,
              "patchfeed_lean": lambda *a: side_patchfeed(*a, lean=True),
              "dataloader": side_dataloader,
              "blosc2_threads": side_blosc2_threads}[args.side]
        print(json.dumps(fn(args.folder, args.threads, args.steps, args.warmup, args.root)))
        return

    if args.quick:
        args.cases, args.steps, args.rounds = 4, 20, 2
    sys.path.insert(0, HERE)
    from loader_vs_blosc2 import write_datasets
    _, folder = write_datasets(args.root, 0, args.cases)
    best = {}
    for r in range(args.rounds):
        for side in SIDES:  # patchfeed first: it writes the box list the others replay
            res = run_side(side, args, folder)
            print(f"round {r} {side:15s} {res['samples_per_s']:7.2f} samples/s "
                  f"{res['cpu_s_per_sample']:.3f} CPU s/sample "
                  f"{res['samples_per_cpu_s']:6.2f} samples/CPU-s "
                  f"RSS {res['peak_rss_mb']:7.0f} MB PSS {res['peak_pss_mb']:7.0f} MB",
                  flush=True)
            if side not in best or res["samples_per_s"] > best[side]["samples_per_s"]:
                best[side] = res
    print(f"\nbest of {args.rounds} rounds, {args.cases} cases, {args.steps} batches of "
          f"{BATCH} x 128^3, {args.threads} threads/workers:")
    print("| side | samples/s | CPU s/sample | samples per CPU-s | peak RSS (MB) | peak PSS (MB) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for side in SIDES:
        b = best[side]
        print(f"| {side} | {b['samples_per_s']:.2f} | {b['cpu_s_per_sample']:.3f} | "
              f"{b['samples_per_cpu_s']:.2f} | {b['peak_rss_mb']:.0f} | {b['peak_pss_mb']:.0f} |")
    d = best["dataloader"]
    for name in ("patchfeed", "patchfeed_lean"):
        a = best[name]
        print(f"{name} / DataLoader: {a['samples_per_cpu_s'] / d['samples_per_cpu_s']:.2f}x "
              f"samples per CPU-second, {a['samples_per_s'] / d['samples_per_s']:.2f}x "
              f"samples/s, RSS {a['peak_rss_mb'] / d['peak_rss_mb']:.2f}x, PSS "
              f"{a['peak_pss_mb'] / d['peak_pss_mb']:.2f}x")
    print(json.dumps(best))


if __name__ == "__main__":
    main()
