#!/usr/bin/env python3
# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""patchfeed vs c-blosc2 (python-blosc2), same process, same chunks, one thread.

Rows: data {smooth float32 CT-like field, uint8 label map} x codec {LZ4 5, LZ4HC 5, ZSTD 1,
ZSTD 5, ZSTD 8, BLOSCLZ 5} x filter {SHUFFLE, BITSHUFFLE} x chunk size {1 MB, 8 MB}.

For each row:
* encode MB/s of blosc2.compress2 and patchfeed.compress on the same input (both return a new
  bytes object), and the compression ratio each achieves;
* decode MB/s of blosc2.decompress2 and patchfeed.decompress on the SAME chunk written by
  c-blosc2 (both return a new bytes object), and of both decoding patchfeed's chunk;
* the ratio patchfeed/blosc2 of the throughputs (> 1: patchfeed faster).

Timing: warm (one untimed call first), best of up to --reps calls with time.perf_counter; the
calls being compared (the two encoders; the four decodes) alternate round by round so load
changes hit both libraries alike; each function gets at most --budget seconds (at least one
timed call). MB = 10^6 bytes of uncompressed data. Every decode is checked against the input.
Chunk sizes are MiB (1 MiB, 8 MiB). Data: see ct_volume and label_volume.

Usage: PYTHONPATH=build/python python bench/e2e/codec_vs_blosc2.py [--quick] [--out table.md]
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import pathlib
import platform
import sys
import time

import blosc2
import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]
try:
    import patchfeed
except ImportError:
    sys.path.insert(
        0, str(pathlib.Path(os.environ.get("PATCHFEED_BUILD_DIR", REPO / "build")) / "python")
    )
    import patchfeed

CODECS = [  # (label, python-blosc2 codec, patchfeed name, clevel)
    ("LZ4 5", blosc2.Codec.LZ4, "lz4", 5),
    ("LZ4HC 5", blosc2.Codec.LZ4HC, "lz4hc", 5),
    ("ZSTD 1", blosc2.Codec.ZSTD, "zstd", 1),
    ("ZSTD 5", blosc2.Codec.ZSTD, "zstd", 5),
    ("ZSTD 8", blosc2.Codec.ZSTD, "zstd", 8),
    ("BLOSCLZ 5", blosc2.Codec.BLOSCLZ, "blosclz", 5),
]
FILTERS = [
    ("SHUFFLE", blosc2.Filter.SHUFFLE, "shuffle"),
    ("BITSHUFFLE", blosc2.Filter.BITSHUFFLE, "bitshuffle"),
]
MB = 1_000_000


def ct_volume(nbytes: int, seed: int = 0) -> bytes:
    """A CT-like float32 volume (Hounsfield-ish units): slowly varying tissue background from
    smooth sines, a body outline at air (-1000), a few Gaussian organs/bones, mild noise,
    quantised to 1/16 HU steps as rescaled scanner data is."""
    side = 256
    depth = -(-nbytes // (4 * side * side))
    rng = np.random.default_rng(seed)
    z, y, x = np.meshgrid(
        np.arange(depth, dtype=np.float32),
        np.arange(side, dtype=np.float32),
        np.arange(side, dtype=np.float32),
        indexing="ij",
        sparse=True,
    )
    v = 40 + 25 * np.sin(x / 23.0) * np.cos(y / 31.0) + 15 * np.sin(z / 11.0 + y / 47.0)
    for _ in range(8):
        cz, cy, cx = rng.uniform(0, depth), rng.uniform(40, 216), rng.uniform(40, 216)
        r = rng.uniform(6, 30)
        d2 = ((z - cz) ** 2 + (y - cy) ** 2 + (x - cx) ** 2) / (2 * r * r)
        v = v + rng.uniform(-60, 900) * np.exp(-d2)
    body = ((y - 128) / 110) ** 2 + ((x - 128) / 120) ** 2 < 1
    v = np.where(body, v, np.float32(-1000))
    v = v + rng.normal(0, 4, size=v.shape).astype(np.float32)
    v = (np.round(v * 16) / 16).astype(np.float32)
    return v.tobytes()[:nbytes]


def label_volume(nbytes: int, seed: int = 1) -> bytes:
    """A uint8 segmentation: background 0, a few nested blobs (organ 1 containing lesion 2
    containing core 3) and a thin tubular structure 4."""
    side = 256
    depth = -(-nbytes // (side * side))
    rng = np.random.default_rng(seed)
    z, y, x = np.meshgrid(
        np.arange(depth, dtype=np.float32),
        np.arange(side, dtype=np.float32),
        np.arange(side, dtype=np.float32),
        indexing="ij",
        sparse=True,
    )
    out = np.zeros((depth, side, side), dtype=np.uint8)
    for _ in range(4):
        cz, cy, cx = rng.uniform(0, depth), rng.uniform(30, 226), rng.uniform(30, 226)
        r = rng.uniform(10, 40)
        wobble = 1 + 0.15 * np.sin(x / 5.0) * np.cos(y / 7.0)
        d2 = ((z - cz) ** 2 + (y - cy) ** 2 + (x - cx) ** 2) * wobble
        for label, frac in ((1, 1.0), (2, 0.55), (3, 0.25)):
            out[d2 < (r * frac) ** 2] = label
    tube = (y - 128 - 30 * np.sin(z / 9.0)) ** 2 + (x - 90) ** 2 < 16
    out[np.broadcast_to(tube, out.shape)] = 4
    return out.tobytes()[:nbytes]


def best_times(fns: dict, reps: int, budget: float) -> dict:
    """Best wall time of each function in `fns` over up to `reps` rounds, after one warm-up
    call each. The functions are called in turn within every round, so a change of machine
    load hits all of them alike. Stops after `budget` seconds per function (at least one
    timed round)."""
    for fn in fns.values():
        fn()
    best = dict.fromkeys(fns, math.inf)
    spent = 0.0
    gc.disable()
    try:
        for _ in range(reps):
            for name, fn in fns.items():
                t0 = time.perf_counter()
                fn()
                dt = time.perf_counter() - t0
                best[name] = min(best[name], dt)
                spent += dt
            if spent > budget * len(fns):
                break
    finally:
        gc.enable()
    return best


def bench_row(data: bytes, typesize: int, codec, filt, reps: int, budget: float) -> dict:
    _, b2codec, pfcodec, clevel = codec
    _, b2filter, pffilter = filt
    n = len(data)

    def b2_enc():
        return blosc2.compress2(
            data, codec=b2codec, clevel=clevel, typesize=typesize, filters=[b2filter], nthreads=1
        )

    def pf_enc():
        return patchfeed.compress(
            data, typesize=typesize, codec=pfcodec, clevel=clevel, filters=[pffilter]
        )

    b2c, pfc = b2_enc(), pf_enc()
    decoded = {
        "blosc2(b2 chunk)": blosc2.decompress2(b2c),
        "patchfeed(b2 chunk)": patchfeed.decompress(b2c),
        "blosc2(pf chunk)": blosc2.decompress2(pfc),
        "patchfeed(pf chunk)": patchfeed.decompress(pfc),
    }
    for name, got in decoded.items():
        if got != data:
            raise SystemExit(f"decode mismatch {name} for {codec[0]} {filt[0]} {n}")
    times = best_times({"enc_b2": b2_enc, "enc_pf": pf_enc}, reps, budget)
    times |= best_times(
        {
            "dec_b2": lambda: blosc2.decompress2(b2c, nthreads=1),
            "dec_pf": lambda: patchfeed.decompress(b2c),
            "dec_b2_pfc": lambda: blosc2.decompress2(pfc, nthreads=1),
            "dec_pf_pfc": lambda: patchfeed.decompress(pfc),
        },
        reps,
        budget,
    )
    out = {name: n / MB / t for name, t in times.items()}
    return out | {"ratio_b2": n / len(b2c), "ratio_pf": n / len(pfc)}


def geomean(values) -> float:
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions, smaller budget")
    ap.add_argument("--reps", type=int, default=None, help="max timed calls per measurement")
    ap.add_argument("--budget", type=float, default=None, help="max seconds per measurement")
    ap.add_argument("--sizes", default="1,8", help="chunk sizes in MiB, comma-separated")
    ap.add_argument("--out", type=pathlib.Path, help="also write the markdown table here")
    args = ap.parse_args(argv)
    reps = args.reps or (3 if args.quick else 15)
    budget = args.budget or (0.1 if args.quick else 0.6)
    sizes = [int(float(s) * (1 << 20)) for s in args.sizes.split(",")]  # MiB-sized chunks

    blosc2.set_nthreads(1)
    # One volume per kind, at least 8 MiB whatever --sizes says, so a row's data does not
    # depend on the other rows; each chunk is the centred slab of `size` bytes.
    vol_bytes = max(sizes + [8 << 20])
    datasets = {
        "smooth f32": (ct_volume(vol_bytes), 4),
        "labels u8": (label_volume(vol_bytes), 1),
    }
    lines = [
        (
            f"patchfeed {patchfeed.__version__} vs python-blosc2 {blosc2.__version__} "
            f"(c-blosc2 {blosc2.blosclib_version.split()[0]}), 1 thread, "
            f"{platform.processor() or platform.machine()}, best of <= {reps} interleaved warm "
            f"calls (<= {budget:.2f} s each); MB/s = 10^6 B of raw data / s"
        ),
        "",
        (
            "| data | codec | filter | chunk | ratio b2 | ratio pf | dec b2 | dec pf | pf/b2 dec "
            "| dec b2 (pf chunk) | dec pf (pf chunk) | enc b2 | enc pf | pf/b2 enc |"
        ),
        "|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    print("\n".join(lines), flush=True)
    rows = []
    t_start = time.perf_counter()
    for dname, (full, typesize) in datasets.items():
        for size in sizes:
            start = (len(full) - size) // 2 // 65536 * 65536  # whole slices
            data = full[start : start + size]
            for codec in CODECS:
                for filt in FILTERS:
                    r = bench_row(data, typesize, codec, filt, reps, budget)
                    rows.append(r)
                    line = (
                        f"| {dname} | {codec[0]} | {filt[0]} | {size >> 20} MiB "
                        f"| {r['ratio_b2']:.2f} | {r['ratio_pf']:.2f} "
                        f"| {r['dec_b2']:.0f} | {r['dec_pf']:.0f} "
                        f"| {r['dec_pf'] / r['dec_b2']:.2f} "
                        f"| {r['dec_b2_pfc']:.0f} | {r['dec_pf_pfc']:.0f} "
                        f"| {r['enc_b2']:.0f} | {r['enc_pf']:.0f} "
                        f"| {r['enc_pf'] / r['enc_b2']:.2f} |"
                    )
                    lines.append(line)
                    print(line, flush=True)
    summary = (
        f"\nGeometric mean pf/b2: decode (c-blosc2 chunks) "
        f"{geomean(r['dec_pf'] / r['dec_b2'] for r in rows):.2f}, decode (own chunks) "
        f"{geomean(r['dec_pf_pfc'] / r['dec_b2'] for r in rows):.2f}, encode "
        f"{geomean(r['enc_pf'] / r['enc_b2'] for r in rows):.2f}, compressed size "
        f"{geomean(r['ratio_b2'] / r['ratio_pf'] for r in rows):.3f}; "
        f"{len(rows)} rows in {time.perf_counter() - t_start:.0f} s"
    )
    lines.append(summary)
    print(summary)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
