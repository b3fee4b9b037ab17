#!/usr/bin/env python3
# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Cutouts from a local Neuroglancer precomputed layer: patchfeed vs cloud-volume vs tensorstore.

The seed's table (cloud-volume's maintainers measured it: a local `file://` layer, 128x128x64
chunks, raw + gzip; 1 chunk 4.1 ms, 16 chunks 45 ms without threads / 28 ms with), side by side
in one run. Data (written once by cloud-volume into --dir, default /dev/shm): a uint8 image
layer of 1024 x 1024 x 512 voxels (8 x 8 x 8 chunks of 128 x 128 x 64), smooth EM-like values so
gzip does something; and a uint32 compressed_segmentation layer (512^3, 64^3 chunks, 8^3
blocks, a few thousand labels in runs).

Cutouts of 1, 2, 4, ..., 512 chunks, aligned to the chunk grid (the box grows along x, then y,
then z). Readers:
- `pf`: `patchfeed.open_array(layer).read_box`, one thread; `pf x2`: the box split in two
  halves along z, read by two Python threads at once (read_box releases the GIL);
- `cv`: `CloudVolume(file://...)[box]` with parallel=False; `cv par`: parallel=2 (processes);
- `pf raw` and `ts`: patchfeed and tensorstore's neuroglancer_precomputed driver (`read()`, its
  own thread pool) on a copy of the layer written without gzip: tensorstore reads no `.gz`
  chunk files, which cloud-volume writes on local disks.
Each cell: the median wall time of --repeats cutouts (the first, which opens files and fills
caches, not counted), and this process's CPU time per cutout (children included for cv par).
Then random 128^3 patches of the compressed_segmentation layer, read by each reader.

With --delay-ms D the same tables are read over HTTP: the layers without gzip (cloud-volume asks
a web server for chunk names without `.gz`) served by tests/servers/range_http.py behind the
latency proxy (tests/servers/fault_proxy.py: D ms before every response), both in processes of
their own; every reader reads `http://` URLs (tensorstore through its http kvstore), and the
table adds the requests each cutout cost at the proxy.

Usage: PYTHONPATH=build/test/python python3 bench/e2e/precomputed_vs_cloudvolume.py \\
         [--repeats 5] [--max-chunks 512] [--delay-ms 20]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import resource
import statistics
import threading
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
import patchfeed
import tensorstore as ts
from cloudvolume import CloudVolume
from proxy_process import ProxyProcess, RangeServerProcess

CHUNK = (128, 128, 64)
GRID = (8, 8, 8)
SEG_SIZE = (512, 512, 512)
SEG_CHUNK = (64, 64, 64)


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def write_image(path: pathlib.Path, compress) -> None:
    size = tuple(c * g for c, g in zip(CHUNK, GRID))
    info = CloudVolume.create_new_info(
        num_channels=1, layer_type="image", data_type="uint8", encoding="raw",
        resolution=[4, 4, 40], voxel_offset=[0, 0, 0], chunk_size=list(CHUNK),
        volume_size=list(size))
    vol = CloudVolume(f"file://{path}", info=info, compress=compress, progress=False)
    vol.commit_info()
    rng = np.random.default_rng(0)
    x = np.arange(size[0], dtype=np.float32)[:, None]
    y = np.arange(size[1], dtype=np.float32)[None, :]
    for z0 in range(0, size[2], CHUNK[2]):
        slab = np.empty(size[:2] + (CHUNK[2],), np.uint8)
        for k in range(CHUNK[2]):
            z = z0 + k
            smooth = 100 + 60 * np.sin(x / 37.0 + z / 23.0) * np.cos(y / 29.0)
            slab[:, :, k] = np.clip(smooth + rng.normal(0, 12, size[:2]), 0, 255).astype(np.uint8)
        vol[:, :, z0:z0 + CHUNK[2]] = slab


def write_segmentation(path: pathlib.Path, compress=None) -> None:
    info = CloudVolume.create_new_info(
        num_channels=1, layer_type="segmentation", data_type="uint32",
        encoding="compressed_segmentation", resolution=[8, 8, 40], voxel_offset=[0, 0, 0],
        chunk_size=list(SEG_CHUNK), volume_size=list(SEG_SIZE),
        compressed_segmentation_block_size=[8, 8, 8])
    vol = CloudVolume(f"file://{path}", info=info, progress=False, compress=compress)
    vol.commit_info()
    rng = np.random.default_rng(1)
    # Cells: labels of a coarse random grid, upsampled: runs of one label, ~4000 ids.
    coarse = rng.integers(1, 4000, size=tuple(s // 16 for s in SEG_SIZE)).astype(np.uint32)
    seg = coarse.repeat(16, 0).repeat(16, 1).repeat(16, 2)
    vol[:, :, :] = seg


def cutout_shapes(max_chunks: int):
    """(n chunks, box size in voxels x, y, z), growing x, then y, then z."""
    counts = [1, 1, 1]
    n = 1
    axis = 0
    while n <= max_chunks:
        yield n, tuple(c * k for c, k in zip(CHUNK, counts))
        counts[axis] *= 2
        n *= 2
        axis = (axis + 1) % 3


def measure(read, repeats: int) -> tuple[float, float]:
    read()  # opens files, fills caches
    walls = []
    cpu0 = cpu_seconds()
    for _ in range(repeats):
        t0 = time.perf_counter()
        read()
        walls.append(time.perf_counter() - t0)
    return statistics.median(walls) * 1e3, (cpu_seconds() - cpu0) / repeats * 1e3


def readers(layer: pathlib.Path | str, raw_layer: pathlib.Path | str, remote: bool = False):
    """Each reader of `layer`; "pf raw" and "ts" read `raw_layer`, its copy without gzip
    (tensorstore reads no `.gz` chunk files, which cloud-volume writes on local disks). Remote:
    both are the same `http://` URL, and "pf raw" is left out (it is "pf")."""
    arr = patchfeed.open_array(str(layer))
    raw = patchfeed.open_array(str(raw_layer))
    url = str(layer) if remote else f"file://{layer}"
    cv = CloudVolume(url, progress=False, parallel=False, fill_missing=True)
    cv_par = CloudVolume(url, progress=False, parallel=2, fill_missing=True)
    kvstore = ({"driver": "http", "base_url": str(raw_layer)} if remote
               else f"file://{raw_layer}")
    store = ts.open({"driver": "neuroglancer_precomputed", "kvstore": kvstore,
                     "context": {"cache_pool": {"total_bytes_limit": 0}}}).result()

    def pf(start, size, a=arr):  # start and size x, y, z; patchfeed's view is (c, z, y, x)
        return a.read_box([0, start[2], start[1], start[0]],
                          [1, start[2] + size[2], start[1] + size[1], start[0] + size[0]])

    def pf2(start, size):
        half = size[2] // 2 if size[2] > 1 else 0
        parts = [(start, (size[0], size[1], half)),
                 ((start[0], start[1], start[2] + half), (size[0], size[1], size[2] - half))]
        out = [None, None]

        def run(i):
            s, z = parts[i]
            if z[2] > 0:
                out[i] = pf(s, z)
        threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return out

    def box(start, size):
        return tuple(slice(a, a + n) for a, n in zip(start, size))

    fns = {
        "pf": pf,
        "pf x2": pf2,
        "cv": lambda start, size: cv[box(start, size)],
        "cv par": lambda start, size: cv_par[box(start, size)],
        "pf raw": lambda start, size: pf(start, size, raw),
        "ts": lambda start, size: store[box(start, size)].read().result(),
    }
    if remote:
        del fns["pf raw"]
    return fns


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dir", default="/dev/shm/patchfeed_precomputed_bench")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--max-chunks", type=int, default=512)
    p.add_argument("--patches", type=int, default=20)
    p.add_argument("--delay-ms", type=float, default=None,
                   help="read over HTTP through the latency proxy, this many ms per response")
    args = p.parse_args()
    root = pathlib.Path(args.dir)
    image, image_raw = root / "image", root / "image_raw"
    seg, seg_raw = root / "seg", root / "seg_raw"
    t0 = time.perf_counter()
    if not (image / "info").exists():
        write_image(image, "gzip")
    if not (image_raw / "info").exists():
        write_image(image_raw, False)
    if not (seg / "info").exists():
        write_segmentation(seg)
    if args.delay_ms is not None and not (seg_raw / "info").exists():
        write_segmentation(seg_raw, False)
    print(f"# data ready in {time.perf_counter() - t0:.0f} s; {os.cpu_count()} cores; "
          f"median of {args.repeats} cutouts after one untimed")
    if args.delay_ms is None:
        tables(readers(image, image_raw), readers(seg, seg), args)
        return
    server = RangeServerProcess(root)
    proxy = ProxyProcess(server.url)
    try:
        proxy.set_delay(args.delay_ms / 1e3)
        print(f"# over HTTP, +{args.delay_ms:g} ms per response (latency proxy)")
        base = proxy.url
        tables(readers(f"{base}/image_raw", f"{base}/image_raw", remote=True),
               readers(f"{base}/seg_raw", f"{base}/seg_raw", remote=True), args, proxy)
    finally:
        proxy.stop()
        server.stop()


def tables(fns, seg_fns, args, proxy: ProxyProcess | None = None) -> None:
    """The cutout table with `fns`, then the compressed_segmentation patches with `seg_fns`;
    with `proxy`, the requests per cutout it saw for each reader."""
    # Every reader returns the same voxels (checked once, on a 2-chunk cutout off the origin).
    start, size = (128, 256, 64), (256, 128, 64)
    want = np.asarray(fns["cv"](start, size))[..., 0].transpose(2, 1, 0)
    assert np.array_equal(fns["pf"](start, size)[0], want)
    assert np.array_equal(np.asarray(fns["ts"](start, size))[..., 0].transpose(2, 1, 0), want)
    names = list(fns)
    requests = {}

    def measured(name, read):
        if proxy is not None:
            proxy.reset_stats()
        row = measure(read, args.repeats)
        if proxy is not None:
            requests[name] = proxy.stats()["total_requests"] / (args.repeats + 1)
        return row

    extra = " | requests per cutout (" + ", ".join(names) + ")" if proxy else ""
    print("| chunks | box (x, y, z) | " + " | ".join(f"{n} ms" for n in names) +
          " | " + " | ".join(f"{n} CPU ms" for n in names) + " | cv best / pf | ts / pf |" +
          (" ts CPU / pf CPU |" if proxy else " ts CPU / pf raw CPU |") + extra)
    print("|---" * (3 + 2 * len(names) + 2 + (1 if proxy else 0)) + "|")
    for n, size in cutout_shapes(args.max_chunks):
        origin = (0, 0, 0)
        rows = {name: measured(name, lambda f=f: f(origin, size)) for name, f in fns.items()}
        walls = " | ".join(f"{rows[k][0]:.1f}" for k in names)
        cpus = " | ".join(f"{rows[k][1]:.1f}" for k in names)
        cv_best = min(rows["cv"][0], rows["cv par"][0])
        pf_cpu = rows["pf"][1] if proxy else rows["pf raw"][1]
        counts = (" | " + ", ".join(f"{requests[k]:.0f}" for k in names) + " |") if proxy else ""
        print(f"| {n} | {size} | {walls} | {cpus} | {cv_best / rows['pf'][0]:.2f}x | "
              f"{rows['ts'][0] / rows['pf'][0]:.2f}x | {rows['ts'][1] / pf_cpu:.2f}x |" + counts,
              flush=True)

    # Random 128^3 patches of the compressed_segmentation layer.
    rng = np.random.default_rng(3)
    starts = [tuple(int(rng.integers(0, s - 128)) for s in SEG_SIZE) for _ in range(args.patches)]
    want = np.asarray(seg_fns["cv"](starts[0], (128,) * 3))[..., 0].transpose(2, 1, 0)
    assert np.array_equal(seg_fns["pf"](starts[0], (128,) * 3)[0], want)
    names = list(seg_fns)
    print()
    print("| compressed_segmentation, random 128^3 | " + " | ".join(f"{n} ms" for n in names) +
          " | " + " | ".join(f"{n} CPU ms" for n in names) + " |")
    print("|---" * (1 + 2 * len(names)) + "|")
    rows = {}
    for name, f in seg_fns.items():
        f(starts[0], (128,) * 3)
        walls = []
        cpu0 = cpu_seconds()
        for s in starts:
            t = time.perf_counter()
            f(s, (128,) * 3)
            walls.append(time.perf_counter() - t)
        rows[name] = (statistics.median(walls) * 1e3, (cpu_seconds() - cpu0) / len(starts) * 1e3)
    print(f"| {args.patches} patches | " + " | ".join(f"{rows[k][0]:.1f}" for k in names) +
          " | " + " | ".join(f"{rows[k][1]:.1f}" for k in names) + " |")


if __name__ == "__main__":
    main()
