#!/usr/bin/env python3
# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""patchfeed's Loader vs python-blosc2 reading random 128^3 patches over a network-like file
system (issue 15): tests/fuse/latency_fs.cc mounted over nnU-Net-like cases (workload B of
loader_vs_blosc2.py: float32 image + int16 seg, 160^3, LZ4HC 5 + SHUFFLE, batch 2), with a delay
per read request (--delays, in ms), direct_io (no page cache) and an optional bandwidth cap.

For each delay it measures samples/s and CPU seconds per sample (user + system of every process
that reads) of: patchfeed sync pread (2 threads), patchfeed with io_depth reads in flight
(io_uring and a pread pool), python-blosc2 with 2/8/32
threads and 2/8/32 processes (blosc2.open(...)[slices], without mmap: direct_io files refuse
shared mappings); and, as the CPU-per-sample reference, patchfeed on the local files, warm (mmap
and pread). Rows also give the bed's read requests per sample and the most in flight at once.

python-blosc2 4.14.1 holds the GIL while it reads a slice (get_slice_numpy in blosc2_ext.pyx), so
its threads rows never have more than one read in flight; its processes rows do overlap. The CPU
of the FUSE daemon (the "server") is not counted. Rounds alternate the configurations (the cores
are shared); the table shows medians. `--configs pf,b2-procs` skips the slow threads rows.

  PATCHFEED_BUILD_DIR=$PWD/build/rel PYTHONPATH=build/rel/python \\
      python3 bench/e2e/loader_on_fuse.py --delays 1,5 --samples 8 --rounds 2 --keep-dataset
"""
import argparse
import concurrent.futures as cf
import contextlib
import multiprocessing as mp
import os
import shutil
import statistics
import sys
import time

import patchfeed  # before loader_vs_blosc2, which puts build/lbench/python first on sys.path
import pytest  # fuse_bed reports "FUSE not available" as pytest's skip exception

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "python"))
import loader_vs_blosc2 as lvb  # noqa: E402
from fuse_bed import mounted, read_stats, reset_stats  # noqa: E402

SHAPE_TAG = "B 160^3 lz4hc5 v1"  # written into the cache marker: change when the data changes
WARMUP_BATCHES = 4  # > ring_size (3): the timed batches are read after the ring first drains


def cpu_now():
    return time.process_time()  # user + system of all this process's threads, precise


# ---- patchfeed -----------------------------------------------------------------------------

def patchfeed_configs(io_depth):
    """name -> Loader keywords. pf-sync is io_depth=0: one pread at a time inside each decode
    task, as before issue 15; pf-uring / pf-pool fetch a batch's bytes ahead, io_depth at once.
    The local rows are the CPU reference (pf-local-mmap: the default, warm page cache)."""
    configs = {"pf-local-mmap": {"io_mode": "mmap"},
               "pf-local-pread": {"io_mode": "pread", "io_depth": 0},
               "pf-local-uring": {"io_mode": "pread", "io_depth": io_depth,
                                  "io_backend": "io_uring"},
               "pf-sync": {"io_mode": "pread", "io_depth": 0},
               "pf-uring": {"io_mode": "pread", "io_depth": io_depth, "io_backend": "io_uring"},
               "pf-pool": {"io_mode": "pread", "io_depth": io_depth, "io_backend": "pread"}}
    return configs


class Window:
    """Wall and CPU time between start() and stop(), and the bed's counters over it."""

    def __init__(self, mnt=None):
        self.mnt, self.bed = mnt, {}

    def start(self):
        if self.mnt is not None:
            reset_stats(self.mnt)
        self.t0, self.c0 = time.perf_counter(), cpu_now()

    def stop(self, extra_cpu=0.0):
        self.seconds = time.perf_counter() - self.t0
        self.cpu = cpu_now() - self.c0 + extra_cpu
        if self.mnt is not None:
            self.bed = read_stats(self.mnt)


def run_patchfeed(folder, samples, seed, window, threads, options):
    """Reads samples // 2 batches after a warm-up; returns the loader's io metrics."""
    with patchfeed.Loader(folder, lvb.B_PATCH, lvb.B_BATCH, num_threads=threads,
                          consumer_produces=False,  # exactly `threads` readers, as blosc2's
                          foreground="off", oversample_foreground=0, foreground_cache_dir="",
                          as_numpy=True, seed=seed, **options) as loader:
        for _ in range(WARMUP_BATCHES):
            loader.next_batch()
        batches = max(1, samples // lvb.B_BATCH)
        window.start()
        for _ in range(batches):
            loader.next_batch()
        window.stop()
        m = loader.metrics()
    return batches * lvb.B_BATCH, {k: v for k, v in m.items()
                                   if k == "io_backend" or "in_flight" in k}


# ---- python-blosc2 (read_samples from loader_vs_blosc2.py) ----------------------------------
# One task per sample, at least one per worker (every worker has a read in flight).

def run_blosc2_threads(folder, samples, seed, window, workers):
    lvb.read_samples("B", folder, 1, seed + 999, None)  # opens the files, untimed
    n = max(samples, workers)
    window.start()
    with cf.ThreadPoolExecutor(workers) as ex:
        list(ex.map(lambda i: lvb.read_samples("B", folder, 1, seed * 1000 + i, None),
                    range(n)))
    window.stop()
    lvb._open.clear()  # no file of this mount stays open past its unmount
    return n, {}


def _worker_open(folder, barrier):
    lvb._open.clear()  # forked: open this worker's own files, share nothing with the parent
    lvb._arrays("B", folder, None)
    barrier.wait()


def _worker_read(folder, seed):
    c0 = time.process_time()
    lvb.read_samples("B", folder, 1, seed, None)
    return time.process_time() - c0


def run_blosc2_processes(folder, samples, seed, window, workers):
    n, ctx = max(samples, workers), mp.get_context("fork")
    barrier = ctx.Barrier(workers + 1)
    with ctx.Pool(workers, _worker_open, (folder, barrier)) as pool:
        barrier.wait()  # every worker has opened the files
        window.start()
        cpu = pool.starmap(_worker_read, [(folder, seed * 1000 + i) for i in range(n)],
                           chunksize=1)
        window.stop(extra_cpu=sum(cpu))  # the workers' CPU, as they measured it
    return n, {}


def all_configs(io_depth):
    """name -> (runner(folder, samples, seed, window) -> (samples, info), local?)."""
    out = {}
    for name, opts in patchfeed_configs(io_depth).items():
        out[name] = (lambda *a, o=opts: run_patchfeed(*a, 2, o)), "local" in name
    for w in (2, 8, 32):
        out[f"b2-threads-{w}"] = (lambda *a, w=w: run_blosc2_threads(*a, w)), False
        out[f"b2-procs-{w}"] = (lambda *a, w=w: run_blosc2_processes(*a, w)), False
    return out


# ---- dataset, measurement, report -----------------------------------------------------------

def dataset(root, cases, keep_old):
    folder, marker = os.path.join(root, "B"), os.path.join(root, "ready")
    tag = f"{SHAPE_TAG}, {cases} cases"
    if keep_old and os.path.exists(marker) and open(marker).read() == tag:
        return folder
    print(f"writing {cases} cases to {folder} ...", file=sys.stderr)
    lvb.write_datasets(root, 0, cases)
    with open(marker, "w") as f:
        f.write(tag)
    return folder


def measure(name, runner, folder, args, seed, failed, mnt=None):
    """One run of one config; None (the error kept in `failed`) if it raised, e.g. a backend
    this kernel or sandbox refuses."""
    window = Window(mnt)
    try:
        n, info = runner(folder, args.samples, seed, window)
    except Exception as e:  # noqa: BLE001 (reported under the table)
        failed[name] = f"{type(e).__name__}: {e}"
        print(f"  {name}: FAILED {failed[name]}", file=sys.stderr)
        return None
    row = {"rate": n / window.seconds, "cpu": window.cpu / n, **info}
    if window.bed:
        row.update(bed_requests=window.bed["requests"] / n,
                   bed_mb=window.bed["bytes"] / n / 1e6, bed_in_flight=window.bed["max_in_flight"])
    print(f"  {name}: {n} samples, {row}", file=sys.stderr)
    return row


def median_row(runs):
    runs = [r for r in runs if r is not None]
    if not runs:
        return None
    row = dict(runs[-1])  # loader metrics: the last run's
    row.update({k: statistics.median(r[k] for r in runs)
                for k in ("rate", "cpu", "bed_requests", "bed_mb") if k in row})
    if "bed_in_flight" in row:
        row["bed_in_flight"] = max(r["bed_in_flight"] for r in runs)
    return row


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def report(results, delays):
    ref_cpu = results.get(("pf-local-mmap", "local"), {}).get("cpu")
    print("| config | latency | samples/s | CPU ms/sample | CPU / local mmap | x pf-sync | "
          "x best blosc2 | bed req/sample | bed MB/sample | bed max in flight | loader |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for lat in ["local"] + [f"{d:g} ms" for d in delays]:
        rows = {name: r for (name, l), r in results.items() if l == lat and r}
        sync = rows.get("pf-sync", {}).get("rate")
        best_b2 = max((r["rate"] for n, r in rows.items() if n.startswith("b2-")), default=None)
        for name, r in rows.items():
            loader = ", ".join(f"{k}={v}" for k, v in r.items()
                               if k == "io_backend" or "in_flight" in k and k != "bed_in_flight")
            print(f"| {name} | {lat} | {r['rate']:.2f} | {r['cpu'] * 1e3:.1f} | "
                  f"{fmt(ref_cpu and r['cpu'] / ref_cpu, '.2f')} | "
                  f"{fmt(sync and r['rate'] / sync, '.2f')} | "
                  f"{fmt(best_b2 and r['rate'] / best_b2, '.2f')} | "
                  f"{fmt(r.get('bed_requests'), '.0f')} | {fmt(r.get('bed_mb'), '.1f')} | "
                  f"{fmt(r.get('bed_in_flight'), 'd')} | {loader or '-'} |")
    print("\nGoals (issue 15): pf-uring >= 5x pf-sync at 5 ms; >= the best blosc2 row on 2 "
          "cores; CPU per sample <= 1.2x the warm local read (pf-local-mmap).")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--delays", default="1,5", help="per-request delays in ms (default 1,5)")
    ap.add_argument("--samples", type=int, default=8,
                    help="timed samples per config and round (blosc2: at least one per worker)")
    ap.add_argument("--rounds", type=int, default=2, help="rounds; the table shows medians")
    ap.add_argument("--configs", default="",
                    help="comma-separated names or prefixes (pf-sync, pf-local, b2-procs, ...)")
    ap.add_argument("--cases", type=int, default=8, help="cases in the dataset")
    ap.add_argument("--root", default="/var/tmp/patchfeed_fuse_bench", help="dataset folder")
    ap.add_argument("--keep-dataset", action="store_true",
                    help="reuse a matching dataset under --root and leave it there afterwards")
    ap.add_argument("--bandwidth-mbps", type=float, default=0, help="link cap, 0 = none")
    ap.add_argument("--max-read", type=int, default=128 * 1024, help="largest read request")
    ap.add_argument("--io-depth", type=int, default=64, help="reads in flight for async rows")
    args = ap.parse_args()
    delays = [float(d) for d in args.delays.split(",") if d]
    wanted = [c for c in args.configs.split(",") if c]
    configs = {n: c for n, c in all_configs(args.io_depth).items()
               if not wanted or any(n.startswith(w) for w in wanted)}

    folder = dataset(args.root, args.cases, args.keep_dataset)
    runs, failed, skipped = {}, {}, None
    try:
        for rnd in range(args.rounds):
            order = list(configs)[rnd % len(configs):] + list(configs)[:rnd % len(configs)]
            print(f"round {rnd}, local", file=sys.stderr)
            for name in (n for n in order if configs[n][1]):
                runs.setdefault((name, "local"), []).append(
                    measure(name, configs[name][0], folder, args, rnd, failed))
            for d in ([] if skipped else delays):
                try:
                    with mounted(folder, delay_us=d * 1000, bandwidth_mbps=args.bandwidth_mbps,
                                 max_read=args.max_read) as mnt:
                        print(f"round {rnd}, {d:g} ms", file=sys.stderr)
                        for name in (n for n in order if not configs[n][1]):
                            runs.setdefault((name, f"{d:g} ms"), []).append(
                                measure(name, configs[name][0], str(mnt), args, rnd, failed, mnt))
                except pytest.skip.Exception as e:
                    skipped = str(e)
                    break
    finally:
        if not args.keep_dataset:  # what write_datasets made, not the rest of --root
            for name in ("A", "B"):
                shutil.rmtree(os.path.join(args.root, name), ignore_errors=True)
            os.remove(os.path.join(args.root, "ready"))
            with contextlib.suppress(OSError):
                os.rmdir(args.root)
    if skipped:
        print(f"SKIPPED the FUSE rows: {skipped}\n")
    report({k: median_row(v) for k, v in runs.items()}, [] if skipped else delays)
    for name, error in failed.items():
        print(f"FAILED {name} (last error): {error}")


if __name__ == "__main__":
    main()
