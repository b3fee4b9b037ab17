#!/usr/bin/env python3
# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""The measurements of tools/gpu_check.sh (issue 16), one step per call:

    gpu_check.py STEP --steps-dir DIR --data DIR [--deadline UNIX_TIME] [--cpu-dry-run]
    gpu_check.py merge --steps-dir DIR --out DIR

Steps: dataset, pinned, fallback, equal, bandwidth, standin, cxx (--binary, --cudart-dir),
unet. Each writes <steps-dir>/<step>.json as it goes; exit 0 (ok or skipped), 1 (a check
failed), 2 (an error). --cpu-dry-run: tiny sizes, no GPU; GPU-only steps say "skipped" and the
others run their code on the CPU without claiming a figure.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import step_results as results  # noqa: E402
from workload import sizes  # noqa: E402

STEPS = ("dataset", "pinned", "fallback", "equal", "bandwidth", "standin", "cxx", "unet")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("step", choices=STEPS + ("merge", "fallback-child"))
    p.add_argument("--steps-dir", default=".")
    p.add_argument("--data", default="gpu_check_data")
    p.add_argument("--out", help="merge: where results.json and summary.md go")
    p.add_argument("--deadline", type=float, default=0, help="unix time the run must end by")
    p.add_argument("--cpu-dry-run", action="store_true")
    p.add_argument("--binary", help="cxx: examples/train_loop's binary")
    p.add_argument("--cudart-dir", help="cxx: a folder holding libcudart.so*")
    a = p.parse_args(argv)
    if a.step == "merge":
        results.merge(a.steps_dir, a.out or a.steps_dir)
        return 0
    s = sizes(a.cpu_dry_run)
    data = os.path.abspath(a.data)
    if a.step == "fallback-child":
        from steps_loader import fallback_child

        print(json.dumps(fallback_child(s, data)))
        return 0
    import steps_loader
    import steps_perf
    import steps_unet

    bodies = {
        "dataset": lambda st: steps_loader.dataset(st, s, data),
        "pinned": lambda st: steps_loader.pinned(st, s, data),
        "fallback": lambda st: steps_loader.fallback(st, s, data),
        "equal": lambda st: steps_loader.equal(st, s, data),
        "bandwidth": lambda st: steps_perf.bandwidth(st, s, data),
        "standin": lambda st: steps_perf.standin(st, s, data),
        "cxx": lambda st: steps_loader.cxx(st, s, data, a.binary, a.cudart_dir),
        "unet": lambda st: steps_unet.unet(st, s, data),
    }
    deadline = a.deadline or time.time() + 600
    os.makedirs(a.steps_dir, exist_ok=True)
    step = results.Step(a.step, a.steps_dir, deadline, a.cpu_dry_run)
    return results.run(step, bodies[a.step])


if __name__ == "__main__":
    sys.exit(main())
