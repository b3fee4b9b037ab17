# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""tools/gpu_check.sh (issue 16) without a GPU, so the device script does not rot while no
device is lent: the shell script's syntax, its --cpu-dry-run (the measurement code on a tiny
dataset: dataset writing, loader construction, the fallback with CUDA hidden, the comparison,
stand-in and U-Net loops on the CPU, the C++ example, results.json and summary.md), a failing
step reported loudly with what came before kept, the merge of a killed step, and the unpacking
of the carried .debs when tools/gpu_check.sh --prepare has downloaded them."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
from conftest import BUILD_DIR, REPO
from loader_testlib import env_with_package

SCRIPT = REPO / "tools" / "gpu_check.sh"
GPU_CHECK_DIR = REPO / "tools" / "gpu_check"


def run_script(out: pathlib.Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    e = dict(env_with_package(), OUT=str(out), **env)
    return subprocess.run(["bash", str(SCRIPT), *args], env=e, capture_output=True, text=True,
                          timeout=180, check=False)


def test_shell_syntax():
    subprocess.run(["bash", "-n", str(SCRIPT)], check=True)
    if shutil.which("shellcheck"):
        proc = subprocess.run(["shellcheck", str(SCRIPT)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    pytest.importorskip("torch")
    out = tmp_path_factory.mktemp("gpu_check_dry")
    extra = {}
    train_loop = BUILD_DIR / "examples" / "train_loop" / "train_loop"
    if train_loop.exists():
        extra["GPU_CHECK_TRAIN_LOOP"] = str(train_loop)
    proc = run_script(out, "--cpu-dry-run", **extra)
    results = json.loads((out / "results.json").read_text())
    return proc, results, out, bool(extra)


def test_dry_run_passes_and_claims_no_gpu_figure(dry_run):
    proc, results, out, _ = dry_run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "every step passed" in proc.stdout
    assert results["dry_run"] is True
    steps = results["steps"]
    assert list(steps) == ["dataset", "pinned", "fallback", "equal", "bandwidth", "standin",
                           "cxx", "unet"]
    for name in ("pinned", "bandwidth"):
        assert steps[name]["status"] == "skipped"
        assert "CUDA" in steps[name]["message"]
    for name in ("dataset", "fallback", "equal", "standin", "unet"):
        assert steps[name]["status"] == "ok", steps[name]
    for s in steps.values():  # a dry run measures nothing it could report as a GPU figure
        assert s["figures"] == {} and s["goals"] == {}, s
    summary = (out / "summary.md").read_text()
    assert "CPU DRY RUN" in summary
    assert (out / "gpu_check.log").read_text().count("=== gpu_check step") == 8


def test_dry_run_fallback_with_cuda_hidden(dry_run):
    _, results, _, _ = dry_run
    fb = results["steps"]["fallback"]
    assert fb["child"]["pinned"] is False
    assert fb["child"]["unpinned_reason"]
    assert fb["child"]["batches_ok"] is True
    assert fb["child"]["shapes"]["image"] == [2, 1, 32, 32, 32]
    assert fb["child"]["device_cuda_error"].startswith("RuntimeError")
    assert all(c["ok"] for c in fb["checks"].values())


def test_dry_run_loops_ran(dry_run):
    _, results, _, built = dry_run
    eq = results["steps"]["equal"]["checks"]
    assert len(eq) == 2 and all(c["ok"] for c in eq.values())
    unet = results["steps"]["unet"]
    assert set(unet["runs"]) == {"no_loader", "threads_2", "threads_1"}
    assert all(r["steps"] == 2 for r in unet["runs"].values())
    cxx = results["steps"]["cxx"]
    if built:
        assert cxx["status"] == "ok" and cxx["smoke"]["cxx_samples_per_s"]["value"] > 0
    else:
        assert cxx["status"] == "skipped"


def test_a_failing_step_is_loud_and_keeps_what_came_before(tmp_path):
    proc = run_script(tmp_path, "--cpu-dry-run", GPU_CHECK_STEPS="dataset,cxx",
                      GPU_CHECK_TRAIN_LOOP=str(tmp_path / "no_such_binary"))
    assert proc.returncode == 1
    assert "ERROR: step cxx FAILED" in proc.stdout
    assert "FAILED STEPS: cxx" in proc.stdout
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["steps"]["dataset"]["status"] == "ok"
    assert results["steps"]["cxx"]["status"] == "error"
    assert "does not exist" in results["steps"]["cxx"]["message"]


def test_merge_reports_a_killed_step(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(GPU_CHECK_DIR))
    import results

    steps = tmp_path / "steps"
    steps.mkdir()
    a = results.Step("bandwidth", str(steps), deadline=0, dry_run=False)
    a.figure("h2d_ring_gbps_median", 40.0, "GB/s")
    a.goal("ring H2D / torch pinned H2D", 0.9, ">= 0.80", True)
    b = results.Step("unet", str(steps), deadline=0, dry_run=False)  # killed while running
    b.figure("threads_16_steps_per_s", 10.0, "steps/s")
    (steps / "status.tsv").write_text("bandwidth\t0\t20\nunet\t124\t300\nstandin\tno-time\t0\n")
    merged = results.merge(str(steps), str(tmp_path / "out"))
    assert merged["steps"]["unet"]["status"] == "timeout"
    assert merged["steps"]["standin"]["status"] == "not run"
    assert merged["steps"]["unet"]["figures"]["threads_16_steps_per_s"]["value"] == 10.0
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "| bandwidth | ring H2D / torch pinned H2D | 0.9 | >= 0.80 | yes |" in summary
    assert "| unet | timeout |" in summary
    assert "CPU DRY RUN" not in summary


def test_unpack_makes_a_relocated_prefix(tmp_path):
    debs = REPO / "third_party_debs"
    if not any(debs.glob("*.deb")):
        pytest.skip("no .debs: tools/gpu_check.sh --prepare downloads them (not in git)")
    dest = tmp_path / "deps"
    subprocess.run(["bash", str(SCRIPT), "--unpack", str(dest)], check=True,
                   capture_output=True)
    lib = dest / "usr" / "lib" / "x86_64-linux-gnu"
    env = dict(os.environ,
               PKG_CONFIG_LIBDIR=f"{lib / 'pkgconfig'}:{dest / 'usr' / 'share' / 'pkgconfig'}")
    flags = subprocess.run([str(dest / "bin" / "pkg-config"), "--cflags", "--libs", "liblz4",
                            "libzstd", "libdeflate", "tbb", "eigen3", "zlib"], env=env,
                           capture_output=True, text=True, check=True).stdout.split()
    paths = [f[2:] for f in flags if f.startswith(("-I", "-L"))]
    assert paths and all(p.startswith(str(dest)) for p in paths), flags
    assert (lib / "cmake" / "TBB" / "TBBConfig.cmake").exists()
    assert (dest / "usr" / "share" / "eigen3" / "cmake" / "Eigen3Config.cmake").exists()
    for link in dest.rglob("*"):  # no link left pointing outside the prefix
        if link.is_symlink():
            assert not os.readlink(link).startswith("/") or os.readlink(link).startswith(
                str(dest)), link
    assert (lib / "libz.so").resolve().exists()


def test_python_module_help():
    proc = subprocess.run([sys.executable, str(GPU_CHECK_DIR / "gpu_check.py"), "--help"],
                          capture_output=True, text=True, check=True)
    assert "--cpu-dry-run" in proc.stdout
