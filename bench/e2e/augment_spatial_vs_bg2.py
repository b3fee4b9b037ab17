# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Per-sample time of patchfeed's SpatialTransform against batchgeneratorsv2 0.3.5, one thread.

nnU-Net's 3D case: a 1-channel 205^3 float32 image and an int16 segmentation with labels
{0, 1, 2, 3}, output patch 128^3. Two paths: rotation + scaling forced on (the interpolating
path, 36 % of nnU-Net's samples) and the no-transform crop path (the other 64 %). Both tools
run in this process on the same arrays, in --rounds interleaved rounds of --repeats calls
after one warm-up each (the machine may be shared); both draw angles in (-30, 30) degrees and
a scale in (0.7, 1.4) per call. Usage:

    PYTHONPATH=build/spatial/python python bench/e2e/augment_spatial_vs_bg2.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch
from batchgeneratorsv2.transforms.spatial.spatial import SpatialTransform
from patchfeed._core import augment as pf_augment


def make_sample(shape, seed=0):
    rng = np.random.default_rng(seed)
    zz, yy, xx = np.meshgrid(
        *[np.linspace(-1, 1, s, dtype=np.float32) for s in shape], indexing="ij"
    )
    image = (
        np.sin(3 * zz) * np.cos(2 * yy) + xx + 0.1 * rng.standard_normal(shape)
    ).astype(np.float32)[None]
    r = np.sqrt(zz**2 + yy**2 + xx**2)
    seg = np.zeros(shape, np.int16)
    seg[r < 0.8] = 1
    seg[(r < 0.5) & (xx > 0)] = 2
    seg[(r < 0.3) & (yy > 0.1)] = 3
    return image, seg[None]


def bg2_transform(patch, transform: bool):
    return SpatialTransform(
        patch_size=patch,
        patch_center_dist_from_border=0,
        random_crop=False,
        p_rotation=1 if transform else 0,
        rotation=(-np.pi / 6, np.pi / 6),
        p_scaling=1 if transform else 0,
        scaling=(0.7, 1.4),
        p_synchronize_scaling_across_axes=1,
        bg_style_seg_sampling=False,
        border_mode_seg="constant",
        padding_value_seg=-1,
    )


def timings(fn, repeats):
    """Seconds of `repeats` calls after one warm-up call."""
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--shape", type=int, default=205)
    parser.add_argument("--patch", type=int, default=128)
    args = parser.parse_args()
    torch.set_num_threads(1)
    shape = (args.shape,) * 3
    patch = (args.patch,) * 3
    image, seg = make_sample(shape)
    timg, tseg = torch.from_numpy(image), torch.from_numpy(seg)
    rng = np.random.default_rng(1)

    rows = []
    for name, transform in (("rotation+scaling", True), ("crop only", False)):
        st = bg2_transform(patch, transform)

        def run_bg2(st=st):
            out = st(image=timg, segmentation=tseg)
            # bg2's crop path returns views into the input; a loader needs the patch in its
            # own memory, so the copy is part of the work (a no-op for resampled outputs).
            out["image"].contiguous()
            out["segmentation"].contiguous()

        # bg2 draws new angles and a new scale on every call; patchfeed cycles through draws
        # from the same distributions, so both average over the same mix (the cost of a
        # resample grows with the scale: a larger input footprint, fewer outside voxels).
        draws = [
            (list(rng.uniform(-np.pi / 6, np.pi / 6, 3)), float(rng.uniform(0.7, 1.4)))
            for _ in range(16)
        ]
        counter = iter(range(1 << 30))

        def run_pf(transform=transform, draws=draws, counter=counter):
            angles, scale = draws[next(counter) % len(draws)]
            pf_augment.spatial_transform(
                image, seg, list(patch), transform, transform, angles, [scale] * 3
            )

        # Interleave the two tools so background load hits both alike.
        bg2_t, pf_t = [], []
        for _ in range(args.rounds):
            bg2_t += timings(run_bg2, args.repeats)
            pf_t += timings(run_pf, args.repeats)
        rows.append((name, bg2_t, pf_t))

    print(
        f"SpatialTransform, 1 thread, (1, {args.shape}^3) float32 + int16 seg (labels 0-3) "
        f"-> {args.patch}^3; {args.rounds} x {args.repeats} calls per tool, ms"
    )
    print(
        f"{'path':<18} {'bg2 median':>10} {'bg2 mean':>9} {'pf median':>10} {'pf mean':>8} "
        f"{'ratio (median)':>15} {'ratio (mean)':>13}"
    )
    for name, b, p in rows:
        bm, ba = statistics.median(b), statistics.fmean(b)
        pm, pa = statistics.median(p), statistics.fmean(p)
        print(
            f"{name:<18} {bm * 1e3:10.1f} {ba * 1e3:9.1f} {pm * 1e3:10.2f} {pa * 1e3:8.2f} "
            f"{bm / pm:14.1f}x {ba / pa:12.1f}x"
        )


if __name__ == "__main__":
    main()
