# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Ctrl-C loses no batch: a child training loop (interrupted_consumer.py) gets real SIGINTs at
random instants, resumes after each (in the same loader, or a new one from state_dict()),
and the batches it received are exactly, in order and content, an uninterrupted run's."""

from __future__ import annotations

import json
import pathlib
import random
import signal
import subprocess
import sys
import time

import pytest
from loader_testlib import env_with_package, write_dataset

CHILD = pathlib.Path(__file__).with_name("interrupted_consumer.py")
INTERRUPTS = 32


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return write_dataset(tmp_path_factory.mktemp("interrupts"), [(1, 40, 36, 44)] * 3)


def run_interrupted(config: dict, seed: int) -> dict:
    proc = subprocess.Popen([sys.executable, str(CHILD), json.dumps(config)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env_with_package())
    rng = random.Random(seed)
    try:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        for _ in range(INTERRUPTS):
            time.sleep(rng.uniform(0.0, 0.02))
            proc.send_signal(signal.SIGINT)
            line = proc.stdout.readline().strip()
            assert line == "caught", line + proc.stderr.read()
        proc.stdin.write("stop\n")
        proc.stdin.flush()
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out + err
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "style, options",
    [
        ("for", {}),
        ("next_batch", {"consumer_produces": False}),
        ("for", {"consumer_produces": False, "num_threads": 2}),
        ("next_batch", {"augmentation": {}, "batch_size": 2}),
        ("for", {"io_mode": "pread", "io_depth": 8}),
    ],
    ids=["for", "next-batch-workers", "for-workers", "augmented", "reads-in-flight"],
)
def test_interrupted_loop_resumes_exactly(folder, style, options):
    config = {"folder": str(folder), "style": style, "rebuild": True, "patch_size": [16, 16, 16],
              "batch_size": 1, "ring_size": 2, **options}
    result = run_interrupted(config, seed=len(style) + len(options))
    assert result["interrupts"] == INTERRUPTS
    assert result["rebuilt"] == INTERRUPTS // 2
    got, want = result["got"], result["want"]
    assert len(got) >= 2 and got == want
