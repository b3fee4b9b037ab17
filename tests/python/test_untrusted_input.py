# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Untrusted input and faults seen from Python and the command line: huge but valid arrays are
one clear error (never an abort or a traceback), a case too large for the foreground index is a
MemoryError naming it, a file truncated under a running mapped loader is an error at the next
batch (not SIGBUS), 2-D datasets load, and the small ones (info names the file, empty dtypes).
"""

from __future__ import annotations

import os
import subprocess
import sys

import blosc2
import numpy as np
import patchfeed
import pytest
from loader_testlib import env_with_package, reference_box, write_dataset

# A valid 1 TiB array that costs 278 bytes on disk: every chunk is an all-zero special chunk.
HUGE_SHAPE = (1024, 1024, 1024, 256)


@pytest.fixture(scope="module")
def huge_array(tmp_path_factory):
    path = tmp_path_factory.mktemp("huge") / "big.b2nd"
    blosc2.zeros(HUGE_SHAPE, dtype=np.float32, chunks=(64, 64, 64, 64), blocks=(32, 32, 32, 32),
                 urlpath=str(path), mode="w")
    return path


def run(argv):
    return subprocess.run(argv, check=False, capture_output=True, text=True, timeout=120,
                          env=env_with_package())


@pytest.mark.parametrize("how", ["binary", "console"])
def test_reading_a_huge_array_is_one_line_naming_the_size(huge_array, cli_path, tmp_path, how):
    """Was an uncaught std::bad_alloc (abort, exit 134) in the binary and a traceback from
    `python -m patchfeed`."""
    prefix = [str(cli_path)] if how == "binary" else [sys.executable, "-m", "patchfeed"]
    proc = run(prefix + ["read", str(huge_array), "--out", str(tmp_path / "out.raw")])
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert str(huge_array) in lines[0] and "1.0 TiB" in lines[0], lines[0]
    assert "Traceback" not in proc.stderr


def test_reading_a_huge_box_in_python_is_a_memory_error(huge_array):
    arr = patchfeed.open_array(str(huge_array))
    with pytest.raises(MemoryError, match=r"big\.b2nd.*1\.0 TiB"):
        arr[...]
    assert arr[3, 5, 7, :4].tolist() == [0.0] * 4  # the array itself is fine


def test_a_case_too_large_for_its_foreground_index_is_a_memory_error(tmp_path):
    """1 TiB of label map: the index could need more than this machine has. Refused before
    scanning, naming the case and the file (was a bare std::bad_alloc)."""
    for suffix, dtype in ((".b2nd", np.float32), ("_seg.b2nd", np.int16)):
        blosc2.zeros((1, 8192, 8192, 16384), dtype=dtype, chunks=(1, 64, 512, 512),
                     blocks=(1, 32, 64, 64), urlpath=str(tmp_path / f"big{suffix}"), mode="w")
    with pytest.raises(MemoryError, match=r"case 'big'.*big_seg\.b2nd.*foreground index"):
        patchfeed.Loader(str(tmp_path), (64, 64, 64), 2, oversample_foreground=0.33)
    # Without foreground sampling the case loads and reads.
    loader = patchfeed.Loader(str(tmp_path), (64, 64, 64), 2, oversample_foreground=0,
                              as_numpy=True)
    batch = next(iter(loader))
    assert batch["image"].shape == (2, 1, 64, 64, 64) and not batch["image"].any()


def test_file_truncated_under_a_mapped_loader_is_an_error_not_sigbus(tmp_path):
    """Run in a child process: before the fix, this killed the interpreter with SIGBUS."""
    write_dataset(tmp_path)
    script = f"""
import os, patchfeed
loader = patchfeed.Loader({str(tmp_path)!r}, (16, 16, 16), 2, seed=0, num_threads=2,
                          io_mode="mmap", as_numpy=True)
it = iter(loader)
for _ in range(3):
    next(it)
os.truncate({str(tmp_path / "case_001.b2nd")!r}, 0)  # every mapped page faults
try:
    for _ in range(40):
        next(it)
    print("no error")
except patchfeed.CorruptDataError as e:
    print("error:", e)
"""
    proc = run([sys.executable, "-c", script])
    assert proc.returncode == 0, (proc.returncode, proc.stderr)
    out = proc.stdout
    assert out.startswith("error:"), out
    assert "case 'case_001'" in out and str(tmp_path / "case_001.b2nd") in out, out
    assert "shrank while it was mapped" in out or "too short" in out, out


def write_2d_dataset(folder, n=3):
    """nnU-Net's 2-D layout: (1, H, W) images and label maps, written by python-blosc2."""
    rng = np.random.default_rng(5)
    for i in range(n):
        shape = (1, 60 + 4 * i, 70)
        img = rng.standard_normal(shape, dtype=np.float32)
        seg = (rng.random(shape) > 0.97).astype(np.int16)
        for arr, suffix in ((img, ".b2nd"), (seg, "_seg.b2nd")):
            blosc2.asarray(arr, urlpath=str(folder / f"case{i}{suffix}"), mode="w",
                           chunks=(1, 32, 32), blocks=(1, 16, 16))


@pytest.mark.parametrize("oversample", [0.0, 1.0])
def test_2d_datasets_load(tmp_path, oversample):
    """(1, H, W) cases with a 2-D patch failed every batch ('voxel has 3 coordinates, want 2')
    as soon as foreground sampling was on."""
    write_2d_dataset(tmp_path)
    before = sorted(os.listdir(tmp_path))
    loader = patchfeed.Loader(str(tmp_path), (24, 24), 4, seed=1, as_numpy=True,
                              oversample_foreground=oversample)
    for _, batch in zip(range(5), loader):
        assert batch["image"].shape == (4, 1, 24, 24)
        for j, sample in enumerate(loader.last_batch.samples):
            paths = loader.dataset.paths(sample.case_index)
            for name, path, pad in (("image", paths[0], 0), ("seg", paths[1], -1)):
                want = reference_box(path, sample.box_start, (24, 24), pad)
                np.testing.assert_array_equal(batch[name][j], want)
            assert sample.forced_foreground == (oversample > 0)
            if sample.forced_foreground:
                assert (batch["seg"][j] == 1).any(), sample
    del before  # the foreground cache location is issue 12's; listing checked there


def test_info_names_the_file_on_metalayer_errors(tmp_path, cli_path):
    path = tmp_path / "a.b2nd"
    blosc2.asarray(np.arange(100, dtype=np.int32), urlpath=str(path), mode="w")
    data = bytearray(path.read_bytes())
    i = data.find(b"<i4")
    data[i - 4:i] = (200).to_bytes(4, "big")  # the dtype string's length runs past the end
    path.write_bytes(bytes(data))
    proc = run([str(cli_path), "info", str(path)])
    assert proc.returncode == 1 and str(path) in proc.stderr and "b2nd" in proc.stderr, proc.stderr


def test_empty_dtype_is_rejected_alike_by_cli_and_python(tmp_path, cli_path):
    path = tmp_path / "a.b2nd"
    blosc2.asarray(np.arange(100, dtype=np.int32), urlpath=str(path), mode="w")
    data = bytearray(path.read_bytes())
    i = data.find(b"<i4")
    assert data[i - 5] == 0xDB  # str32: marker, 4-byte length, the string
    data[i - 4:i] = (0).to_bytes(4, "big")
    data[i:i + 3] = b"\x00\x00\x00"  # whatever follows the (now empty) string is padding
    path.write_bytes(bytes(data))
    proc = run([str(cli_path), "read", str(path), "--out", str(tmp_path / "o")])
    assert proc.returncode == 1 and "dtype string is empty" in proc.stderr, proc.stderr
    with pytest.raises(patchfeed.CorruptDataError, match=r"a\.b2nd.*dtype string is empty"):
        patchfeed.open_array(str(path))
