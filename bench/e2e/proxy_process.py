# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Servers for the network benchmarks, each in a process of its own so that its Python neither
counts as the benchmark's CPU nor takes its GIL: the latency proxy (tests/servers/fault_proxy.py)
and the Range file server (tests/servers/range_http.py); and the CPU time of such a process."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

_SERVERS = pathlib.Path(__file__).resolve().parents[2] / "tests" / "servers"
CLK_TCK = os.sysconf("SC_CLK_TCK")

_PROXY_CHILD = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from fault_proxy import FaultProxy
proxy = FaultProxy(sys.argv[2]).start()
print(json.dumps({"url": proxy.url}), flush=True)
for line in sys.stdin:
    cmd = json.loads(line)
    out = {}
    if cmd["op"] == "delay":
        proxy.delay_s = cmd["seconds"]
    elif cmd["op"] == "reset":
        proxy.reset_stats()
    elif cmd["op"] == "stats":
        out = proxy.stats()
    print(json.dumps(out), flush=True)
proxy.stop()
"""


class ProxyProcess:
    """tests/servers/fault_proxy.py in a child process, driven by JSON lines."""

    def __init__(self, upstream: str) -> None:
        self._proc = subprocess.Popen([sys.executable, "-c", _PROXY_CHILD, str(_SERVERS), upstream],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.pid = self._proc.pid
        self.url = json.loads(self._proc.stdout.readline())["url"]

    def _call(self, **cmd) -> dict:
        self._proc.stdin.write(json.dumps(cmd) + "\n")
        self._proc.stdin.flush()
        return json.loads(self._proc.stdout.readline())

    def set_delay(self, seconds: float) -> None:
        self._call(op="delay", seconds=seconds)

    def reset_stats(self) -> None:
        self._call(op="reset")

    def stats(self) -> dict:
        return self._call(op="stats")

    def stop(self) -> None:
        self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


class RangeServerProcess:
    """tests/servers/range_http.py serving `root` from a child process."""

    def __init__(self, root: str | os.PathLike) -> None:
        self._proc = subprocess.Popen([sys.executable, str(_SERVERS / "range_http.py"), str(root)],
                                      stdout=subprocess.PIPE, text=True)
        self.pid = self._proc.pid
        # "serving <root> at <url>; Ctrl-C stops"
        self.url = self._proc.stdout.readline().split(" at ", 1)[1].split(";", 1)[0]

    def stop(self) -> None:
        self._proc.terminate()
        self._proc.wait(timeout=10)


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads), from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat") as f:
        # The command name may hold spaces: the fields after it start past its ")".
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK
