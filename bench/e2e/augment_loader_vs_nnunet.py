#!/usr/bin/env python3
# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Training batches with nnU-Net's augmentation, end to end: patchfeed.Loader vs nnU-Net 2.8's
own data loader and augmenter, on the same cores and the same preprocessed files.

The dataset is written by nnU-Net itself (nnUNetDatasetBlosc2.save_case: its chunk/block rule,
LZ4HC 5, its filter choice; class locations from DefaultPreprocessor): `--cases` cases of
(1, 224, 224, 224), or with `--channels 4` (4, 140, 172, 144) (BraTS-like), float32 + int16
labels 0..2. Both sides draw 205^3 crops (nnU-Net's initial patch size for 128^3 with +-30 degree
rotations), pad by nnU-Net's need_to_pad, oversample foreground for 0.33 of each batch of 2, and
make nnU-Net's full training batch: its default augmentation down to 128^3 and the five
deep-supervision targets.

  (a) patchfeed.Loader(augmentation={"patch_size": (128,)*3, "deep_supervision_scales": ...}),
      `--threads` threads, NumPy batches (zero-copy views of the ring).
  (b) nnUNetDataLoader(transforms=nnUNetTrainer.get_training_transforms(...)) in a
      NonDetMultiThreadedAugmenter with `--threads` worker processes, as nnUNetTrainer sets it
      up.

The consumer touches every voxel of each batch once and drops it. Each side runs in a fresh
process; CPU time and peak RSS are summed over the process tree (workers included).

  python3 bench/e2e/augment_loader_vs_nnunet.py [--steps 30] [--threads 2] [--channels 4]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# The same process-tree metering (CPU and RSS of the process and its children) and BATCH.
from loader_vs_dataloader import timed

PATCH = (128, 128, 128)
SHAPES = {1: (1, 224, 224, 224), 4: (4, 140, 172, 144)}
BATCH = 2
ANGLE = math.pi / 6
DS_SCALES = [[1.0] * 3, [0.5] * 3, [0.25] * 3, [0.125] * 3, [0.0625] * 3]


def write_dataset(folder, cases, channels):
    import numpy as np
    from nnunetv2.preprocessing.preprocessors.default_preprocessor import (
        DefaultPreprocessor,
    )
    from nnunetv2.training.dataloading.nnunet_dataset import nnUNetDatasetBlosc2

    os.makedirs(folder, exist_ok=True)
    shape = SHAPES[channels]
    axes = [np.linspace(-1, 1, s, dtype=np.float32) for s in shape[1:]]
    z, y, x = np.meshgrid(*axes, indexing="ij", sparse=True)
    for i in range(cases):
        name = os.path.join(folder, f"case_{i:03d}")
        if os.path.exists(name + ".pkl"):
            continue
        rng = np.random.default_rng(i)
        c = rng.uniform(-0.3, 0.3, 3)
        r = np.sqrt((z - c[0]) ** 2 + (y - c[1]) ** 2 + (x - c[2]) ** 2)
        image = np.stack([np.sin(5 * z + i + k) * np.cos(4 * y) + 2 * (r < 0.5) +
                          np.round(rng.standard_normal(shape[1:], dtype=np.float32) * 8) / 32
                          for k in range(channels)])
        seg = np.zeros(shape[1:], np.int16)
        seg[r < 0.5] = 1
        seg[r < 0.2] = 2
        image, seg = image.astype(np.float32), seg[None]
        props = {"class_locations": DefaultPreprocessor._sample_foreground_locations(
            seg, [1, 2], seed=1234)}
        nnUNetDatasetBlosc2.save_case(image, seg, props, name)
    return folder


def consume(image, seg):
    import numpy as np
    return float(np.asarray(image).max()) + float(np.asarray(seg).max())


def side_patchfeed(folder, threads, steps, warmup):
    import patchfeed

    crop = initial_patch_size()
    loader = patchfeed.Loader(folder, crop, BATCH, seed=0, num_threads=threads,
                              oversample_foreground=0.33, as_numpy=True,
                              need_to_pad=[c - p for c, p in zip(crop, PATCH)],
                              augmentation={"patch_size": PATCH, "max_angle": ANGLE,
                                            "deep_supervision_scales": DS_SCALES})
    it = iter(loader)

    def step():
        b = next(it)
        consume(b["image"], b["seg"][0])

    result = timed(step, steps, warmup)
    loader.close()
    return result


def initial_patch_size():
    from nnunetv2.training.data_augmentation.compute_initial_patch_size import (
        get_patch_size,
    )
    rot = (-ANGLE, ANGLE)
    return tuple(int(s) for s in get_patch_size(PATCH, rot, rot, rot, (0.85, 1.25)))


def side_nnunet(folder, threads, steps, warmup):
    from batchgenerators.dataloading.nondet_multi_threaded_augmenter import (
        NonDetMultiThreadedAugmenter,
    )
    from nnunetv2.training.dataloading.data_loader import nnUNetDataLoader
    from nnunetv2.training.dataloading.nnunet_dataset import nnUNetDatasetBlosc2
    from nnunetv2.training.nnUNetTrainer.nnUNetTrainer import nnUNetTrainer
    from nnunetv2.utilities.label_handling.label_handling import LabelManager

    transforms = nnUNetTrainer.get_training_transforms(
        patch_size=PATCH, rotation_for_DA=(-ANGLE, ANGLE), deep_supervision_scales=DS_SCALES,
        mirror_axes=(0, 1, 2), do_dummy_2d_data_aug=False)
    data = nnUNetDatasetBlosc2(folder)
    labels = LabelManager({"background": 0, "a": 1, "b": 2}, regions_class_order=None)
    dl = nnUNetDataLoader(data, BATCH, initial_patch_size(), PATCH, labels,
                          oversample_foreground_percent=0.33, sampling_probabilities=None,
                          pad_sides=None, probabilistic_oversampling=False,
                          transforms=transforms)
    # As nnUNetTrainer.get_dataloaders: num_cached max(6, n // 2), no pinning on the CPU.
    aug = NonDetMultiThreadedAugmenter(data_loader=dl, transform=None, num_processes=threads,
                                       num_cached=max(6, threads // 2), seeds=None,
                                       pin_memory=False, wait_time=0.002)

    def step():
        b = next(aug)
        consume(b["data"], b["target"][0])

    result = timed(step, steps, warmup)
    aug._finish()
    return result


def run_side(side, args, folder):
    cmd = [sys.executable, os.path.abspath(__file__), "--side", side, "--folder", folder,
           "--threads", str(args.threads), "--steps", str(args.steps), "--warmup",
           str(args.warmup)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default="/dev/shm/patchfeed_augment_loader")
    ap.add_argument("--cases", type=int, default=6)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--channels", type=int, choices=sorted(SHAPES), default=1)
    ap.add_argument("--side", choices=("patchfeed", "nnunet"))
    ap.add_argument("--folder")
    args = ap.parse_args()
    if args.side:
        fn = side_patchfeed if args.side == "patchfeed" else side_nnunet
        print(json.dumps(fn(args.folder, args.threads, args.steps, args.warmup)))
        return
    folder = write_dataset(os.path.join(args.root, f"cases_{args.channels}ch"), args.cases,
                           args.channels)
    best = {}
    for r in range(args.rounds):
        for side in ("patchfeed", "nnunet"):
            res = run_side(side, args, folder)
            print(f"round {r} {side:9s} {res['samples_per_s']:6.2f} samples/s "
                  f"{res['cpu_s_per_sample']:.3f} CPU s/sample RSS {res['peak_rss_mb']:.0f} MB",
                  flush=True)
            if side not in best or res["samples_per_s"] > best[side]["samples_per_s"]:
                best[side] = res
    print(f"\nbest of {args.rounds} rounds, {args.cases} cases {SHAPES[args.channels]}, "
          f"{args.steps} batches of "
          f"{BATCH} x {PATCH} from {initial_patch_size()} crops, {args.threads} threads/workers:")
    print("| side | samples/s | CPU s/sample | peak RSS (MB) |")
    print("| --- | ---: | ---: | ---: |")
    for side in ("patchfeed", "nnunet"):
        b = best[side]
        print(f"| {side} | {b['samples_per_s']:.2f} | {b['cpu_s_per_sample']:.3f} | "
              f"{b['peak_rss_mb']:.0f} |")
    a, n = best["patchfeed"], best["nnunet"]
    print(f"patchfeed / nnU-Net: {a['samples_per_s'] / n['samples_per_s']:.1f}x samples/s, "
          f"{n['cpu_s_per_sample'] / a['cpu_s_per_sample']:.1f}x samples per CPU-second")
    print(json.dumps(best))


if __name__ == "__main__":
    main()
