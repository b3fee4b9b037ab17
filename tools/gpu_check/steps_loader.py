# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Steps that check behaviour: the dataset, the pinned ring, the fallback with CUDA hidden,
device="cuda" batches equal to the CPU ones, and the C++ example loop."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from typing import Any

from step_results import Skip, Step
from workload import Sizes, fg_cache_dir, loader_kwargs


def dataset(step: Step, s: Sizes, data: str) -> None:
    """Synthetic nnU-Net-like cases written by the C++ `demo` command (kept for a rerun)."""
    from patchfeed import _core

    marker = os.path.join(data, "gpu_check_sizes.json")
    want = {"cases": s.cases, "patch": s.patch}
    if os.path.exists(marker) and json.load(open(marker)) == want:
        step.note(f"reusing the dataset in {data}")
    else:
        shutil.rmtree(data, ignore_errors=True)
        t0 = time.time()
        rc = _core.run_cli(["demo", "--dir", data, "--cases", str(s.cases), "--steps", "1",
                            "--patch", ",".join([str(s.patch)] * 3), "--batch", "1",
                            "--threads", str(s.threads)])
        step.check("patchfeed demo wrote the dataset", rc == 0, f"exit {rc}")
        step.figure("write_s", time.time() - t0, "s")
        with open(marker, "w") as f:
            json.dump(want, f)
    files = [f for f in os.listdir(data) if f.endswith(".b2nd")]
    nbytes = sum(os.path.getsize(os.path.join(data, f)) for f in files)
    step.check("cases on disk", len(files) == 2 * s.cases, f"{len(files)} .b2nd files")
    step.figure("dataset_mb", nbytes / 1e6, "MB")


def _child_env(**extra: str) -> dict[str, str]:
    """The environment for a child process that imports the same patchfeed as this one."""
    import patchfeed

    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(patchfeed.__file__)))
    path = os.environ.get("PYTHONPATH", "")
    return dict(os.environ, PYTHONPATH=pkg_parent + (os.pathsep + path if path else ""), **extra)


def _cudart_mapped() -> list[str]:
    with open("/proc/self/maps") as f:
        return sorted({line.split()[-1] for line in f if "libcudart" in line})


def pinned(step: Step, s: Sizes, data: str) -> None:
    """The ring pinned by cudaHostRegister on the real driver, and torch agreeing."""
    if step.dry_run:
        raise Skip("--cpu-dry-run: pinning needs a CUDA device")
    import patchfeed
    import torch

    host = {"torch": torch.__version__, "torch_cuda": torch.version.cuda}
    if torch.cuda.is_available():
        host["gpu"] = torch.cuda.get_device_name(0)
    smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True, check=False)
    host["driver"] = smi.stdout.strip() or smi.stderr.strip()
    step.set("host", host)
    if not step.check("torch.cuda.is_available()", torch.cuda.is_available(), host):
        return
    kw = loader_kwargs(s, fg_cache_dir(data), num_threads=4)
    loader = patchfeed.Loader(data, pin_memory=True, **kw)  # True: fail rather than fall back
    with loader:
        step.check("Loader(pin_memory=True) pinned the ring", loader.pinned,
                   loader.unpinned_reason or None)
        batch = next(iter(loader))
        step.check("the batch is from a pinned slot", loader.last_batch.pinned)
        step.check("torch sees the batch tensors as pinned (cudaHostRegister'ed)",
                   all(t.is_pinned() for t in batch.values()),
                   {k: t.is_pinned() for k, t in batch.items()})
        del batch
    step.set("libcudart_mapped", _cudart_mapped())
    # A program that builds its loader before importing torch: does dlopen find libcudart
    # on its own? (Information: the Python steps import torch first.)
    code = ("import json, sys, patchfeed; l = patchfeed.Loader(sys.argv[1], as_numpy=True, "
            "**json.loads(sys.argv[2])); print(json.dumps([l.pinned, l.unpinned_reason]))")
    r = subprocess.run([sys.executable, "-c", code, data, json.dumps(kw)], env=_child_env(),
                       capture_output=True, text=True, timeout=max(10, min(60, step.left())),
                       check=False)
    step.set("without_torch_import", r.stdout.strip() or r.stderr.strip()[-500:])
    step.note(f"pinned when patchfeed is used without importing torch first: "
              f"{r.stdout.strip() or 'error: ' + r.stderr.strip()[-200:]}")


def fallback(step: Step, s: Sizes, data: str) -> None:
    """With CUDA hidden (CUDA_VISIBLE_DEVICES=) the ring is plain memory, batches still come,
    pin_memory=True and device="cuda" fail with a message."""
    env = _child_env(CUDA_VISIBLE_DEVICES="")
    r = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "gpu_check.py"),
                        "fallback-child", "--data", data] + (["--cpu-dry-run"] if step.dry_run
                                                             else []),
                       env=env, capture_output=True, text=True,
                       timeout=max(10, min(90, step.left())), check=False)
    sys.stdout.write(r.stderr[-2000:])
    if not step.check("the CUDA-hidden child ran", r.returncode == 0 and r.stdout.strip() != "",
                      f"exit {r.returncode}"):
        return
    got = json.loads(r.stdout.strip().splitlines()[-1])
    step.set("child", got)
    step.check("ring not pinned", got["pinned"] is False)
    step.check("unpinned_reason says why", bool(got["unpinned_reason"]), got["unpinned_reason"])
    step.check("batches still come, with the layout's shapes", got["batches_ok"],
               got["shapes"])
    step.check("pin_memory=True raises", got["pin_required_error"] is not None,
               got["pin_required_error"])
    step.check("torch.cuda.is_available() is False", got["cuda_available"] is False)
    step.check("device='cuda' raises RuntimeError", got["device_cuda_error"] is not None
               and got["device_cuda_error"].startswith("RuntimeError"), got["device_cuda_error"])


def fallback_child(s: Sizes, data: str) -> dict[str, Any]:
    # torch first, as a trainer does: its libcudart is then loaded, so the loader reaches
    # cudaHostRegister and sees it fail for want of a device (not for want of a runtime).
    import torch

    import patchfeed

    kw = loader_kwargs(s, fg_cache_dir(data), num_threads=2)
    out: dict[str, Any] = {}
    with patchfeed.Loader(data, as_numpy=True, **kw) as loader:
        out["pinned"] = loader.pinned
        out["unpinned_reason"] = loader.unpinned_reason
        layout = {k: list(shape) for k, (_, shape) in loader.array_layout.items()}
        it = iter(loader)
        shapes = [{k: list(v.shape) for k, v in next(it).items()} for _ in range(3)]
        out["shapes"] = shapes[0]
        out["batches_ok"] = all(sh == layout for sh in shapes)
    for key, extra in (("pin_required_error", {"pin_memory": True, "as_numpy": True}),
                       ("device_cuda_error", {"device": "cuda"})):
        try:
            patchfeed.Loader(data, **kw, **extra).close()
            out[key] = None
        except Exception as e:  # noqa: BLE001 (the point: which error, with which message)
            out[key] = f"{type(e).__name__}: {e}"
    out["cuda_available"] = torch.cuda.is_available()
    return out


def _flat(batch: dict[str, Any]) -> list[tuple[str, Any]]:
    out = []
    for k, v in batch.items():
        for i, t in enumerate(v if isinstance(v, list) else [v]):
            out.append((f"{k}[{i}]" if isinstance(v, list) else k, t))
    return out


def equal(step: Step, s: Sizes, data: str, n_batches: int = 4) -> None:
    """device="cuda" batches equal, bit for bit, the device="cpu" batches of the same seed:
    plain patches, and nnU-Net's augmentation with deep-supervision targets (a list)."""
    import patchfeed
    import torch

    if step.dry_run:
        step.note("--cpu-dry-run: comparing two device='cpu' loaders (the code path only)")
        gpu = "cpu"
    elif not torch.cuda.is_available():
        raise RuntimeError("no CUDA device")
    else:
        gpu = "cuda"
    fg = fg_cache_dir(data)
    for name, extra in (("plain", {}), ("augmented", {"augment": True, "deep_supervision": True})):
        kw = loader_kwargs(s, fg, seed=11, **extra)
        with patchfeed.Loader(data, device=gpu, **kw) as a, \
                patchfeed.Loader(data, device="cpu", **kw) as b:
            mismatches, compared = [], 0
            for i, (x, y) in enumerate(zip(a, b)):
                fx, fy = _flat(x), _flat(y)
                if [k for k, _ in fx] != [k for k, _ in fy]:
                    mismatches.append((i, "keys", [k for k, _ in fx], [k for k, _ in fy]))
                for (k, tx), (_, ty) in zip(fx, fy):
                    if tx.device.type != gpu:
                        mismatches.append((i, k, f"on {tx.device}"))
                    elif not torch.equal(tx.cpu(), ty):
                        mismatches.append((i, k, "values differ"))
                    compared += 1
                del x, y
                if i + 1 == n_batches:
                    break
        step.check(f"{name}: {n_batches} device={gpu!r} batches equal the CPU ones",
                   not mismatches and compared > 0, mismatches[:5] or f"{compared} arrays")


def cxx(step: Step, s: Sizes, data: str, binary: str | None, cudart_dir: str | None) -> None:
    """examples/train_loop (C++, no Python) over the same dataset: pinned ring, throughput."""
    if not binary:
        raise Skip("no train_loop binary given (the device run builds it)")
    if not os.path.exists(binary):
        raise RuntimeError(f"{binary} does not exist: the build step did not make it")
    steps = 20 if step.dry_run else 300
    env = dict(os.environ)
    if cudart_dir:
        env["LD_LIBRARY_PATH"] = cudart_dir + os.pathsep + env.get("LD_LIBRARY_PATH", "")
    step.set("cudart_dir", cudart_dir)
    cmd = [binary, "--dir", data, "--patch", ",".join([str(s.patch)] * 3), "--batch",
           str(s.batch), "--threads", str(s.threads), "--steps", str(steps)]
    for label, extra_env in (("visible", {}), ("hidden", {"CUDA_VISIBLE_DEVICES": ""})):
        r = subprocess.run(cmd, env=dict(env, **extra_env), capture_output=True, text=True,
                           timeout=max(10, min(90, step.left())), check=False)
        lines = r.stdout.strip().splitlines()
        print("\n".join(lines[:1] + lines[-2:]), flush=True)
        if not step.check(f"train_loop ran (CUDA {label})", r.returncode == 0,
                          f"exit {r.returncode}: {r.stderr.strip()[-300:]}"):
            continue
        ring = re.search(r"ring of \d+ slots \((pinned|not pinned)\)", r.stdout)
        is_pinned = ring is not None and ring.group(1) == "pinned"
        if label == "hidden":
            step.check("train_loop's ring is not pinned with CUDA hidden", not is_pinned)
            continue
        if step.dry_run:
            step.note(f"ring {'pinned' if is_pinned else 'not pinned'} (no GPU here)")
        else:
            step.check("train_loop's ring is pinned", is_pinned, ring.group(0) if ring else None)
        m = re.search(r"([\d.]+) batches/s, ([\d.]+) samples/s, (\d+) MB/s delivered, "
                      r"(\d+) MB/s decoded", r.stdout)
        w = re.search(r"waiting: trainer ([\d.]+) s for batches, producers ([\d.]+) s", r.stdout)
        if step.check("train_loop printed its throughput", m is not None and w is not None):
            step.figure("cxx_samples_per_s", float(m.group(2)), "samples/s")
            step.figure("cxx_delivered_mb_per_s", float(m.group(3)), "MB/s")
            step.figure("cxx_trainer_wait_s", float(w.group(1)), f"s over {steps} steps")
