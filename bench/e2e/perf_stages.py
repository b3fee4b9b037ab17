#!/usr/bin/env python3
# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Where a sample's CPU goes: a `perf record` of the patchfeed side bucketed into the stages of
bench/README.md section 7 (self time per symbol; libc's memmove/memcpy go to their caller's
stage when perf recorded call chains (`-g`), else to the read, where they are mostly the
unshuffle's row copies).

_core is stripped of its symbol table in Release builds; build with `-DCMAKE_STRIP=/bin/true`
(pybind11 then keeps it) and pass `--so`, whose `nm` names the addresses perf leaves as hex.

  perf record -F 499 -g -p PID -o perf.data   # the patchfeed side in its steady state
  python3 bench/e2e/perf_stages.py perf.data --so build/bench/python/patchfeed/_core*.so
"""
from __future__ import annotations

import argparse
import bisect
import re
import subprocess

# First match wins; matched against the symbol name, then the DSO.
STAGES = [
    ("read and decode (LZ4, unshuffle, pad fill copies)",
     r"LZ4_|[Uu]nshuffle|internal_codec::|patchfeed::codec::|FillView|SampleReader|ReadRun"),
    ("spatial resampling",
     r"Resample|AffineSampling|SpatialTransform|Spatial|ComputeAxisPositions|LinearLabel"),
    ("gamma", r"Gamma|InvertMoments|CurveMoments"),
    ("mirroring", r"Mirror"),
    ("blur", r"Blur|WeightedSum"),
    ("noise", r"Normal|Noise"),
    ("low resolution", r"LowResolution|ResizeNearest|ResizeLinear|ResizeAxis|LerpLines|GatherRows"),
    ("contrast / brightness", r"Contrast|MeanMinMax|Brightness"),
    ("deep-supervision targets, label removal", r"DownsampleSeg|RemoveLabel|Targets"),
    ("other intensity passes inlined into AugmentImageChannel", r"AugmentImageChannel"),
    ("memset (pad fill, staging growth)", r"memset"),
    ("memmove / memcpy", r"memmove|memcpy"),
    ("consumer's pass (np.max) and Python", r"_multiarray_umath|libpython|python3|numpy"),
    ("kernel", r"\[kernel|kallsyms"),
    ("TBB scheduling", r"libtbb|tbb::"),
]


def load_symbols(so):
    out = subprocess.run(["nm", "-C", "--defined-only", so], check=True, capture_output=True,
                         text=True).stdout
    syms = []
    for line in out.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in "tTwW":
            syms.append((int(parts[0], 16), parts[2]))
    syms.sort()
    return [a for a, _ in syms], [n for _, n in syms]


def stage_of(name):
    for stage, pattern in STAGES:
        if re.search(pattern, name):
            return stage
    return "other"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data")
    ap.add_argument("--so", help="the unstripped _core the profile ran")
    args = ap.parse_args()
    addrs, names = load_symbols(args.so) if args.so else ([], [])
    # Self time per (dso, symbol), and for libc's copies the caller that each comes from.
    report = subprocess.run(
        ["perf", "report", "-i", args.data, "--no-children", "--sort", "dso,sym", "--stdio",
         "-g", "caller,0.05,callee,function,percent", "--percent-limit", "0.01"],
        check=True, capture_output=True, text=True).stdout
    shares = {}
    split_column = None  # the indent of the current memmove/memcpy leaf's callers
    for line in report.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+(\S+)\s+\[[.k]\]\s+(.*)$", line)
        if m:
            pct, dso, sym = float(m.group(1)), m.group(2), m.group(3).strip()
            if sym.startswith("0x") and addrs and "_core" in dso:
                i = bisect.bisect_right(addrs, int(sym, 16)) - 1
                sym = names[i] if i >= 0 else sym
            stage = stage_of(sym + " " + dso)
            shares[stage] = shares.get(stage, 0.0) + pct
            # A memmove/memcpy leaf's first-level callers (one indent), to split it among them.
            split_column = -1 if stage == "memmove / memcpy" else None
            continue
        c = re.match(r"([\s|]*)--([\d.]+)%--(.*)$", line)
        if c is None or split_column is None:
            continue
        if split_column == -1:
            split_column = len(c.group(1))
        if len(c.group(1)) == split_column:
            caller_stage = stage_of(c.group(3))
            if caller_stage not in ("other", "memmove / memcpy"):
                moved = float(c.group(2))
                shares["memmove / memcpy"] -= moved
                shares[caller_stage] = shares.get(caller_stage, 0.0) + moved
    total = sum(shares.values())
    print("| stage | share |\n|---|---:|")
    for stage, pct in sorted(shares.items(), key=lambda kv: -kv[1]):
        print(f"| {stage} | {100 * pct / total:.1f} % |")


if __name__ == "__main__":
    main()
