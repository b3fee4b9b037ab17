#!/usr/bin/env python3
"""nnU-Net's default training augmentation, one sample at a time on one thread: patchfeed vs
batchgeneratorsv2 as nnU-Net 2.8 builds it (nnUNetTrainer.get_training_transforms).

Input: a 1-channel (or with `--channels N`, N-channel) 205^3 float32 crop (nnU-Net's enlarged patch for a 128^3 patch with 30 degree
rotations) and its int16 segmentation (labels 0..3 with -1 outside the "body"), output 128^3 plus
the deep-supervision targets. Rows: the default pipeline (rotation and scaling each drawn with
p 0.2, so most samples take the plain crop path), and the same with rotation and scaling forced
on (the expensive path). Sides alternate sample by sample. The mean is what a training run
pays per sample (the draws decide which transforms run); medians are shown too.

Usage:
  PYTHONPATH=build/<dir>/python python3 bench/e2e/augment_pipeline_vs_nnunet.py [--samples N]
      [--channels C] [--side both|patchfeed|nnunet]
"""

import argparse
import math
import statistics
import time

import numpy as np
import torch

PATCH = (128, 128, 128)
CROP = (205, 205, 205)
DS_SCALES = [[1.0] * 3, [0.5] * 3, [0.25] * 3, [0.125] * 3, [0.0625] * 3]
ROTATION = (-30.0 / 360 * 2.0 * math.pi, 30.0 / 360 * 2.0 * math.pi)


def make_sample(seed, channels=1):
    rng = np.random.default_rng(seed)
    z, y, x = np.meshgrid(*[np.linspace(-1, 1, s, dtype=np.float32) for s in CROP],
                          indexing="ij")
    r = np.sqrt(z * z + y * y + x * x)
    # Channel k: the same structure with its phase shifted by k (channel 0 is the 1-channel
    # sample), as augment_loader_vs_nnunet.py writes its multi-channel cases.
    image = np.stack([(np.sin(7 * z + k) * np.cos(5 * y) + x + rng.normal(0, 0.2, CROP))
                      .astype(np.float32) for k in range(channels)])
    seg = np.zeros(CROP, np.int16)
    seg[r > 0.95] = -1
    seg[(r < 0.6)] = 1
    seg[(r < 0.4) & (x > 0)] = 2
    seg[(r < 0.2)] = 3
    return image, seg[None]


def nnunet_transforms(force_spatial):
    from batchgeneratorsv2.transforms.spatial.spatial import SpatialTransform
    from nnunetv2.training.nnUNetTrainer.nnUNetTrainer import nnUNetTrainer

    t = nnUNetTrainer.get_training_transforms(
        patch_size=PATCH, rotation_for_DA=ROTATION, deep_supervision_scales=DS_SCALES,
        mirror_axes=(0, 1, 2), do_dummy_2d_data_aug=False)
    if force_spatial:
        for tr in t.transforms:
            if isinstance(tr, SpatialTransform):
                tr.p_rotation = 1.0
                tr.p_scaling = 1.0
    return t


def time_bg2(transforms, image, seg):
    img = torch.from_numpy(image.copy())
    sg = torch.from_numpy(seg.copy())
    t0 = time.perf_counter()
    out = transforms(image=img, segmentation=sg)
    dt = time.perf_counter() - t0
    assert out["image"].shape[1:] == PATCH
    return dt


def time_patchfeed(pipeline, image, seg, index):
    t0 = time.perf_counter()
    out = pipeline(image, seg, index)
    dt = time.perf_counter() - t0
    assert out["image"].shape[1:] == PATCH
    return dt


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=40)
    ap.add_argument("--channels", type=int, default=1)
    ap.add_argument("--side", choices=("both", "patchfeed", "nnunet"), default="both",
                    help="time one side only (e.g. under a profiler)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    image, seg = make_sample(0, args.channels)

    pf = None
    if args.side != "nnunet":
        try:
            from patchfeed import augment as pfa
            pf = pfa
        except ImportError as e:
            print(f"patchfeed.augment not available ({e}); timing batchgeneratorsv2 only")
    run_bg = args.side != "patchfeed"

    print("| pipeline | samples | batchgeneratorsv2 ms/sample (mean / median) | "
          "patchfeed ms/sample (mean / median) | ratio of means |")
    print("|---|---:|---:|---:|---:|")
    for force in (False, True):
        bg = nnunet_transforms(force) if run_bg else None
        pipe = None
        if pf is not None:
            options = {"patch_size": PATCH, "max_angle": ROTATION[1]}
            if force:
                options.update(p_rotation=1.0, p_scaling=1.0)
            pipe = pf.NnUNetAugmenter(options, seed=1, deep_supervision_scales=DS_SCALES)
        n = args.samples if not force else max(4, args.samples // 4)
        tb, tp = [], []
        for i in range(n):  # sides alternate sample by sample
            if bg is not None:
                tb.append(time_bg2(bg, image, seg))
            if pipe is not None:
                tp.append(time_patchfeed(pipe, image, seg, i))
        name = "rotation+scaling forced" if force else "default (p 0.2 / 0.2)"
        bgs = "-"
        if tb:
            mb, db = statistics.mean(tb) * 1e3, statistics.median(tb) * 1e3
            bgs = f"{mb:.1f} / {db:.1f}"
        if tp:
            mp, dp = statistics.mean(tp) * 1e3, statistics.median(tp) * 1e3
            ratio = f"{mb / mp:.1f}x" if tb else "-"
            print(f"| {name} | {n} | {bgs} | {mp:.1f} / {dp:.1f} | {ratio} |")
        else:
            print(f"| {name} | {n} | {bgs} | - | - |")


if __name__ == "__main__":
    main()
