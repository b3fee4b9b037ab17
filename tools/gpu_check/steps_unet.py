# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""A short training loop: a small 3-D U-Net in bf16 autocast fed by patchfeed.Loader
(device="cuda", nnU-Net's augmentation), GPU utilisation per number of loader threads."""

from __future__ import annotations

import time
from typing import Any

from step_results import Step
from workload import Sizes, UtilSampler, fg_cache_dir, loader_kwargs

CLASSES = 3  # the synthetic segmentation's labels 0, 1, 2 (-1: padding, ignored)


def make_unet(widths: tuple[int, ...]) -> Any:
    """An nnU-Net-like 3-D U-Net: per stage two 3³ conv + InstanceNorm + LeakyReLU, strided
    conv down, transposed conv up, skip concatenation."""
    import torch
    from torch import nn

    def block(cin: int, cout: int, stride: int = 1) -> nn.Module:
        return nn.Sequential(nn.Conv3d(cin, cout, 3, stride, 1, bias=False),
                             nn.InstanceNorm3d(cout, affine=True), nn.LeakyReLU(0.01, True))

    class UNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.down = nn.ModuleList()
            cin = 1
            for i, w in enumerate(widths):
                self.down.append(nn.Sequential(block(cin, w, 1 if i == 0 else 2), block(w, w)))
                cin = w
            self.up = nn.ModuleList(nn.ConvTranspose3d(widths[i + 1], widths[i], 2, 2)
                                    for i in range(len(widths) - 1))
            self.dec = nn.ModuleList(nn.Sequential(block(2 * w, w), block(w, w))
                                     for w in widths[:-1])
            self.head = nn.Conv3d(widths[0], CLASSES, 1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            skips = []
            for stage in self.down:
                x = stage(x)
                skips.append(x)
            for i in reversed(range(len(self.up))):
                x = self.dec[i](torch.cat([self.up[i](x), skips[i]], 1))
            return self.head(x)

    return UNet()


class Trainer:
    """nnU-Net's optimiser (SGD, Nesterov momentum 0.99, gradients clipped at 12; the learning
    rate fixed here) and one step per batch; the loss is read back every `sync_every` steps (what a
    loop that logs its loss does), so the CPU may run a few steps ahead of the GPU."""

    def __init__(self, dev: str, widths: tuple[int, ...], sync_every: int = 10) -> None:
        import torch

        self.torch = torch
        self.dev = dev
        self.model = make_unet(widths).to(dev)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=1e-2, momentum=0.99,
                                   nesterov=True)
        self.sync_every = sync_every
        self.steps = 0
        self._loss: Any = None
        self.last_loss = float("nan")

    def step(self, image: Any, seg: Any) -> None:
        torch = self.torch
        # bf16 on the GPU; a CPU (dry) run stays in float32, where bf16 convolutions are slow.
        with torch.autocast(device_type=self.dev, dtype=torch.bfloat16,
                            enabled=self.dev == "cuda"):
            logits = self.model(image)
        loss = torch.nn.functional.cross_entropy(logits.float(), seg[:, 0].long(),
                                                 ignore_index=-1)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 12.0)  # as nnU-Net does
        self.opt.step()
        self.steps += 1
        self._loss = loss.detach()
        if self.steps % self.sync_every == 0:
            self.last_loss = self._loss.item()

    def run(self, batches: Any, seconds: float, max_steps: int) -> dict[str, Any]:
        """Steps for `seconds` (or `max_steps`): steps/s and the time spent in next()."""
        wait, n = 0.0, 0
        t_start = time.perf_counter()
        while n < max_steps and time.perf_counter() - t_start < seconds:
            t0 = time.perf_counter()
            b = next(batches)
            wait += time.perf_counter() - t0
            self.step(b["image"], b["seg"])
            n += 1
        if n:
            self.last_loss = self._loss.item()  # waits for the GPU's last step
        wall = time.perf_counter() - t_start
        return {"steps": n, "seconds": wall, "steps_per_s": n / wall,
                "wait_fraction": wait / wall}


def unet(step: Step, s: Sizes, data: str) -> None:
    import patchfeed
    import torch

    dry = step.dry_run
    if dry:
        dev, widths, warm, max_steps = "cpu", (4, 8), 1, 2  # max_steps bounds the windows
        sweep, window, main_window = (1,), 60.0, 60.0
        step.note("--cpu-dry-run: a tiny U-Net on the CPU, 2 steps per run (code path only)")
    elif not torch.cuda.is_available():
        raise RuntimeError("no CUDA device")
    else:
        dev, widths, warm, max_steps = "cuda", (32, 64, 128, 256), 10, 1 << 30
        sweep, window, main_window = (1, 2, 4, 8), 8.0, 60.0
        torch.backends.cudnn.benchmark = True
    trainer = Trainer(dev, widths)
    sampler = UtilSampler() if not dry else None
    if sampler is not None:
        sampler.start()
        step.set("util_source", sampler.source)
    runs: dict[str, Any] = {}

    def measure(label: str, batches: Any, seconds: float) -> dict[str, Any]:
        trainer.run(batches, seconds=60.0, max_steps=warm)  # cuDNN autotuning, ring filling
        t0 = time.monotonic()
        r = trainer.run(batches, seconds=seconds, max_steps=max_steps)
        if sampler is not None:
            r["gpu_util"] = sampler.window(t0, time.monotonic())
        r["loss"] = trainer.last_loss
        runs[label] = r
        step.set("runs", runs)
        util = (r.get("gpu_util") or {}).get("mean")
        print(f"  {label}: {r['steps_per_s']:.2f} steps/s, wait {100 * r['wait_fraction']:.1f} %"
              f" of the time in next(), GPU util {util if util is None else round(util, 1)} %",
              flush=True)
        return r

    try:
        # The ceiling: the same steps on one batch already on the GPU (no loader at all).
        with patchfeed.Loader(data, device=dev, **loader_kwargs(s, fg_cache_dir(data),
                                                                augment=True, seed=1)) as l:
            fixed = next(iter(l))
        fixed = {k: v.clone() for k, v in fixed.items()}

        def repeat() -> Any:
            while True:
                yield fixed

        base = measure("no_loader", repeat(), window)
        step.check("the training loop ran (finite loss)", base["steps"] > 0
                   and trainer.last_loss == trainer.last_loss, trainer.last_loss)
        thread_counts = [s.threads] + [t for t in sweep if t < s.threads]
        for t in thread_counts:
            seconds = main_window if t == s.threads else window
            if not dry:
                seconds = min(seconds, step.left() - 25)
                if seconds < 4:
                    step.note(f"no time left for {t} loader threads")
                    break
            kw = loader_kwargs(s, fg_cache_dir(data), augment=True, seed=100 + t,
                               num_threads=t)
            with patchfeed.Loader(data, device=dev, **kw) as l:
                r = measure(f"threads_{t}", iter(l), seconds)
            step.check(f"{t} loader threads: steps ran", r["steps"] > 0)
    finally:
        if sampler is not None:
            sampler.stop()
            step.set("util_samples", [(round(t, 2), v) for t, v in sampler.samples])
    _figures(step, runs, s.threads)


def _figures(step: Step, runs: dict[str, Any], all_threads: int) -> None:
    for label, r in runs.items():
        step.figure(f"{label}_steps_per_s", r["steps_per_s"], "steps/s")
        step.figure(f"{label}_wait_fraction", r["wait_fraction"], "of the wall time in next()")
        util = (r.get("gpu_util") or {}).get("mean")
        if util is not None:
            step.figure(f"{label}_gpu_util_mean", util, "%")
    if step.dry_run:
        return
    main = runs.get(f"threads_{all_threads}", {})
    util = (main.get("gpu_util") or {}).get("mean")
    if util is None:
        step.note("no GPU utilisation was sampled (see util_source)")
        return
    step.goal(f"GPU utilisation, {all_threads} loader threads, {main['seconds']:.0f} s", util,
              ">= 95 %", util >= 95.0, "%")
    base = (runs.get("no_loader", {}).get("gpu_util") or {}).get("mean")
    enough = sorted(int(k.split("_")[1]) for k, r in runs.items() if k.startswith("threads_")
                    and ((r.get("gpu_util") or {}).get("mean") or 0) >= 95.0)
    step.set("fewest_threads_above_95", enough[0] if enough else None)
    step.note(f"fewest loader threads with GPU utilisation >= 95 %: "
              f"{enough[0] if enough else 'none of those tried'}; with no loader at all the "
              f"same loop reaches {base if base is None else round(base, 1)} %")
