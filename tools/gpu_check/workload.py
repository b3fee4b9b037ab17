# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""The GPU check's workload: sizes on the device and in a --cpu-dry-run, the loader's
arguments, and a GPU-utilisation sampler."""

from __future__ import annotations

import dataclasses
import math
import os
import shutil
import subprocess
import threading
import time
from typing import Any


@dataclasses.dataclass(frozen=True)
class Sizes:
    cases: int  # synthetic cases, (1, 1.5 p, 1.75 p, 1.5 p) float32 image + int16 seg each
    patch: int  # the training patch, p³
    batch: int
    threads: int  # "all cores"

    @property
    def crop(self) -> int:
        # nnU-Net's initial (enlarged) patch for rotations of +-30 degrees and scaling 0.7-1.4:
        # 205 for 128 (the loader's own warning names that pair).
        return math.ceil(self.patch * 1.6)


# nnU-Net's 3d_fullres-like batch (2 x 128³); a dry run keeps everything tiny.
DEVICE = Sizes(cases=12, patch=128, batch=2, threads=os.cpu_count() or 16)
DRY = Sizes(cases=2, patch=32, batch=2, threads=2)


def sizes(dry_run: bool) -> Sizes:
    return DRY if dry_run else DEVICE


def loader_kwargs(s: Sizes, fg_cache: str, *, augment: bool = False,
                  deep_supervision: bool = False, **extra: Any) -> dict[str, Any]:
    """patchfeed.Loader keyword arguments: plain patches, or nnU-Net's default augmentation
    (the sampler draws the enlarged crop, the augmentation returns the patch)."""
    kw: dict[str, Any] = {"patch_size": [s.patch] * 3, "batch_size": s.batch,
                          "num_threads": s.threads, "foreground_cache_dir": fg_cache}
    if augment:
        aug: dict[str, Any] = {"patch_size": [s.patch] * 3}
        if deep_supervision:
            aug["deep_supervision_scales"] = [[1.0] * 3, [0.5] * 3, [0.25] * 3]
        kw.update(patch_size=[s.crop] * 3, need_to_pad=[s.crop - s.patch] * 3, augmentation=aug)
    kw.update(extra)
    return kw


def fg_cache_dir(data: str) -> str:
    path = os.path.join(os.path.dirname(os.path.abspath(data)), "fgcache")
    os.makedirs(path, exist_ok=True)
    return path


class UtilSampler:
    """GPU utilisation (percent of time a kernel ran, NVML's figure) every 0.5 s, each sample
    stamped with time.monotonic() on arrival: `nvidia-smi -lms 500` in the background, else
    torch.cuda.utilization() from a thread, else nothing (`source` says which)."""

    def __init__(self, period_s: float = 0.5) -> None:
        self.samples: list[tuple[float, float]] = []
        self.period_s = period_s
        self.source = "none"
        self._proc: subprocess.Popen[str] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> UtilSampler:
        if shutil.which("nvidia-smi"):
            self._proc = subprocess.Popen(
                ["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits",
                 "-lms", str(int(self.period_s * 1000)), "-i", "0"],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            self.source = "nvidia-smi"
            target = self._read_smi
        else:
            import torch

            try:
                torch.cuda.utilization()
            except Exception as e:  # noqa: BLE001 (no NVML: say so, measure nothing)
                self.source = f"none ({type(e).__name__}: {e})"
                return self
            self.source = "torch.cuda.utilization"
            target = self._poll_torch
        self._thread = threading.Thread(target=target, daemon=True)
        self._thread.start()
        return self

    def _read_smi(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for line in self._proc.stdout:
            try:
                self.samples.append((time.monotonic(), float(line.strip())))
            except ValueError:
                pass

    def _poll_torch(self) -> None:
        import torch

        while not self._stop.wait(self.period_s):
            self.samples.append((time.monotonic(), float(torch.cuda.utilization())))

    def stop(self) -> None:
        self._stop.set()
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(timeout=5)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def window(self, t0: float, t1: float) -> dict[str, Any]:
        """Mean, minimum and count of the samples that arrived in (t0 + one period, t1]: each
        sample describes the period before it."""
        vals = [v for t, v in self.samples if t0 + self.period_s < t <= t1]
        if not vals:
            return {"mean": None, "min": None, "n": 0}
        return {"mean": sum(vals) / len(vals), "min": min(vals), "n": len(vals)}
