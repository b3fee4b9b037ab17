# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""`python -m patchfeed`: the C++ CLI's commands run in-process (same output and exit codes as
the binary) plus the Python `bench`; and the package's typing files are there."""

from __future__ import annotations

import io
import json
import pathlib
import subprocess
import sys

import blosc2
import numpy as np
import patchfeed
import pytest
from loader_testlib import env_with_package, write_dataset


def run(*args, check=True):
    proc = subprocess.run(
        [sys.executable, "-m", "patchfeed", *map(str, args)],
        check=False,
        env=env_with_package(),
        capture_output=True,
        timeout=120,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"patchfeed {args} exited {proc.returncode}: {proc.stderr!r}")
    return proc


@pytest.fixture(scope="module")
def dataset_dir(tmp_path_factory):
    return write_dataset(tmp_path_factory.mktemp("package_cli"))


def test_help_lists_every_command():
    out = run("--help").stdout.decode()
    for command in ("info", "read", "compress", "decompress", "demo", "bench"):
        assert f"  {command}" in out


def test_info_and_read_match_blosc2(dataset_dir, tmp_path):
    path = dataset_dir / "case_001.b2nd"
    info = json.loads(run("info", path).stdout)
    arr = blosc2.open(str(path))
    assert info["shape"] == list(arr.shape)
    out = run("read", path, "--box", "0:1,2:10,0:5,3:9", "--npy", "--out", "-").stdout
    np.testing.assert_array_equal(np.load(io.BytesIO(out)), arr[0:1, 2:10, 0:5, 3:9])


def test_compress_decompress_round_trip(tmp_path):
    raw = np.arange(50000, dtype=np.int32).tobytes()
    (tmp_path / "in.raw").write_bytes(raw)
    run("compress", tmp_path / "in.raw", tmp_path / "c.chunk", "--typesize", 4, "--codec",
        "zstd", "--clevel", 5, "--filter", "shuffle")
    assert blosc2.decompress(( tmp_path / "c.chunk").read_bytes()) == raw
    run("decompress", tmp_path / "c.chunk", tmp_path / "out.raw")
    assert (tmp_path / "out.raw").read_bytes() == raw


def test_errors_keep_the_binary_exit_codes(tmp_path):
    proc = run("info", tmp_path / "missing.b2nd", check=False)
    assert proc.returncode == 1 and b"missing.b2nd" in proc.stderr
    assert run("frobnicate", check=False).returncode == 2
    assert run(check=False).returncode == 2


def test_demo_runs(tmp_path):
    out = run("demo", "--dir", tmp_path / "d", "--cases", 2, "--steps", 3, "--patch",
              "16,16,16", "--threads", 1).stdout.decode()
    assert "match single-threaded reads" in out


def test_bench_reports_throughput(dataset_dir):
    out = run("bench", dataset_dir, "--patch", "16,16,16", "--steps", 5, "--warmup", 1,
              "--threads", 1, "--json").stdout
    result = json.loads(out.decode().strip().splitlines()[-1])
    assert result["steps"] == 5 and result["samples_per_s"] > 0
    assert result["cpu_s_per_sample"] > 0 and result["peak_rss_mb"] > 0
    assert run("bench", "--steps", 0, check=False).returncode == 2


def test_console_entry_point_is_main():
    from patchfeed.cli import main

    assert main(["--help"]) == 0


def test_typing_files_ship_with_the_package():
    pkg = pathlib.Path(patchfeed.__file__).parent
    assert (pkg / "py.typed").is_file()
    stub = (pkg / "_core.pyi").read_text()
    for name in ("class Loader", "class Batch", "class Dataset", "def run_cli"):
        assert name in stub
    assert patchfeed.Loader.__doc__ and patchfeed.Loader.next_batch.__doc__
