#!/usr/bin/env python3
# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Random 128^3 patches over S3 with a slow link: patchfeed vs tensorstore vs zarr-python 3.

One run starts SeaweedFS's S3 gateway (tests/servers/seaweed.py) and, in a process of its own,
the latency proxy in front of it (tests/servers/fault_proxy.py), then uploads (data written once
into --dir, default /dev/shm/patchfeed_s3_bench):
- `b2nd`: 4 nnU-Net-like cases, image (1, 160, 192, 160) float32 and its `_seg` int16, written
  by python-blosc2 as nnU-Net writes them (LZ4HC 5 + shuffle, nnU-Net's chunk and block shapes
  for a 128^3 patch);
- `v2`: zarr v2, (1, 256, 384, 384) uint16, chunks 64^3, numcodecs Blosc lz4 + shuffle;
- `v3`: zarr v3, same array, shards 128^3 of inner chunks 64^3, zstd (zarr 3's default).

Then for each proxy delay (--delays, ms added before every response) it reads random 128^3
patches with each reader; every reader of an array gets the same boxes: those the patchfeed
Loader draws with its seed (a batch depends only on the seed and its index, so a local Loader
draws them first, and the remote one is checked to draw the same). Each reader's first patch
is asserted equal to the local array before it is timed. Readers:
- `pf Loader`: `patchfeed.Loader` (batch 2, plain reads, the image array alone), over the
  `.b2nd` folder URL or a `Dataset.from_list` with the zarr array as its one case; 2 threads,
  8 threads, and 16 threads with 16 slots and `consumer_produces=False`;
- `pf read_box`: `patchfeed.open_array(url).read_box`, one patch at a time (x4: four Python
  threads calling it);
- `ts`: tensorstore's zarr/zarr3 driver on its `s3` kvstore, `read()` futures with 1 or 4
  patches in flight, its default request concurrency (32) or --ts-concurrency;
- `zarr s3fs` / `zarr obstore`: zarr-python 3 `open_array` over fsspec's s3fs / an obstore
  S3Store, one patch at a time (zarr's own async concurrency at its default);
- `pf Loader, 2 threads, cache: ...`: the loader with `cache_dir` (a fresh folder), a first
  epoch that fills it and the same boxes again, and `... local files`: the same loader over
  the local copy (left out of the best-row table).

Per reader: samples/s (wall), this process's CPU per sample (all threads; the proxy and the
server are other processes), the `weed` server's and the proxy's CPU per sample (from
/proc/<pid>/stat; they share the same cores), and from the proxy: requests per sample,
response bytes per sample and the most requests in flight at once. A measurement stops after
--samples patches or --max-seconds, whichever comes first (the `samples` column says how many).
The loader reads ahead: its samples/s window opens after a ring's worth of warm-up batches and
lasts at least two rings' worth of samples (so the 16-slot row reads further into the same
sequence of boxes), and its CPU, requests and bytes come from a second window that starts and
ends with no batch in production (measure_loader). "pf Loader / this" is the first loader row's samples/s over the
row's; a last table puts each library's best row side by side.

Usage: PYTHONPATH=build/test/python python3 bench/e2e/object_store_vs_tensorstore.py \\
         [--delays 0,5,20] [--samples 24] [--max-seconds 15]
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import os
import pathlib
import sys
import tempfile
import time

# NumPy's OpenBLAS threads spin while idle and count as this process's CPU time.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import blosc2
import numcodecs
import numpy as np
import obstore.store
import patchfeed
import tensorstore as ts
import zarr
import zarr.storage
from patchfeed import _core
from proxy_process import ProxyProcess, cpu_seconds
from zarr.codecs import ZstdCodec
from zarr_read_vs_zarr_tensorstore import image_like

_SERVERS = pathlib.Path(__file__).resolve().parents[2] / "tests" / "servers"
sys.path.insert(0, str(_SERVERS))
from seaweed import SeaweedS3

BUCKET = "bench"
PATCH = (128, 128, 128)
CASE_SHAPE = (1, 160, 192, 160)
N_CASES = 4
ZARR_SHAPE = (1, 256, 384, 384)
BATCH = 2
THREADS = 2
WARMUP_BATCHES = 3  # the loader's default ring_size: its first burst of batches
# The first row is the brief's setting; the others show what more threads, and more batches in
# flight with the consumer waiting instead of reading, buy when every read waits on the link.
LOADER_ROWS = (
    ("pf Loader, 2 threads", {"num_threads": THREADS}),
    ("pf Loader, 8 threads", {"num_threads": 8}),
    ("pf Loader, 16 threads, ring 16, consumer_produces=False",
     {"num_threads": 16, "ring_size": 16, "consumer_produces": False}),
)


# ---- data -----------------------------------------------------------------------------------

def write_data(root: pathlib.Path) -> dict[str, list[np.ndarray]]:
    """Writes the three layouts under root (once) and returns their values: {layout: [one array
    per case]}."""
    cases = []
    for i in range(N_CASES):
        # A smooth field plus noise, kept to 1/16 steps: compresses like preprocessed CT.
        img = np.round(image_like(CASE_SHAPE, np.float32, seed=i) / 250.0 * 16) / 16
        cases.append(img.astype(np.float32))
    volume = image_like(ZARR_SHAPE, np.uint16, seed=7)
    stamp = root / "written.v1"
    if stamp.exists():
        return {"b2nd": cases, "v2": [volume], "v3": [volume]}
    root.mkdir(parents=True, exist_ok=True)
    b2nd = root / "b2nd"
    b2nd.mkdir(exist_ok=True)
    for i, img in enumerate(cases):
        seg = (img > img.mean()).astype(np.int16)
        for arr, suffix in ((img, ".b2nd"), (seg, "_seg.b2nd")):
            chunks, blocks = _core.nnunet_chunk_block_shapes(arr.shape, PATCH, arr.itemsize)
            blosc2.asarray(arr, urlpath=str(b2nd / f"case_{i:03d}{suffix}"), mode="w",
                           chunks=tuple(chunks), blocks=tuple(blocks),
                           cparams={"codec": blosc2.Codec.LZ4HC, "clevel": 5,
                                    "filters": [blosc2.Filter.SHUFFLE]})
    v2 = zarr.create_array(str(root / "v2.zarr"), shape=ZARR_SHAPE, dtype=volume.dtype,
                           chunks=(1, 64, 64, 64), zarr_format=2, overwrite=True,
                           compressors=numcodecs.Blosc("lz4", 5, numcodecs.Blosc.SHUFFLE))
    v2[...] = volume
    v3 = zarr.create_array(str(root / "v3.zarr"), shape=ZARR_SHAPE, dtype=volume.dtype,
                           chunks=(1, 64, 64, 64), shards=(1, 128, 128, 128), overwrite=True,
                           compressors=ZstdCodec(level=0))
    v3[...] = volume
    stamp.touch()
    return {"b2nd": cases, "v2": [volume], "v3": [volume]}


def whole_chunk_bytes(root: pathlib.Path, boxes) -> float:
    """Mean bytes of the zarr v2 chunk files the boxes touch: what a reader that fetches whole
    chunks must transfer."""
    total = 0
    for _, start in boxes:
        ranges = [range(a // 64, (a + p - 1) // 64 + 1) for a, p in zip(start, PATCH)]
        for z in ranges[0]:
            for y in ranges[1]:
                for x in ranges[2]:
                    total += (root / "v2.zarr" / f"0.{z}.{y}.{x}").stat().st_size
    return total / len(boxes)


def weed_pid() -> int:
    """The `weed server` this process started (SeaweedS3 makes it a child of ours)."""
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == me and name == "weed":
            return int(entry)
    raise RuntimeError("no `weed` child process found")


# ---- boxes ----------------------------------------------------------------------------------

def loader_kwargs(seed: int) -> dict:
    return {"patch_size": PATCH, "batch_size": BATCH, "num_threads": THREADS, "as_numpy": True,
            "arrays": ["image"], "foreground": "off", "foreground_cache_dir": "", "seed": seed}


def local_dataset(root: pathlib.Path, layout: str) -> patchfeed.Dataset:
    if layout == "b2nd":
        return patchfeed.Dataset.from_nnunet_folder(str(root / "b2nd"))
    return patchfeed.Dataset.from_list(["image"], {layout: [str(root / f"{layout}.zarr")]})


def drawn_boxes(dataset, n_batches: int, seed: int) -> list[tuple[int, tuple[int, ...]]]:
    """The (case index, spatial start) of every sample of the loader's first n_batches."""
    out = []
    with patchfeed.Loader(dataset, **loader_kwargs(seed)) as loader:
        it = iter(loader)
        for _ in range(n_batches):
            next(it)
            out += [(s.case_index, tuple(s.box_start)) for s in loader.last_batch.samples]
    return out


def box_slices(start) -> tuple[slice, ...]:
    return (slice(0, 1),) + tuple(slice(a, a + p) for a, p in zip(start, PATCH))


# ---- readers: each is (check, run); run(boxes, deadline) -> samples read ----------------------

def sequential(read_one, in_flight: int = 1):
    """A reader from `read_one(case, start) -> array`: `in_flight` Python threads (1: this one)."""

    def run(boxes, deadline):
        if in_flight == 1:
            n = 0
            for case, start in boxes:
                read_one(case, start)
                n += 1
                if time.perf_counter() > deadline:
                    break
            return n
        done = 0
        with concurrent.futures.ThreadPoolExecutor(in_flight) as pool:
            pending = collections.deque()
            for case, start in boxes:
                if time.perf_counter() > deadline:
                    break
                pending.append(pool.submit(read_one, case, start))
                if len(pending) >= in_flight:
                    pending.popleft().result()
                    done += 1
            for f in pending:
                f.result()
                done += 1
        return done

    return read_one, run


def futures_reader(open_read, in_flight: int):
    """A reader from `open_read(case, start) -> future`: up to `in_flight` futures pending."""

    def read_one(case, start):
        return open_read(case, start).result()

    def run(boxes, deadline):
        pending, done = collections.deque(), 0
        for case, start in boxes:
            if time.perf_counter() > deadline:
                break
            pending.append(open_read(case, start))
            if len(pending) >= in_flight:
                pending.popleft().result()
                done += 1
        for f in pending:
            f.result()
            done += 1
        return done

    return read_one, run


def patchfeed_read_box(urls, options, in_flight):
    arrays = [patchfeed.open_array(u, storage_options=options) for u in urls]
    return sequential(lambda case, start: arrays[case].read_box(
        [0, *start], [1, *(a + p for a, p in zip(start, PATCH))]), in_flight)


def tensorstore_reader(layout, proxy_url, region, concurrency, in_flight):
    context = {"aws_credentials": {"type": "environment"}}
    if concurrency:
        context["s3_request_concurrency"] = {"limit": concurrency}
    arr = ts.open({"driver": "zarr" if layout == "v2" else "zarr3",
                   "kvstore": {"driver": "s3", "bucket": BUCKET, "path": f"{layout}.zarr/",
                               "endpoint": proxy_url, "aws_region": region}},
                  context=ts.Context(context), read=True).result()
    return futures_reader(lambda case, start: arr[box_slices(start)].read(), in_flight)


def zarr_reader(layout, proxy_url, server, store_kind):
    if store_kind == "s3fs":
        arr = zarr.open_array(f"s3://{BUCKET}/{layout}.zarr", mode="r", storage_options={
            "key": server.admin_key, "secret": server.admin_secret,
            "client_kwargs": {"endpoint_url": proxy_url, "region_name": server.region}})
    else:
        store = obstore.store.S3Store(BUCKET, prefix=f"{layout}.zarr", endpoint=proxy_url,
                                      access_key_id=server.admin_key,
                                      secret_access_key=server.admin_secret,
                                      region=server.region, client_options={"allow_http": True})
        arr = zarr.open_array(zarr.storage.ObjectStore(store, read_only=True), mode="r")
    return sequential(lambda case, start: arr[box_slices(start)])


# ---- one measurement ------------------------------------------------------------------------

class Meter:
    """CPU of this process, the server and the proxy, and the proxy's counts, over a window."""

    def __init__(self, proxy: ProxyProcess, weed: int) -> None:
        self.proxy, self.weed = proxy, weed

    def start(self) -> None:
        self.proxy.reset_stats()
        self._t0 = time.perf_counter()
        self._cpu = (time.process_time(), cpu_seconds(self.weed), cpu_seconds(self.proxy.pid))

    def stop(self, samples: int) -> dict:
        wall = time.perf_counter() - self._t0
        cpu = (time.process_time(), cpu_seconds(self.weed), cpu_seconds(self.proxy.pid))
        st = self.proxy.stats()
        per = 1.0 / max(samples, 1)
        return {"samples": samples, "sps": samples / wall,
                "cpu_ms": 1e3 * (cpu[0] - self._cpu[0]) * per,
                "weed_ms": 1e3 * (cpu[1] - self._cpu[1]) * per,
                "proxy_ms": 1e3 * (cpu[2] - self._cpu[2]) * per,
                "gets": st["requests"].get("GET", 0) * per,
                "heads": st["requests"].get("HEAD", 0) * per,
                "mib": st["response_bytes"] * per / (1 << 20),
                "max_in_flight": st["max_in_flight"]}


def assert_patch(got, want_array, start, what):
    want = want_array[box_slices(start)]
    np.testing.assert_array_equal(np.asarray(got), want, err_msg=what)


def measure_reader(meter, reader, boxes, values, n_samples, max_seconds, what):
    read_one, run = reader
    case, start = boxes[0]
    assert_patch(read_one(case, start), values[case], start, what)  # also the warm-up
    timed = boxes[BATCH * WARMUP_BATCHES:BATCH * WARMUP_BATCHES + n_samples]
    meter.start()
    n = run(timed, time.perf_counter() + max_seconds)
    return meter.stop(n)


def settled(loader, timeout_s: float = 300.0) -> int:
    """Waits until no batch is in production (the ring is full); returns the batches finished
    so far (delivered or ready)."""
    deadline = time.perf_counter() + timeout_s
    while True:
        m = loader.metrics()
        if m["slots_producing"] == 0:
            return m["batches_delivered"] + m["slots_ready"]
        if time.perf_counter() > deadline:
            raise TimeoutError(f"the loader kept producing for {timeout_s:.0f} s: {m}")
        time.sleep(0.002)


def measure_loader(meter, dataset, boxes, values, seed, options, n_samples, max_seconds, what):
    """The Loader's batches; their boxes are checked to be `boxes` (those drawn locally).

    The loader starts `ring_size - 1` batches at once and then keeps that many in flight.
    samples/s: over a window that opens after `ring_size` warm-up batches (the first burst
    taken) and lasts at least two rings' worth of samples. CPU, requests and bytes: over a
    second window that starts and ends with no batch in production, `ring_size` batches taken
    in it, divided by the batches finished in it, so that each batch read ahead counts whole."""
    ring = options.get("ring_size", 3)
    drawn = []

    def take():
        next(it)
        drawn.extend((s.case_index, tuple(s.box_start)) for s in loader.last_batch.samples)

    with patchfeed.Loader(dataset, **{**loader_kwargs(seed), **options}) as loader:
        it = iter(loader)
        batch = next(it)
        for i, s in enumerate(loader.last_batch.samples):
            assert_patch(batch["image"][i], values[s.case_index], s.box_start, what)
            drawn.append((s.case_index, tuple(s.box_start)))
        del batch  # its slot returns to the ring
        for _ in range(max(WARMUP_BATCHES, ring) - 1):
            take()
        t0 = time.perf_counter()
        n = 0
        while n < max(n_samples, 2 * ring * BATCH) and time.perf_counter() < t0 + max_seconds:
            take()
            n += BATCH
        wall = time.perf_counter() - t0
        finished = settled(loader)
        meter.start()
        for _ in range(ring):
            take()
        result = meter.stop((settled(loader) - finished) * BATCH)
    result.update(samples=n, sps=n / wall)
    common = min(len(drawn), len(boxes))
    assert drawn[:common] == boxes[:common], f"{what}: the remote loader drew other boxes"
    return result


# ---- main -----------------------------------------------------------------------------------

def fmt_row(delay, layout, reader, r, pf_sps):
    ratio = f"{pf_sps / r['sps']:.2f}" if pf_sps else ""
    return (f"| {delay} | {layout} | {reader} | {r['samples']} | {r['sps']:.2f} | {ratio} | "
            f"{r['cpu_ms']:.0f} | {r['weed_ms']:.0f} | {r['proxy_ms']:.0f} | "
            f"{r['gets']:.1f} + {r['heads']:.1f} | {r['mib']:.2f} | {r['max_in_flight']} |")


def best_ratios(delay, layout, rows) -> str:
    """One line: each library's fastest row (samples/s) and patchfeed's ratio to the others."""
    best = {}
    for name, r in rows:
        if ", cache" in name or "local files" in name:
            continue  # not a way to read the bucket's bytes each time
        lib = name.split()[0]
        if r["sps"] > best.get(lib, ("", 0.0))[1]:
            best[lib] = (name, r["sps"])
    cells = [f"{best[k][0]}: {best[k][1]:.2f}" if k in best else "" for k in ("pf", "ts", "zarr")]
    ratios = [f"{best['pf'][1] / best[k][1]:.2f}x" if k in best else "" for k in ("ts", "zarr")]
    return f"| {delay} | {layout} | " + " | ".join(cells + ratios) + " |"


def remote_readers(layout, urls, options, proxy_url, server, ts_concurrency):
    """(name, factory) of every reader but the loader; a factory opens its array and returns
    the reader (opening is not timed)."""
    out = [("pf read_box", lambda: patchfeed_read_box(urls, options, 1)),
           ("pf read_box x4", lambda: patchfeed_read_box(urls, options, 4))]
    if layout == "b2nd":
        return out  # neither tensorstore nor zarr-python reads .b2nd
    for conc in (0, ts_concurrency):
        for depth in (1, 4):
            name = f"ts {f'conc {conc}' if conc else 'default'}, {depth} in flight"
            out.append((name, lambda c=conc, d=depth: tensorstore_reader(
                layout, proxy_url, server.region, c, d)))
    for kind in ("s3fs", "obstore"):
        out.append((f"zarr {kind}", lambda k=kind: zarr_reader(layout, proxy_url, server, k)))
    return out


def cache_rows(meter, layout, dataset, boxes, values, options, args, what):
    """The 2-thread loader with the range cache (`cache_dir`): a first epoch that fills it, the
    same boxes again (a new loader: each object's HEAD is asked again, its bytes are not), and
    the same loader reading the local files, for the ratio cached / local."""
    rows = []
    with tempfile.TemporaryDirectory(dir=args.dir) as cache:
        cached = dict(options, cache_dir=cache)
        if layout == "b2nd":
            remote = patchfeed.Dataset.from_nnunet_folder(f"s3://{BUCKET}/b2nd", cached)
        else:
            remote = patchfeed.Dataset.from_list(["image"], {layout: dataset.paths(0)}, cached)
        for name in ("pf Loader, 2 threads, cache: first run",
                     "pf Loader, 2 threads, cache: run again"):
            r = measure_loader(meter, remote, boxes, values, args.seed, {}, args.samples,
                               1e9, f"{name} on {what}")
            rows.append((name, r))
    local = local_dataset(pathlib.Path(args.dir), layout)
    rows.append(("pf Loader, 2 threads, local files", measure_loader(
        meter, local, boxes, values, args.seed, {}, args.samples, 1e9, f"local on {what}")))
    return rows


def measure_layout(meter, layout, delay, boxes, values, options, server, args):
    """Every reader's row for one layout at one delay."""
    if layout == "b2nd":
        urls = [f"s3://{BUCKET}/b2nd/case_{i:03d}.b2nd" for i in range(N_CASES)]
        dataset = patchfeed.Dataset.from_nnunet_folder(f"s3://{BUCKET}/b2nd", options)
    else:
        urls = [f"s3://{BUCKET}/{layout}.zarr"]
        dataset = patchfeed.Dataset.from_list(["image"], {layout: urls}, options)
    what = f"{layout} at {delay:g} ms"
    rows = [(name, measure_loader(meter, dataset, boxes, values, args.seed, loader_options,
                                  args.samples, args.max_seconds, f"{name} on {what}"))
            for name, loader_options in LOADER_ROWS]
    rows += cache_rows(meter, layout, dataset, boxes, values, options, args, what)
    for name, make in remote_readers(layout, urls, options, meter.proxy.url, server,
                                     args.ts_concurrency):
        rows.append((name, measure_reader(meter, make(), boxes, values, args.samples,
                                          args.max_seconds, f"{name} on {what}")))
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dir", default="/dev/shm/patchfeed_s3_bench")
    p.add_argument("--delays", default="0,5,20", help="proxy delay per request, ms")
    p.add_argument("--samples", type=int, default=24, help="timed patches per measurement, at most")
    p.add_argument("--max-seconds", type=float, default=15.0,
                   help="a measurement stops after this long (at least one patch)")
    p.add_argument("--ts-concurrency", type=int, default=256,
                   help="tensorstore's raised s3_request_concurrency")
    p.add_argument("--layouts", default="b2nd,v2,v3")
    p.add_argument("--seed", type=int, default=11)
    args = p.parse_args()
    t_start = time.perf_counter()
    root = pathlib.Path(args.dir)
    values = write_data(root)
    layouts = args.layouts.split(",")
    n_batches = WARMUP_BATCHES + -(-args.samples // BATCH) + 1
    boxes = {k: drawn_boxes(local_dataset(root, k), n_batches, args.seed) for k in layouts}

    server = SeaweedS3().start()
    proxy = None
    summary = []
    try:
        server.create_bucket(BUCKET)
        uploaded = 0
        for k in layouts:
            src = root / ("b2nd" if k == "b2nd" else f"{k}.zarr")
            server.put_tree(BUCKET, src.name, src)
            uploaded += sum(f.stat().st_size for f in src.rglob("*") if f.is_file())
        proxy = ProxyProcess(server.endpoint)
        meter = Meter(proxy, weed_pid())
        os.environ["AWS_ACCESS_KEY_ID"] = server.admin_key  # tensorstore's "environment"
        os.environ["AWS_SECRET_ACCESS_KEY"] = server.admin_secret
        options = {"endpoint_url": proxy.url, "key": server.admin_key,
                   "secret": server.admin_secret, "region": server.region}
        print(f"# uploaded {uploaded / 1e6:.0f} MB in {time.perf_counter() - t_start:.0f} s; "
              f"{os.cpu_count()} cores; patches {PATCH}; up to {args.samples} per row, "
              f"{args.max_seconds:.0f} s at most")
        if "v2" in layouts:
            print(f"# v2: whole 64^3 chunks a patch touches: "
                  f"{whole_chunk_bytes(root, boxes['v2']) / (1 << 20):.2f} MiB per patch")
        print("| delay ms | data | reader | samples | samples/s | pf Loader / this | "
              "CPU ms/sample | weed CPU ms/sample | proxy CPU ms/sample | GET + HEAD /sample | "
              "MiB/sample | max in flight |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for delay in (float(d) for d in args.delays.split(",")):
            proxy.set_delay(delay / 1e3)
            for layout in layouts:
                rows = measure_layout(meter, layout, delay, boxes[layout], values[layout],
                                      options, server, args)
                for name, r in rows:
                    print(fmt_row(f"{delay:g}", layout, name, r, rows[0][1]["sps"]), flush=True)
                summary.append(best_ratios(f"{delay:g}", layout, rows))
    finally:
        if proxy is not None:
            proxy.stop()
        server.stop()
    print()
    print("| delay ms | data | best patchfeed | best tensorstore | best zarr-python | "
          "pf / ts | pf / zarr |")
    print("|---|---|---|---|---|---|---|")
    for line in summary:
        print(line)
    print(f"# total {time.perf_counter() - t_start:.0f} s")


if __name__ == "__main__":
    main()
