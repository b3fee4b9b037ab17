#!/usr/bin/env python3
# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""CPU time of nnU-Net's cascade augmentation steps (3d_cascade_fullres), patchfeed vs
batchgeneratorsv2 0.3.5, one thread, same process, same data: a 128^3 patch whose previous-
stage segmentation has 3 foreground labels (a large organ, a few mid-sized blobs, small
lesions), as one int16 channel.

Rows: MoveSegAsOneHotToData; each binary operator (bg2's FFT-convolution `binary_*_torch`)
at three radii on one label channel; RemoveRandomConnectedComponent on one channel with the
component given (bg2 through `_apply_to_image`, np.random seeded); and the expected cost per
training sample: both random steps behind nnU-Net's gates (0.4 and 0.2, p_per_label 0.5,
radius U(1, 8)) after the one-hot, averaged over `--samples` samples per side (bg2:
`ComposeTransforms` of nnU-Net's three transforms; patchfeed: `seg_to_onehot` then
`cascade_random_`). Fixed-parameter rows keep the best of `--rounds` alternating rounds;
times are this thread's CPU time (time.thread_time), as in augment_intensity_vs_bg2.py.

  PYTHONPATH=build/test/python python3 bench/e2e/augment_cascade_vs_bg2.py [--rounds 3]
"""

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import torch
from batchgeneratorsv2.transforms.nnunet.random_binary_operator import (
    ApplyRandomBinaryOperatorTransform,
    binary_closing_torch,
    binary_dilation_torch,
    binary_erosion_torch,
    binary_opening_torch,
)
from batchgeneratorsv2.transforms.nnunet.remove_connected_components import (
    RemoveRandomConnectedComponentFromOneHotEncodingTransform,
)
from batchgeneratorsv2.transforms.nnunet.seg_to_onehot import MoveSegAsOneHotToDataTransform
from batchgeneratorsv2.transforms.utils.compose import ComposeTransforms
from batchgeneratorsv2.transforms.utils.random import RandomTransform
from skimage.morphology import ball

from patchfeed import _core

aug = _core.augment
torch.set_num_threads(1)

SHAPE = (128, 128, 128)
LABELS = [1, 2, 3]
OPERATORS = {
    "dilation": binary_dilation_torch,
    "erosion": binary_erosion_torch,
    "closing": binary_closing_torch,
    "opening": binary_opening_torch,
}


def previous_stage(seed=0):
    rng = np.random.default_rng(seed)
    grid = np.indices(SHAPE)
    seg = np.zeros(SHAPE, np.int16)

    def put(label, centre, radius):
        seg[sum((g - c) ** 2 for g, c in zip(grid, centre)) <= radius**2] = label

    put(1, (64, 60, 70), 38)  # the organ
    for _ in range(5):
        put(3, rng.uniform(10, 118, 3), rng.uniform(6, 14))
    for _ in range(8):
        put(2, rng.uniform(30, 98, 3), rng.uniform(2, 6))
    return seg


def best_of(rounds, f, setup=lambda: None):
    """Best of `rounds` runs of f(setup()); setup (fresh copies of in-place inputs) untimed."""
    best = float("inf")
    for _ in range(rounds):
        arg = setup()
        t = time.thread_time()
        f(arg)
        best = min(best, time.thread_time() - t)
    return best * 1e3


def fixed_rows(seg, rounds):
    rows = []
    image = np.zeros((1, *SHAPE), np.float32)
    seg2 = np.stack([seg, seg])

    def bg2_onehot(_):
        MoveSegAsOneHotToDataTransform(1, LABELS)(
            image=torch.from_numpy(image), segmentation=torch.from_numpy(seg2)
        )

    rows.append(
        (
            "MoveSegAsOneHotToData (3 labels)",
            best_of(rounds, bg2_onehot),
            best_of(rounds, lambda _: aug.seg_to_onehot(seg2, LABELS, 1)),
        )
    )
    mask = seg == 1
    for op, f in OPERATORS.items():
        for radius in (2.5, 4.5, 7.5):
            strel = torch.from_numpy(ball(radius, dtype=bool))
            t_mask = torch.from_numpy(mask)
            ours_mask = mask[None].astype(np.uint8)
            rows.append(
                (
                    f"{op}, ball radius {radius} (organ channel)",
                    best_of(rounds, lambda _, f=f, s=strel: f(t_mask, s)),
                    best_of(
                        rounds,
                        lambda work, o=op, r=radius: aug.binary_morphology_(work, o, r),
                        ours_mask.copy,
                    ),
                )
            )
    onehot = np.stack([(seg == k) for k in LABELS]).astype(np.float32)
    remove = RemoveRandomConnectedComponentFromOneHotEncodingTransform(
        channel_idx=[0, 1, 2], fill_with_other_class_p=0, dont_do_if_covers_more_than_x_percent=0.15
    )

    def bg2_remove(work):
        np.random.seed(3)
        remove._apply_to_image(work, apply_to_channels=[1])

    def ours_remove(work):
        aug.remove_component_(work, [1], [0.3], [1.0], [0.0])

    rows.append(
        (
            "RemoveConnectedComponent (lesion channel)",
            best_of(rounds, bg2_remove, lambda: torch.from_numpy(onehot.copy())),
            best_of(rounds, ours_remove, onehot.copy),
        )
    )
    return rows


def per_sample(seg, samples):
    image = np.zeros((1, *SHAPE), np.float32)
    seg2 = np.stack([seg, seg])
    idx = list(range(-len(LABELS), 0))
    bg2 = ComposeTransforms(
        [
            MoveSegAsOneHotToDataTransform(1, LABELS, True),
            RandomTransform(
                ApplyRandomBinaryOperatorTransform(idx, strel_size=(1, 8), p_per_label=0.5), 0.4
            ),
            RandomTransform(
                RemoveRandomConnectedComponentFromOneHotEncodingTransform(idx, 0, 0.15, 0.5), 0.2
            ),
        ]
    )
    np.random.seed(0)
    torch.manual_seed(0)
    t_bg2 = t_ours = 0.0
    for i in range(samples):
        t = time.thread_time()
        bg2(image=torch.from_numpy(image.copy()), segmentation=torch.from_numpy(seg2.copy()))
        t_bg2 += time.thread_time() - t
        t = time.thread_time()
        onehot = aug.seg_to_onehot(seg2, LABELS, 1)
        aug.cascade_random_(onehot, seed=1, position=i)
        t_ours += time.thread_time() - t
    return t_bg2 / samples * 1e3, t_ours / samples * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--samples", type=int, default=60)
    args = ap.parse_args()
    seg = previous_stage()
    print("| step | batchgeneratorsv2 ms | patchfeed ms | ratio |")
    print("|---|---:|---:|---:|")
    for name, b, p in fixed_rows(seg, args.rounds):
        print(f"| {name} | {b:.2f} | {p:.2f} | {b / p:.1f}x |", flush=True)
    b, p = per_sample(seg, args.samples)
    print(
        f"| one-hot + both random steps, mean per sample ({args.samples} samples, nnU-Net's gates) "
        f"| {b:.2f} | {p:.2f} | {b / p:.1f}x |"
    )


if __name__ == "__main__":
    main()
