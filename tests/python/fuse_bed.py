# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""A network-like file system for tests and benches: `mounted(source_dir, ...)` mounts
`patchfeed_latency_fs` (tests/fuse/latency_fs.cc) over a copy-free view of `source_dir` with a
delay per read request, an optional bandwidth cap, direct_io (no page cache: every run is
cold) and fault injection, and yields the mount point.

    with mounted(folder, delay_us=2000) as mnt:
        loader = patchfeed.Loader(mnt, ..., io_mode="pread")
        print(read_stats(mnt)["max_in_flight"])

The binary is `$PATCHFEED_LATENCY_FS`, else `$PATCHFEED_BUILD_DIR/tests/fuse/
patchfeed_latency_fs` (`<repo>/build/...` without the variable). Where it is missing, where
/dev/fuse is absent or where mounting is not permitted (a container without CAP_SYS_ADMIN, a
user without access to /dev/fuse) the calling test is skipped with the reason, unless
`PATCHFEED_REQUIRE_FUSE=1`, which turns those skips into failures (for machines that must run
these tests).
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
STATS_NAME = ".latency_fs_stats"

# What mount(2), fusermount3 and libfuse print when this machine does not let us mount.
_NOT_PERMITTED = ("not permitted", "permission denied", "fusermount", "/dev/fuse",
                  "no such device")


def binary_path() -> pathlib.Path:
    """Where the latency file system binary is expected (it may not exist)."""
    explicit = os.environ.get("PATCHFEED_LATENCY_FS")
    if explicit:
        return pathlib.Path(explicit)
    build = pathlib.Path(os.environ.get("PATCHFEED_BUILD_DIR", REPO / "build"))
    return build / "tests" / "fuse" / "patchfeed_latency_fs"


def _skip(reason: str) -> None:
    if os.environ.get("PATCHFEED_REQUIRE_FUSE") == "1":
        pytest.fail(f"{reason} (PATCHFEED_REQUIRE_FUSE=1)")
    pytest.skip(reason)


def _unmount(mountpoint: str, proc: subprocess.Popen) -> None:
    """fusermount3 -u, else (busy, or no fusermount3) SIGTERM, on which the file system
    unmounts itself, then SIGKILL and a lazy unmount: never leaves a mount behind."""
    fusermount = shutil.which("fusermount3")
    if proc.poll() is None:
        unmounted = False
        if fusermount and os.path.ismount(mountpoint):
            done = subprocess.run([fusermount, "-u", mountpoint], capture_output=True,
                                  timeout=10)
            unmounted = done.returncode == 0
        if not unmounted:
            proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc.returncode != 0:  # a dead mount ("transport endpoint is not connected") may remain
        lazy = [fusermount, "-uz", mountpoint] if fusermount else ["umount", "-l", mountpoint]
        subprocess.run(lazy, capture_output=True, timeout=10)


@contextlib.contextmanager
def mounted(
    source_dir: os.PathLike | str,
    delay_us: int = 0,
    bandwidth_mbps: float = 0,
    max_read: int = 128 * 1024,
    eio_path_substring: str | None = None,
    eio_range: tuple[int, int] | None = None,
    short_read_path_substring: str | None = None,
    timeout_s: float = 10.0,
) -> Iterator[pathlib.Path]:
    """Mounts `source_dir` read-only through patchfeed_latency_fs and yields the mount point.

    delay_us: the least time from a read request's arrival to its answer; requests in flight
      together wait together (N concurrent reads take about one delay).
    bandwidth_mbps: megabytes (10^6 bytes) per second over one link shared by all requests
      (0: unlimited).
    max_read: the largest read request the kernel sends; larger reads become several requests.
    eio_path_substring: reads of files whose path (relative to the mount) contains it fail
      with EIO; with `eio_range=(begin, end)` only reads overlapping bytes [begin, end) do.
    short_read_path_substring: reads of such files return half the bytes asked for.

    Unmounts on exit, also when the body raises; skips the test where FUSE is unavailable.
    """
    binary = binary_path()
    if not binary.is_file():
        _skip(f"patchfeed_latency_fs is not built at {binary} (needs libfuse3-dev, tests on; "
              "or set PATCHFEED_LATENCY_FS)")
    if not os.path.exists("/dev/fuse"):
        _skip("/dev/fuse is absent: FUSE mounts are not possible on this machine")
    mountpoint = tempfile.mkdtemp(prefix="latency_fs_")
    cmd = [str(binary), "--source", os.fspath(source_dir), mountpoint, "-f",
           "--delay-us", str(int(delay_us)),
           "--bandwidth-mbps", repr(float(bandwidth_mbps)), "--max-read", str(int(max_read))]
    if eio_path_substring:
        cmd += ["--eio-path-substring", eio_path_substring]
    if eio_range is not None:
        cmd += ["--eio-range", f"{int(eio_range[0])}:{int(eio_range[1])}"]
    if short_read_path_substring:
        cmd += ["--short-read-path-substring", short_read_path_substring]

    log = tempfile.TemporaryFile(mode="w+")  # a file, not a pipe: -d output cannot block it
    proc = subprocess.Popen(cmd, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + timeout_s
        while not os.path.ismount(mountpoint):
            if proc.poll() is not None:
                log.seek(0)
                output = log.read().strip()
                if any(s in output.lower() for s in _NOT_PERMITTED):
                    _skip(f"mounting FUSE is not permitted here: {output}")
                raise RuntimeError(f"patchfeed_latency_fs exited with {proc.returncode} "
                                   f"before mounting: {output}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"patchfeed_latency_fs did not mount {mountpoint} within "
                                   f"{timeout_s} s")
            time.sleep(0.005)
        yield pathlib.Path(mountpoint)
        if proc.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"patchfeed_latency_fs died while mounted "
                               f"(exit {proc.returncode}): {log.read().strip()}")
    finally:
        _unmount(mountpoint, proc)
        log.close()
        with contextlib.suppress(OSError):
            os.rmdir(mountpoint)


def read_stats(mountpoint: os.PathLike | str) -> dict:
    """The file system's counters: requests (read requests answered on source files, faults
    included), bytes, in_flight, max_in_flight (the most requests waiting at once),
    max_request_bytes, eio_replies, short_replies, opens, and its settings."""
    with open(os.path.join(mountpoint, STATS_NAME)) as f:
        return json.loads(f.read())


def reset_stats(mountpoint: os.PathLike | str) -> None:
    """Zeroes the counters (max_in_flight restarts from the requests now in flight)."""
    with open(os.path.join(mountpoint, STATS_NAME), "w") as f:
        f.write("reset")
