#!/usr/bin/env python3
"""Turns patchfeed_codec_bench's JSON into the markdown table kept in bench/README.md.

Usage (decode and encode timed separately; several JSON files are merged):
  B=build/bench/bench/patchfeed_codec_bench
  $B --benchmark_filter=BM_Decode --benchmark_min_time=0.3 --benchmark_repetitions=3 \
     --benchmark_report_aggregates_only=true --benchmark_format=json > decode.json
  $B --benchmark_filter=BM_Encode --benchmark_min_time=0.1 --benchmark_format=json > encode.json
  python3 bench/e2e/codec_table.py decode.json encode.json

Each row pairs patchfeed and c-blosc2 decoding (and encoding) the same chunk in the same
process, one thread; the ratio column is patchfeed / c-blosc2 throughput. Goals from issue 2:
decode >= 1.0x on every row, >= 1.3x for 1-byte types with SHUFFLE.
"""

import json
import sys
from collections import defaultdict


def load(paths):
    rows = defaultdict(dict)
    benchmarks, context = [], {}
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        context = context or doc.get("context", {})
        benchmarks += doc["benchmarks"]
    for b in benchmarks:
        name = b.get("run_name", b["name"])
        if b.get("aggregate_name") not in (None, "median"):
            continue
        # BM_<Op>/<lib>/<data>/<codec>/<filter>/<MB>
        parts = name.split("/")
        op, lib, key = parts[0][3:], parts[1], "/".join(parts[2:])
        rows[key][(op, lib)] = b["bytes_per_second"] / 1e6
        if op == "Decode":
            rows[key][("ratio", lib)] = b.get("ratio", 0.0)
    return context, rows


def main():
    context, rows = load(sys.argv[1:])
    print(f"host: {context.get('host_name', '?')}, {context.get('num_cpus', '?')} CPUs, "
          f"{context.get('date', '')}\n")
    print("| data | codec | filter | chunk | c-ratio | decode pf MB/s | decode c-blosc2 MB/s "
          "| decode x | encode pf MB/s | encode c-blosc2 MB/s | encode x | goal |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    misses = []
    for key in sorted(rows):
        r = rows[key]
        data, codec, filt, size = key.split("/")
        dpf, dcb = r.get(("Decode", "patchfeed"), 0), r.get(("Decode", "cblosc2"), 0)
        epf, ecb = r.get(("Encode", "patchfeed"), 0), r.get(("Encode", "cblosc2"), 0)
        dx = dpf / dcb if dcb else float("nan")
        ex = epf / ecb if ecb else float("nan")
        goal = 1.3 if (data == "uint8" and filt == "shuffle") else 1.0
        ok = dx >= goal
        if not ok:
            misses.append(f"{key} ({dx:.2f}x < {goal}x)")
        print(f"| {data} | {codec} | {filt} | {size} | {r.get(('ratio', 'cblosc2'), 0):.1f} "
              f"| {dpf:.0f} | {dcb:.0f} | {dx:.2f} | {epf:.0f} | {ecb:.0f} | {ex:.2f} "
              f"| {'ok' if ok else 'MISS'} (>= {goal}x) |")
    print()
    print("rows missing the decode goal: " + (", ".join(misses) if misses else "none"))


if __name__ == "__main__":
    main()
