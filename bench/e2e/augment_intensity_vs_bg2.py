#!/usr/bin/env python3
# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Per-transform timing of patchfeed's intensity and label augmentations vs batchgeneratorsv2
0.3.5, one thread, same process, same data: a 1-channel 128^3 float32 image and an int16
segmentation (labels -1..3), nnU-Net's parameters.

Both sides get the same explicit parameters (bg2 through `_apply_to_image` /
`_apply_to_segmentation` with a params dict, as in tests/python/test_augment_intensity.py), so
both do the same work; bg2's `get_parameters` costs microseconds and is left out. In-place
transforms run repeatedly on one array (values drift, work does not). The sides alternate,
round after round, and the best round of each is kept. Times are this thread's CPU time
(time.thread_time): the 2-core machine is shared with other builds, and wall time there
measured the neighbours as much as the code.

  PYTHONPATH=build/intensity/python python3 bench/e2e/augment_intensity_vs_bg2.py [--rounds 5]
"""

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import torch
from batchgeneratorsv2.transforms.intensity.brightness import (
    MultiplicativeBrightnessTransform,
)
from batchgeneratorsv2.transforms.intensity.contrast import (
    BGContrast,
    ContrastTransform,
)
from batchgeneratorsv2.transforms.intensity.gamma import GammaTransform
from batchgeneratorsv2.transforms.intensity.gaussian_noise import GaussianNoiseTransform
from batchgeneratorsv2.transforms.noise.gaussian_blur import GaussianBlurTransform
from batchgeneratorsv2.transforms.spatial.low_resolution import (
    SimulateLowResolutionTransform,
)
from batchgeneratorsv2.transforms.utils.deep_supervision_downsampling import (
    DownsampleSegForDSTransform,
)
from batchgeneratorsv2.transforms.utils.nnunet_masking import MaskImageTransform
from batchgeneratorsv2.transforms.utils.remove_label import RemoveLabelTransform
from batchgeneratorsv2.transforms.utils.seg_to_regions import (
    ConvertSegmentationToRegionsTransform,
)
from patchfeed import _core

aug = _core.augment
torch.set_num_threads(1)

SHAPE = (1, 128, 128, 128)
SIGMAS = [0.6, 0.8, 0.95]  # kernel lengths 5, 5, 7
ZOOM = 0.7
REGIONS = [[1, 2, 3], [2, 3], [3]]
DS_SCALES = [1.0, 0.5, 0.25, 0.125, 0.0625]

# How often each row runs per training sample in nnU-Net's default pipeline (1 channel):
# RandomTransform gate x per-channel p. Gamma's row stands for both instances (0.1 + 0.3).
# MaskImage runs only with use_mask_for_norm, regions only in region training: weight 0.
PIPELINE_WEIGHT = {
    "GaussianNoise": 0.1,
    "GaussianBlur": 0.2 * 0.5,
    "MultiplicativeBrightness": 0.15,
    "Contrast": 0.15,
    "SimulateLowResolution": 0.25 * 0.5,
    "Gamma (inverted, retain)": 0.1 + 0.3,
    "MaskImage": 0.0,
    "RemoveLabel": 1.0,
    "ConvertSegmentationToRegions": 0.0,
    "DownsampleSegForDS (5 scales)": 1.0,
}


def cases(x, t, s, ts):
    """(name, bg2 callable, patchfeed callable) on shared memory (t views x, ts views s)."""
    bc = BGContrast((0.75, 1.25)).sample_contrast
    one = torch.tensor([0])
    noise = GaussianNoiseTransform((0, 0.1), 1, True)
    blur = GaussianBlurTransform((0.5, 1.0), False, False, 1)
    bright = MultiplicativeBrightnessTransform(bc, False, 1)
    contrast = ContrastTransform(bc, True, False, 1)
    lowres = SimulateLowResolutionTransform((0.5, 1), False, True, None, None, 1)
    gamma = GammaTransform(BGContrast((0.7, 1.5)).sample_contrast, 1, False, 1, 1)
    mask = MaskImageTransform([0])
    remove = RemoveLabelTransform(-1, 0)
    regions = ConvertSegmentationToRegionsTransform([tuple(r) for r in REGIONS])
    ds = DownsampleSegForDSTransform(DS_SCALES)
    s_pos = np.maximum(s, 0)  # RemoveLabel's output, the input of the last two steps
    ts_pos = torch.from_numpy(s_pos)
    scales = [[v] for v in DS_SCALES]
    return [
        (
            "GaussianNoise",
            lambda: noise._apply_to_image(
                t,
                apply_mask=torch.ones(1, dtype=bool),
                apply_idx=one,
                num_apply=1,
                sigmas=0.05,
            ),
            lambda: aug.gaussian_noise(x, [0], [0.05], seed=1),
        ),
        (
            "GaussianBlur",
            lambda: blur._apply_to_image(
                t, apply_to_channel=torch.ones(1, dtype=bool), sigmas=[SIGMAS]
            ),
            lambda: aug.gaussian_blur(x, [0], [SIGMAS]),
        ),
        (
            "MultiplicativeBrightness",
            lambda: bright._apply_to_image(
                t, apply_to_channel=one, multipliers=torch.Tensor([1.1])
            ),
            lambda: aug.brightness(x, [0], [1.1]),
        ),
        (
            "Contrast",
            lambda: contrast._apply_to_image(
                t, apply_to_channel=one, multipliers=torch.tensor([1.1])
            ),
            lambda: aug.contrast(x, [0], [1.1]),
        ),
        (
            "SimulateLowResolution",
            lambda: lowres._apply_to_image(
                t, apply_to_channel=one, scales=torch.Tensor([[ZOOM] * 3])
            ),
            lambda: aug.low_resolution(x, [0], [[ZOOM] * 3]),
        ),
        (
            "Gamma (inverted, retain)",
            lambda: gamma._apply_to_image(
                t,
                apply_to_channel=one,
                retain_stats=torch.ones(1, dtype=bool),
                invert_image=torch.ones(1, dtype=bool),
                gamma=torch.tensor([1.3]),
            ),
            lambda: aug.gamma(x, [0], [1.3], [True], [True]),
        ),
        (
            "MaskImage",
            lambda: mask.apply({"image": t, "segmentation": ts}),
            lambda: aug.mask_image(x, s, [0]),
        ),
        (
            "RemoveLabel",
            lambda: remove._apply_to_segmentation(ts),
            lambda: aug.remove_label(s),
        ),
        (
            "ConvertSegmentationToRegions",
            lambda: regions._apply_to_segmentation(ts_pos),
            lambda: aug.segmentation_to_regions(s_pos, REGIONS),
        ),
        (
            "DownsampleSegForDS (5 scales)",
            lambda: ds._apply_to_segmentation(ts_pos),
            lambda: aug.downsample_seg_for_ds(s_pos, scales),
        ),
    ]


def best_time(fn, reps):
    best = float("inf")
    for _ in range(reps):
        t0 = time.thread_time()
        fn()
        best = min(best, time.thread_time() - t0)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=3, help="calls per side per round")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(SHAPE) * 100 + 50).astype(np.float32)
    s = rng.integers(-1, 4, size=SHAPE).astype(np.int16)
    t, ts = torch.from_numpy(x), torch.from_numpy(s)
    results = []
    for name, ref, ours in cases(x, t, s, ts):
        ref()  # warm-up (first-call allocations, lazy init)
        ours()
        b_ref = b_ours = float("inf")
        for _ in range(args.rounds):
            b_ref = min(b_ref, best_time(ref, args.reps))
            b_ours = min(b_ours, best_time(ours, args.reps))
        results.append((name, b_ref, b_ours))
    print(
        f"1 thread, image {SHAPE} float32, seg int16; thread CPU time, best of "
        f"{args.rounds} rounds x {args.reps} calls\n"
    )
    print("| transform | bg2 0.3.5 ms | patchfeed ms | speed-up |")
    print("|---|---:|---:|---:|")
    tot_ref = tot_ours = 0.0
    for name, r, o in results:
        tot_ref += r
        tot_ours += o
        print(f"| {name} | {r * 1e3:.2f} | {o * 1e3:.2f} | {r / o:.1f}x |")
    print(
        f"| **sum** | {tot_ref * 1e3:.2f} | {tot_ours * 1e3:.2f} | {tot_ref / tot_ours:.1f}x |"
    )
    exp_ref = sum(PIPELINE_WEIGHT[n] * r for n, r, _ in results)
    exp_ours = sum(PIPELINE_WEIGHT[n] * o for n, _, o in results)
    print(
        f"| **expected per sample** (nnU-Net gates) | {exp_ref * 1e3:.2f} | "
        f"{exp_ours * 1e3:.2f} | {exp_ref / exp_ours:.1f}x |"
    )


if __name__ == "__main__":
    main()
