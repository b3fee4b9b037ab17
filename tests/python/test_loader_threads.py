# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""patchfeed.Loader and Python threads, signals and exit: the GIL is released while a batch
is awaited and read; Ctrl-C while waiting raises KeyboardInterrupt without losing a batch;
interpreter exit with a live loader (and batches still held) neither hangs nor crashes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import patchfeed
import pytest
from loader_testlib import env_with_package, take, write_dataset

BIG_PATCH = (40, 40, 40)
BIG_SHAPES = [(1, 48, 48, 48)] * 2


@pytest.fixture(scope="module")
def big_dir(tmp_path_factory):
    return write_dataset(tmp_path_factory.mktemp("loader_threads"), BIG_SHAPES)


def test_other_thread_runs_while_next_waits(big_dir):
    # With a huge switch interval, the counting thread can only run when the main thread
    # gives the GIL up itself: it does between its own increments (sleep(0)), and it must do
    # while the loader reads a batch. Each next() below has to read its batch (one slot, one
    # reader thread: nothing is read ahead), so the counter moving across the calls proves
    # the wait and the C++ work ran without the GIL.
    count = 0
    stop = threading.Event()

    def spin():
        nonlocal count
        import time

        while not stop.is_set():
            count += 1
            time.sleep(0)

    loader = patchfeed.Loader(big_dir, BIG_PATCH, 4, num_threads=1, ring_size=1, seed=3)
    old = sys.getswitchinterval()
    t = threading.Thread(target=spin)
    t.start()
    try:
        sys.setswitchinterval(1000.0)
        progress = []
        for _ in range(5):
            c0 = count
            batch = loader.next_batch()
            progress.append(count - c0)
            del batch
    finally:
        sys.setswitchinterval(old)
        stop.set()
        t.join()
        loader.close()
    assert sum(progress) > 0, progress


def test_keyboard_interrupt_while_waiting_keeps_the_batch(big_dir):
    # A real SIGINT to a child that does nothing but wait for batches; after the interrupt the
    # loader carries on from state_dict() exactly as an uninterrupted one does.
    script = textwrap.dedent(
        f"""
        import os, signal, sys, threading, time
        sys.path.insert(0, {str(__import__('pathlib').Path(__file__).parent)!r})
        import numpy as np, patchfeed
        from loader_testlib import take
        def make():
            return patchfeed.Loader({str(big_dir)!r}, {BIG_PATCH!r}, 4, num_threads=1,
                                    ring_size=1, seed=5, as_numpy=True)
        with make() as ref:
            want = take(ref, 100)
        loader = make()
        def interrupt():
            time.sleep(0.02)
            os.kill(os.getpid(), signal.SIGINT)
        threading.Thread(target=interrupt).start()
        got = []
        try:
            for _ in range(200):
                got += take(loader, 1)
            print("no interrupt")
            sys.exit(3)
        except KeyboardInterrupt:
            pass
        n = loader.state_dict()["next_batch"]
        assert got == want[:len(got)] and n in (len(got), len(got) + 1), (n, len(got))
        rest = take(loader, 3)
        assert rest == want[n:n + 3]
        print("resumed at", n, "after", len(got))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        check=False,
        env=env_with_package(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "resumed at" in proc.stdout


@pytest.mark.parametrize("as_numpy", [True, False])
def test_exit_with_live_loader_and_held_batches(big_dir, as_numpy):
    script = textwrap.dedent(
        f"""
        import threading, patchfeed
        loader = patchfeed.Loader({str(big_dir)!r}, {BIG_PATCH!r}, 2, num_threads=2,
                                  seed=1, as_numpy={as_numpy})
        kept = loader.next_batch()  # a held batch at exit
        other = patchfeed.Loader({str(big_dir)!r}, {BIG_PATCH!r}, 2, seed=2)
        # A second thread still waiting for batches when the main thread exits.
        def spin():
            while True:
                other.next_batch()  # dropped at once: the ring keeps turning
        t = threading.Thread(target=spin, daemon=True)
        t.start()
        print("exiting")
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        check=False,
        env=env_with_package(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "exiting" in proc.stdout


def test_close_from_another_thread_while_waiting_is_safe(big_dir):
    loader = patchfeed.Loader(big_dir, BIG_PATCH, 4, num_threads=1, ring_size=2, seed=9)
    errors = []

    def consume():
        try:
            for _ in range(50):
                loader.next_batch()
        except ValueError as e:  # closed under it
            errors.append(e)

    t = threading.Thread(target=consume)
    t.start()
    loader.close()
    t.join(timeout=60)
    assert not t.is_alive()
    assert all("closed" in str(e) for e in errors)


def test_take_helper_copies(big_dir):
    with patchfeed.Loader(big_dir, BIG_PATCH, 2, ring_size=1, seed=1) as loader:
        assert len(take(loader, 3)) == 3  # one slot: only works if nothing stays held
