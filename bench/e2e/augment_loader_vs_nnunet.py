#!/usr/bin/env python3
# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Training batches with nnU-Net's augmentation, end to end: patchfeed.Loader vs nnU-Net 2.8's
own data loader and augmenter, on the same cores and the same preprocessed files.

The dataset is written by nnU-Net itself (nnUNetDatasetBlosc2.save_case: its chunk/block rule,
LZ4HC 5, its filter choice; class locations from DefaultPreprocessor): `--cases` cases of
(1, 224, 224, 224), or with 2, 4 or 9 channels (C, 140, 172, 144) (BraTS-like), float32 + int16
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
process; CPU time, peak RSS and minor page faults are summed over the process tree (workers
included), the faults over the timed steps only.

The floors (patchfeed only, `--floors`), from the same cases:
  noaug        the same loader with every augmentation's probability 0 and no mirroring: the
               same drawn boxes, whose centre 128^3 (the patch) is read straight into the ring,
               plus the deep-supervision targets, label removal and the consumer's pass.
  decode_patch augmentation=None, 128^3 boxes, need_to_pad 0: the patch-sized read alone, boxes
               of the same placement as the crops' centres (not the same draws).
  decode_crop  augmentation=None, the 205^3 crops nnU-Net's sampler reads (need_to_pad 77), the
               same draws as the augmented loader's crops.

A round runs every side once per channel count; ratios are taken within a round and the table
gives medians over rounds.

  python3 bench/e2e/augment_loader_vs_nnunet.py [--steps 30] [--threads 2] [--channels 1,2,4,9]
      [--floors] [--rounds 2]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# The same process-tree metering (CPU and RSS of the process and its children) and BATCH.
from loader_vs_dataloader import _tree, timed

PATCH = (128, 128, 128)
SHAPES = {1: (1, 224, 224, 224), 2: (2, 140, 172, 144), 4: (4, 140, 172, 144),
          9: (9, 140, 172, 144)}
SIDES = ("patchfeed", "nnunet")
FLOORS = ("noaug", "decode_patch", "decode_crop")
# Every augmentation off: nnU-Net's transforms with probability 0 and no mirroring; what is
# left is the crop (the centre patch of the drawn box), the deep-supervision targets and the
# label removal.
NO_AUGMENTATION = {"p_rotation": 0.0, "p_scaling": 0.0, "p_noise": 0.0, "p_blur": 0.0,
                   "p_brightness": 0.0, "p_contrast": 0.0, "p_low_resolution": 0.0,
                   "p_gamma_inverted": 0.0, "p_gamma": 0.0, "mirror_axes": []}
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


def _minor_faults(pids) -> int:
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as f:
                total += int(f.read().rsplit(")", 1)[1].split()[7])  # minflt, all threads
        except OSError:
            pass
    return total


def timed_faults(step, steps, warmup, decoded=None):
    """timed(), plus the minor page faults of the process tree over the timed steps, and with
    `decoded` (a function returning the loader's bytes_decoded) the bytes decoded per sample."""
    count = [0, 0, 0]

    def counted():
        if count[0] == warmup:
            count[1] = _minor_faults(_tree(os.getpid()))
            count[2] = decoded() if decoded else 0
        count[0] += 1
        step()

    result = timed(counted, steps, warmup, pss=False)  # the tables report RSS only
    result["minor_faults_per_sample"] = (_minor_faults(_tree(os.getpid())) - count[1]) / (
        steps * BATCH)
    if decoded:  # the ring runs a few batches ahead at both ends alike
        result["decoded_mb_per_sample"] = (decoded() - count[2]) / (steps * BATCH) / 1e6
    return result


def side_patchfeed(folder, threads, steps, warmup, variant="patchfeed"):
    import patchfeed

    crop = initial_patch_size()
    need_to_pad = [c - p for c, p in zip(crop, PATCH)]
    augmentation = {"patch_size": PATCH, "max_angle": ANGLE,
                    "deep_supervision_scales": DS_SCALES}
    if variant == "noaug":
        augmentation.update(NO_AUGMENTATION)
    elif variant == "decode_patch":
        crop, need_to_pad, augmentation = PATCH, [0] * 3, None
    elif variant == "decode_crop":
        augmentation = None
    loader = patchfeed.Loader(folder, crop, BATCH, seed=0, num_threads=threads,
                              oversample_foreground=0.33, as_numpy=True,
                              need_to_pad=need_to_pad, augmentation=augmentation)
    it = iter(loader)

    def step():
        b = next(it)
        seg = b["seg"]
        consume(b["image"], seg if augmentation is None else seg[0])

    result = timed_faults(step, steps, warmup, lambda: loader.metrics()["bytes_decoded"])
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

    result = timed_faults(step, steps, warmup)
    aug._finish()
    return result


def run_side(side, args, folder):
    cmd = [sys.executable, os.path.abspath(__file__), "--side", side, "--folder", folder,
           "--threads", str(args.threads), "--steps", str(args.steps), "--warmup",
           str(args.warmup)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _median(rounds, side, key):
    return statistics.median(r[side][key] for r in rounds)


def summary(channels, rounds, sides):
    """One row per channel count: medians over rounds, ratios taken within each round."""
    rows = []
    for c in channels:
        rs = rounds[c]
        row = {"channels": c, "shape": SHAPES[c]}
        for side in sides:
            for key in ("cpu_s_per_sample", "samples_per_s", "peak_rss_mb",
                        "minor_faults_per_sample"):
                row[f"{side}_{key}"] = _median(rs, side, key)
            if side != "nnunet":
                row[f"{side}_decoded_mb"] = _median(rs, side, "decoded_mb_per_sample")
        if "patchfeed" in sides and "decode_patch" in sides:
            # What decoding the augmented loader's own bytes costs at decode_patch's rate per
            # byte (its windows are larger than the patch when rotated or scaled): a floor for
            # nnU-Net's draws. It overstates a little: the consumer's pass in decode_patch does
            # not grow with the bytes.
            row["reads_floor"] = statistics.median(
                r["decode_patch"]["cpu_s_per_sample"] * r["patchfeed"]["decoded_mb_per_sample"] /
                r["decode_patch"]["decoded_mb_per_sample"] for r in rs)
        if "nnunet" in sides and "patchfeed" in sides:
            row["ratio"] = statistics.median(r["nnunet"]["cpu_s_per_sample"] /
                                             r["patchfeed"]["cpu_s_per_sample"] for r in rs)
            row["speed_ratio"] = statistics.median(r["patchfeed"]["samples_per_s"] /
                                                   r["nnunet"]["samples_per_s"] for r in rs)
            for floor in FLOORS:
                if floor in sides:  # the ratio a patchfeed costing only this floor would give
                    row[f"{floor}_ratio"] = statistics.median(
                        r["nnunet"]["cpu_s_per_sample"] / r[floor]["cpu_s_per_sample"]
                        for r in rs)
            if "reads_floor" in row:
                row["reads_floor_ratio"] = statistics.median(
                    r["nnunet"]["cpu_s_per_sample"] / (
                        r["decode_patch"]["cpu_s_per_sample"] *
                        r["patchfeed"]["decoded_mb_per_sample"] /
                        r["decode_patch"]["decoded_mb_per_sample"]) for r in rs)
        rows.append(row)
    return rows


def print_tables(rows, sides, args):
    print(f"\nmedians over {args.rounds} rounds, {args.cases} cases per channel count, "
          f"{args.steps} batches of {BATCH} x {PATCH} from {initial_patch_size()} crops, "
          f"{args.threads} threads/workers, deep-supervision targets on both sides:")
    if "nnunet" in sides and "patchfeed" in sides:
        print("| channels | case | patchfeed CPU s/sample | nnU-Net CPU s/sample | ratio | "
              "15x needs | patchfeed samples/s | nnU-Net samples/s | patchfeed peak RSS (MB) | "
              "nnU-Net peak RSS (MB) | patchfeed minor faults/sample |")
        print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for r in rows:
            print(f"| {r['channels']} | {'x'.join(map(str, r['shape'][1:]))} | "
                  f"{r['patchfeed_cpu_s_per_sample']:.4f} | {r['nnunet_cpu_s_per_sample']:.3f} | "
                  f"{r['ratio']:.1f}x | {r['nnunet_cpu_s_per_sample'] / 15:.4f} | "
                  f"{r['patchfeed_samples_per_s']:.2f} | {r['nnunet_samples_per_s']:.2f} | "
                  f"{r['patchfeed_peak_rss_mb']:.0f} | {r['nnunet_peak_rss_mb']:.0f} | "
                  f"{r['patchfeed_minor_faults_per_sample']:.0f} |")
    floors = [f for f in FLOORS if f in sides]
    if floors:
        print("\nfloors, patchfeed CPU s/sample (in brackets: nnU-Net's CPU per sample over it, "
              "the ratio patchfeed would reach if it cost only this), minor faults/sample:")
        print("| channels | " + " | ".join(floors) + " | faults " + " | faults ".join(floors) +
              " |")
        print("| ---: |" + " ---: |" * (2 * len(floors)))
        for r in rows:
            cells = []
            for f in floors:
                ratio = f" ({r[f + '_ratio']:.0f}x)" if f + "_ratio" in r else ""
                cells.append(f"{r[f + '_cpu_s_per_sample']:.4f}{ratio}")
            cells += [f"{r[f + '_minor_faults_per_sample']:.0f}" for f in floors]
            print(f"| {r['channels']} | " + " | ".join(cells) + " |")
    if rows and "reads_floor" in rows[0]:
        print("\nbytes decoded per sample (MB) and the reads floor: decode_patch's CPU per byte "
              "times the augmented loader's bytes (in brackets: nnU-Net over it):")
        print("| channels | patchfeed MB | decode_patch MB | reads floor CPU s/sample |")
        print("| ---: | ---: | ---: | ---: |")
        for r in rows:
            ratio = f" ({r['reads_floor_ratio']:.1f}x)" if "reads_floor_ratio" in r else ""
            print(f"| {r['channels']} | {r['patchfeed_decoded_mb']:.1f} | "
                  f"{r['decode_patch_decoded_mb']:.1f} | {r['reads_floor']:.4f}{ratio} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default="/dev/shm/patchfeed_augment_loader")
    ap.add_argument("--cases", type=int, default=6)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--channels", default="1",
                    help=f"a channel count or a comma-separated list, of {sorted(SHAPES)}")
    ap.add_argument("--floors", action="store_true",
                    help="also run the patchfeed floors: " + ", ".join(FLOORS))
    ap.add_argument("--sides", help="comma-separated subset of " + ", ".join(SIDES + FLOORS))
    ap.add_argument("--side", choices=SIDES + FLOORS)
    ap.add_argument("--folder")
    args = ap.parse_args()
    if args.side:
        if args.side == "nnunet":
            res = side_nnunet(args.folder, args.threads, args.steps, args.warmup)
        else:
            res = side_patchfeed(args.folder, args.threads, args.steps, args.warmup, args.side)
        print(json.dumps(res))
        return
    channels = [int(c) for c in args.channels.split(",")]
    for c in channels:
        if c not in SHAPES:
            ap.error(f"--channels: {c} is not one of {sorted(SHAPES)}")
    sides = SIDES + (FLOORS if args.floors else ())
    if args.sides:
        sides = tuple(args.sides.split(","))
    folders = {c: write_dataset(os.path.join(args.root, f"cases_{c}ch"), args.cases, c)
               for c in channels}
    rounds = {c: [] for c in channels}
    for r in range(args.rounds):
        for c in channels:
            res = {}
            for side in sides:
                res[side] = run_side(side, args, folders[c])
                print(f"round {r} {c} ch {side:12s} {res[side]['samples_per_s']:6.2f} samples/s "
                      f"{res[side]['cpu_s_per_sample']:.4f} CPU s/sample "
                      f"RSS {res[side]['peak_rss_mb']:.0f} MB "
                      f"{res[side]['minor_faults_per_sample']:.0f} minor faults/sample",
                      flush=True)
            rounds[c].append(res)
    rows = summary(channels, rounds, sides)
    print_tables(rows, sides, args)
    print(json.dumps({"rows": rows, "rounds": rounds}))


if __name__ == "__main__":
    main()
