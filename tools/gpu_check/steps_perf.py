# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Steps that measure copies: host-to-device bandwidth from the ring against torch's own
pinned copies, and the wait a trainer sees per step behind a ~100 ms GPU stand-in."""

from __future__ import annotations

import statistics
import time
from typing import Any

from step_results import Skip, Step
from workload import Sizes, fg_cache_dir, loader_kwargs


def _stats_ms(values_s: list[float]) -> dict[str, float]:
    v = sorted(x * 1e3 for x in values_s)
    return {"mean": statistics.fmean(v), "p50": v[len(v) // 2],
            "p95": v[min(len(v) - 1, int(0.95 * len(v)))], "max": v[-1]}


def bandwidth(step: Step, s: Sizes, data: str, rounds: int = 20) -> None:
    """GB/s of host-to-device copies of a batch: (a) from the loader's pinned ring slots while
    the loader decodes the next batches into the other slots, (b) from torch's own pinned
    tensors of the same shapes, alternating; (c) the device="cuda" copies themselves, timed by
    the torch profiler; (d) batches delivered on the GPU per second with no compute (decode
    bound, for context)."""
    if step.dry_run:
        raise Skip("--cpu-dry-run: host-to-device copies need a CUDA device")
    import patchfeed
    import torch

    fg = fg_cache_dir(data)
    side = torch.cuda.Stream()

    def timed_copy(dsts: list[Any], srcs: list[Any]) -> float:
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(side):
            e0.record()
            for d, src in zip(dsts, srcs):
                d.copy_(src, non_blocking=True)
            e1.record()
        e1.synchronize()
        return e0.elapsed_time(e1) / 1e3

    # pin_memory "auto": should pinning fail here, the copies are still measured (and the
    # check below fails).
    with patchfeed.Loader(data, ring_size=4, **loader_kwargs(s, fg, seed=3)) as loader:
        step.check("the ring is pinned", loader.pinned, loader.unpinned_reason or None)
        it = iter(loader)
        first = next(it)
        dsts = [torch.empty_like(t, device="cuda") for t in first.values()]
        mine = [torch.empty_like(t).pin_memory() for t in first.values()]
        nbytes = sum(t.numel() * t.element_size() for t in first.values())
        step.figure("batch_mb", nbytes / 1e6, "MB")
        del first
        for _ in range(3):  # warm-up of both paths
            b = next(it)
            timed_copy(dsts, list(b.values()))
            timed_copy(dsts, mine)
            del b
        ring, torch_pinned, all_pinned = [], [], True
        for _ in range(rounds):
            b = next(it)
            all_pinned &= all(t.is_pinned() for t in b.values())
            ring.append(nbytes / timed_copy(dsts, list(b.values())) / 1e9)
            del b  # the slot goes back to the ring
            torch_pinned.append(nbytes / timed_copy(dsts, mine) / 1e9)
    step.check("every ring batch was pinned (torch's is_pinned)", all_pinned)
    r, t = statistics.median(ring), statistics.median(torch_pinned)
    step.figure("h2d_ring_gbps_median", r, "GB/s")
    step.figure("h2d_torch_pinned_gbps_median", t, "GB/s")
    step.goal("ring H2D / torch pinned H2D", r / t, ">= 0.80", r / t >= 0.80)
    big = torch.empty(256 << 20, dtype=torch.uint8).pin_memory()
    big_d = torch.empty_like(big, device="cuda")
    timed_copy([big_d], [big])
    step.figure("h2d_torch_pinned_256mb_gbps", (256 << 20) / timed_copy([big_d], [big]) / 1e9,
                "GB/s")
    del big, big_d
    _device_cuda_copies(step, s, data, fg, nbytes)


def _device_cuda_copies(step: Step, s: Sizes, data: str, fg: str, nbytes: int) -> None:
    import patchfeed
    import torch

    n = 10
    with patchfeed.Loader(data, device="cuda", ring_size=4, **loader_kwargs(s, fg, seed=4)) as l:
        it = iter(l)
        for _ in range(3):
            next(it)
        torch.cuda.synchronize()
        try:
            from torch.profiler import ProfilerActivity, profile

            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                for _ in range(n):
                    next(it)
                torch.cuda.synchronize()
            copies = [e for e in prof.events() if "HtoD" in e.name or "Memcpy H" in e.name]
            names = sorted({e.name for e in copies})
            us = sum(e.time_range.elapsed_us() for e in copies)
            step.set("profiler_copy_names", names)
            if not copies:
                step.note("the profiler recorded no host-to-device copy (CUPTI?)")
            else:
                step.check("device='cuda' copies read pinned memory (profiler's names)",
                           all("Pageable" not in x for x in names), names)
            if us > 0:
                step.figure("h2d_device_cuda_gbps_profiler", n * nbytes / (us * 1e-6) / 1e9,
                            "GB/s")
        except Exception as e:  # noqa: BLE001 (CUPTI may be missing: the event figures stand)
            step.note(f"the profiler could not time the device='cuda' copies: "
                      f"{type(e).__name__}: {e}")
        t0 = time.perf_counter()
        for _ in range(30):
            next(it)
        torch.cuda.synchronize()
        wall = time.perf_counter() - t0
    step.figure("device_cuda_batches_per_s_no_compute", 30 / wall, "batches/s")
    step.figure("device_cuda_delivered_gbps_no_compute", 30 * nbytes / wall / 1e9, "GB/s")


def _matmul_standin(dry_run: bool) -> tuple[Any, int, float]:
    """A bf16 GEMM chain and how many GEMMs make ~100 ms (a dry run: a tiny CPU one)."""
    import torch

    if dry_run:
        return torch.randn(64, 64), 2, 0.0
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    out = torch.empty_like(a)
    for _ in range(3):
        torch.matmul(a, a, out=out)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(10):
        torch.matmul(a, a, out=out)
    torch.cuda.synchronize()
    one = (time.perf_counter() - t0) / 10
    return a, max(1, round(0.100 / one)), one


def standin(step: Step, s: Sizes, data: str, steps: int = 25) -> None:
    """A trainer whose step is ~100 ms of GPU matmuls, synchronised at the end (like
    loss.item()), fed by device="cuda" batches: the wait in next() per step, plain patches and
    nnU-Net's augmentation, against the same steps with no loader."""
    import patchfeed
    import torch

    dev = "cpu" if step.dry_run else "cuda"
    if step.dry_run:
        steps = 3
        step.note("--cpu-dry-run: a tiny CPU stand-in on device='cpu' batches (code path only)")
    elif not torch.cuda.is_available():
        raise RuntimeError("no CUDA device")
    a, n, one = _matmul_standin(step.dry_run)
    out = torch.empty_like(a)
    step.figure("gemms_per_step", n, f"8192³ bf16 GEMMs of {one * 1e3:.2f} ms")

    def compute() -> None:
        for _ in range(n):
            torch.matmul(a, a, out=out)

    def sync() -> None:
        if dev == "cuda":
            torch.cuda.synchronize()

    only = []
    for _ in range(max(3, steps // 3)):
        t0 = time.perf_counter()
        compute()
        sync()
        only.append(time.perf_counter() - t0)
    step.figure("compute_only_step_ms", _stats_ms(only)["mean"], "ms")
    fg = fg_cache_dir(data)
    for name, extra in (("plain", {}), ("augmented", {"augment": True})):
        with patchfeed.Loader(data, device=dev, **loader_kwargs(s, fg, seed=5, **extra)) as l:
            it = iter(l)
            waits, totals = [], []
            for i in range(steps + 5):
                t0 = time.perf_counter()
                batch = next(it)
                t1 = time.perf_counter()
                compute()
                out[0, 0] += batch["image"].float().mean()  # the step uses the batch
                sync()
                del batch
                if i >= 5:  # after the ring has filled and cuDNN/cuBLAS warmed up
                    waits.append(t1 - t0)
                    totals.append(time.perf_counter() - t0)
        w, t = _stats_ms(waits), _stats_ms(totals)
        for k in ("mean", "p95", "max"):
            step.figure(f"{name}_wait_ms_{k}", w[k], "ms")
        step.figure(f"{name}_step_ms_mean", t["mean"], "ms")
        step.goal(f"{name}: trainer wait per ~100 ms step (mean)", w["mean"],
                  "<= 1 ms (1 % of the step)", w["mean"] <= 1.0, "ms")
