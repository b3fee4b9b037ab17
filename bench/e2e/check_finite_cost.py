#!/usr/bin/env python3
# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""The cost of the Loader's check_finite: bench/loader/loader_bench.cc with and without
--check-finite on section 3's workload B (nnU-Net-like float32 image + int16 seg, 160^3 cases,
LZ4HC 5 + SHUFFLE, nnU-Net's chunks and blocks, random 128^3 boxes, batch 2), plain and with
nnU-Net's augmentation to a 96^3 patch. One arena worker and a consumer that only waits, so
the CPU time per sample is one core's. The two settings alternate run after run (the cores are
shared); the best run of each is kept.

  PYTHONPATH=build/lbench/python python3 bench/e2e/check_finite_cost.py [--rounds 5]
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from loader_vs_blosc2 import write_datasets  # noqa: E402

CONFIGS = {
    "plain 128^3": ["--patch", "128,128,128", "--batches", "100"],
    "augmented 128^3 -> 96^3": ["--patch", "128,128,128", "--augment", "96,96,96",
                                "--batches", "15"],
}


def run(binary, folder, extra, check):
    cmd = [binary, "--dataset", folder, "--workload", "B", "--threads", "1", "--workers-only",
           "--batch-size", "2", *extra] + (["--check-finite"] if check else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    return r["samples_s"], 1e3 * r["cpu_s"] / r["samples"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default=os.path.join(
        REPO, "build", "lbench", "bench", "loader", "patchfeed_loader_bench"))
    ap.add_argument("--root", default="/dev/shm/patchfeed_check_finite")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    folder = os.path.join(args.root, "B")
    if not os.path.isdir(folder):
        write_datasets(args.root, 0, 8)
    print(f"{'workload':26} {'check_finite':>12} {'samples/s':>10} {'CPU ms/sample':>14}")
    for name, extra in CONFIGS.items():
        best = {False: (0.0, float("inf")), True: (0.0, float("inf"))}
        for _ in range(args.rounds):
            for check in (False, True):
                rate, cpu = run(args.bench, folder, extra, check)
                best[check] = (max(best[check][0], rate), min(best[check][1], cpu))
        for check in (False, True):
            print(f"{name:26} {str(check):>12} {best[check][0]:10.1f} {best[check][1]:14.2f}")
        off, on = best[False][1], best[True][1]
        print(f"{name:26} {'cost':>12} {'':10} {100 * (on - off) / off:13.1f}%")


if __name__ == "__main__":
    main()
