# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""tools/gpu_check.sh (issue 16) without a GPU, so the device script does not rot while no
device is lent: the shell script's syntax and its --cpu-dry-run orchestration (a failing step
reported loudly, what came before kept); the measurement module's --cpu-dry-run of every step
(dataset writing, loader construction, the fallback with CUDA hidden, the comparison, stand-in
and U-Net loops on the CPU, the C++ example, results.json and summary.md); the merge of a
killed step; the unpacking of the carried .debs when tools/gpu_check.sh --prepare has run."""

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


def test_shell_dry_run_reports_a_failing_step_loudly_and_keeps_the_rest(tmp_path):
    # The orchestration (per-step limits, status, merge after each step, exit status) with the
    # steps that need no torch; cxx fails for want of its binary.
    proc = run_script(tmp_path, "--cpu-dry-run", GPU_CHECK_STEPS="dataset,pinned,bandwidth,cxx",
                      GPU_CHECK_TRAIN_LOOP=str(tmp_path / "no_such_binary"))
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "ERROR: step cxx FAILED" in proc.stdout
    assert "FAILED STEPS: cxx" in proc.stdout
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["dry_run"] is True
    steps = results["steps"]
    assert list(steps) == ["dataset", "pinned", "bandwidth", "cxx"]
    assert steps["dataset"]["status"] == "ok"
    assert steps["pinned"]["status"] == steps["bandwidth"]["status"] == "skipped"
    assert steps["cxx"]["status"] == "error"
    assert "does not exist" in steps["cxx"]["message"]
    assert "CPU DRY RUN" in (tmp_path / "summary.md").read_text()
    assert (tmp_path / "gpu_check.log").read_text().count("=== gpu_check step") == 4


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    """Every step of the measurement module with --cpu-dry-run, in this process (torch is
    imported once), as the shell calls them, then merged."""
    pytest.importorskip("torch")
    work = tmp_path_factory.mktemp("gpu_check_dry")
    steps_dir, data = work / "steps", work / "data"
    sys.path.insert(0, str(GPU_CHECK_DIR))
    try:
        import gpu_check

        train_loop = BUILD_DIR / "examples" / "train_loop" / "train_loop"
        status = []
        for step in gpu_check.STEPS:
            extra = ["--binary", str(train_loop)] if step == "cxx" and train_loop.exists() else []
            rc = gpu_check.main([step, "--steps-dir", str(steps_dir), "--data", str(data),
                                 "--cpu-dry-run", *extra])
            status.append(f"{step}\t{rc}\t0\n")
        (steps_dir / "status.tsv").write_text("".join(status))
        gpu_check.main(["merge", "--steps-dir", str(steps_dir), "--out", str(work / "out")])
    finally:
        sys.path.remove(str(GPU_CHECK_DIR))
    results = json.loads((work / "out" / "results.json").read_text())
    return results, work / "out", train_loop.exists()


def test_dry_run_passes_and_claims_no_gpu_figure(dry_run):
    results, out, _ = dry_run
    assert results["dry_run"] is True
    steps = results["steps"]
    assert list(steps) == ["dataset", "pinned", "fallback", "equal", "bandwidth", "standin",
                           "cxx", "unet"]
    for name in ("pinned", "bandwidth"):
        assert steps[name]["status"] == "skipped"
        assert "CUDA" in steps[name]["message"]
    for name in ("dataset", "fallback", "equal", "standin", "unet"):
        assert steps[name]["status"] == "ok", steps[name]
        assert steps[name]["exit"] == "0"
    for s in steps.values():  # a dry run measures nothing it could report as a GPU figure
        assert s["figures"] == {} and s["goals"] == {}, s
    assert "CPU DRY RUN" in (out / "summary.md").read_text()


def test_dry_run_fallback_with_cuda_hidden(dry_run):
    results, _, _ = dry_run
    fb = results["steps"]["fallback"]
    assert fb["child"]["pinned"] is False
    assert fb["child"]["unpinned_reason"]
    assert fb["child"]["batches_ok"] is True
    assert fb["child"]["shapes"]["image"] == [2, 1, 32, 32, 32]
    assert fb["child"]["device_cuda_error"].startswith("RuntimeError")
    assert all(c["ok"] for c in fb["checks"].values())


def test_dry_run_loops_ran(dry_run):
    results, _, built = dry_run
    eq = results["steps"]["equal"]["checks"]
    assert len(eq) == 2 and all(c["ok"] for c in eq.values())
    assert results["steps"]["standin"]["smoke"]["augmented_step_ms_mean"]["value"] > 0
    unet = results["steps"]["unet"]
    assert set(unet["runs"]) == {"no_loader", "threads_2", "threads_1"}
    assert all(r["steps"] == 2 for r in unet["runs"].values())
    cxx = results["steps"]["cxx"]
    if built:
        assert cxx["status"] == "ok" and cxx["smoke"]["cxx_samples_per_s"]["value"] > 0
    else:
        assert cxx["status"] == "skipped"


def test_merge_reports_a_killed_step(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(GPU_CHECK_DIR))
    import step_results as results

    steps = tmp_path / "steps"
    steps.mkdir()
    a = results.Step("bandwidth", str(steps), deadline=0, dry_run=False)
    a.figure("h2d_ring_gbps_median", 40.0, "GB/s")
    a.goal("ring H2D / torch pinned H2D", 0.9, ">= 0.80", True)
    b = results.Step("unet", str(steps), deadline=0, dry_run=False)  # killed while running
    b.figure("threads_16_steps_per_s", 10.0, "steps/s")
    (steps / "status.tsv").write_text("build\t0\t95\nbandwidth\t0\t20\nunet\t124\t300\n"
                                      "standin\tno-time\t0\n")
    merged = results.merge(str(steps), str(tmp_path / "out"))
    assert merged["steps"]["build"]["status"] == "ok"  # a shell step: no JSON of its own
    assert "| build | ok | 95 |" in (tmp_path / "out" / "summary.md").read_text()
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
    json_config = dest / "usr" / "share" / "cmake" / "nlohmann_json" / "nlohmann_jsonConfig.cmake"
    assert json_config.exists()
    for link in dest.rglob("*"):  # no link left pointing outside the prefix
        if link.is_symlink():
            assert not os.readlink(link).startswith("/") or os.readlink(link).startswith(
                str(dest)), link
    assert (lib / "libz.so").resolve().exists()


def test_python_module_help():
    proc = subprocess.run([sys.executable, str(GPU_CHECK_DIR / "gpu_check.py"), "--help"],
                          capture_output=True, text=True, check=True)
    assert "--cpu-dry-run" in proc.stdout
