# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Pictures: `patchfeed show`, the patches a `patchfeed.Loader` gives for a dataset; and
`patchfeed bench --plot`, the throughput of a bench run (`plot_bench`).

    patchfeed show DATASET --augmented 8 --out patches.png     # nnU-Net's augmentation
    patchfeed show DATASET --augmented 8 --plain --out plain.png

DATASET is an nnU-Net preprocessed folder or a folder `patchfeed convert` wrote. Each row is
one sample of one batch: for 3-D patches the middle slice across each axis (three panels), for
2-D patches the patch; channel 0 (`--channel`) in grey from its 1st to its 99th percentile, the
segmentation's labels outlined in colour (label 1 red, then green, blue, ...), titled with the
case id and the box the sampler drew (its first voxel in the case; the crop nnU-Net enlarges
before augmenting when augmented). Drawn with matplotlib's Agg backend: no display needed.

The augmentation is nnU-Net's default as its trainer configures it for the patch
(`nnunet_augmentation`), through the Loader's `augmentation` option (docs/augment.md).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from patchfeed.loader import Dataset, Loader

# Outline colours, by label: 1 red, 2 green, 3 blue, ... (repeating beyond the list).
LABEL_COLOURS = ("#ff0000", "#00ff00", "#0080ff", "#ffff00", "#ff00ff", "#00ffff", "#ff8000")
PANEL_PX = 250  # each panel is PANEL_PX x PANEL_PX pixels
_DPI = 100
# nnU-Net's trainer (configure_rotation_dummyDA_mirroring_and_inital_patch_size).
_ANISOTROPY = 3.0  # nnunetv2.configuration.ANISO_THRESHOLD
_MIN_SCALE = 0.85  # the scale range its initial patch size is computed with: (0.85, 1.25)


def _rotation(axis: int, angle: float) -> np.ndarray:
    """The rotation about `axis` of a 3-D (or, with axis None-like -1, 2-D) frame, in the
    orientation batchgenerators' coordinate rotations use (row vector times matrix)."""
    c, s = math.cos(angle), math.sin(angle)
    if axis < 0:
        return np.array([[c, -s], [s, c]])
    m = np.identity(3)
    i, j = [a for a in range(3) if a != axis]
    sign = -1.0 if axis == 1 else 1.0  # about the middle axis the sine's sign turns
    m[i, i], m[i, j], m[j, i], m[j, j] = c, -s * sign, s * sign, c
    return m


def _enlarged_patch(patch: Sequence[int], angle: float) -> list[int]:
    """nnU-Net's initial patch size: the extents of the patch's corner vector rotated by
    `angle` about each axis in turn (at most 90 degrees), the largest per axis, divided by the
    smallest scale."""
    extents = np.array(patch, dtype=float)
    angle = min(angle, math.pi / 2)
    largest = extents.copy()
    for axis in (range(3) if len(patch) == 3 else [-1]):
        largest = np.maximum(largest, np.abs(extents @ _rotation(axis, angle)))
    return [int(v) for v in largest / _MIN_SCALE]


def nnunet_augmentation(patch: Sequence[int]) -> tuple[list[int], list[int], dict[str, Any]]:
    """`(crop, need_to_pad, augmentation)` Loader options for patches of `patch` as nnU-Net's
    trainer sets them: rotations up to 30 degrees (180 in-plane for anisotropic patches, whose
    first axis is then not rotated: "dummy 2D"), mirroring on every axis, and the crop enlarged
    so that rotated and scaled patches have data in their corners. A patch (1, Y, X) is
    nnU-Net's 2d configuration: 2-D patches (Y, X) from slices, rotated in-plane up to 180
    degrees (15 when one side is over 1.5 times the other)."""
    patch = [int(p) for p in patch]
    if len(patch) != 3:
        raise ValueError(f"patch {patch}: give 3 values, (1, Y, X) for 2-D patches")
    if patch[0] == 1:
        final = patch[1:]
        angle = math.radians(15 if max(final) / min(final) > 1.5 else 180)
        crop = [1, *_enlarged_patch(final, angle)]
        aug = {"patch_size": final, "max_angle": angle, "dummy_2d": False, "mirror_axes": [0, 1]}
    else:
        final = patch
        dummy_2d = max(patch) / patch[0] > _ANISOTROPY
        angle = math.radians(180 if dummy_2d else 30)
        crop = _enlarged_patch(final, angle)
        if dummy_2d:
            crop[0] = patch[0]
        aug = {"patch_size": final, "max_angle": angle, "dummy_2d": dummy_2d,
               "mirror_axes": [0, 1, 2]}
    return crop, [c - p for c, p in zip(crop, patch)], aug


def open_folder(folder: str) -> Dataset:
    """An nnU-Net preprocessed folder, or a folder convert wrote (with labels the same layout;
    without them image-only)."""
    if not os.path.isdir(folder):
        raise ValueError(f"no such folder: {folder}")
    files = os.listdir(folder)
    if any(f.endswith("_seg.b2nd") for f in files):
        return Dataset.from_nnunet_folder(folder)
    if any(f.endswith(".b2nd") for f in files):
        return Dataset.from_folder(folder, {"image": ".b2nd"})
    raise ValueError(f"{folder} holds no .b2nd cases (an nnU-Net preprocessed folder, or a "
                     f"folder patchfeed convert wrote)")


def default_patch(dataset: Dataset) -> list[int]:
    """The first case's spatial shape, at most 128 per axis."""
    return [min(n, 128) for n in dataset.open_array(0, dataset.array_names[0]).shape[1:]]


def draw_patches(dataset: Dataset, out: str, *, count: int = 8, augmented: bool = True,
                 patch: Sequence[int] | None = None, seed: int = 0, channel: int = 0,
                 num_threads: int = 0) -> tuple[int, int]:
    """Draws one batch of `count` samples and writes the picture to `out` (PNG); returns its
    (width, height) in pixels."""
    if count < 1:
        raise ValueError(f"count must be at least 1, not {count}")
    patch = list(patch) if patch is not None else default_patch(dataset)
    options: dict[str, Any] = {}
    crop = patch
    if augmented:
        crop, options["need_to_pad"], options["augmentation"] = nnunet_augmentation(patch)
    with Loader(dataset, crop, count, seed=seed, as_numpy=True, num_threads=num_threads,
                ring_size=1, **options) as loader:
        batch = loader.next_batch()
        samples = loader.last_batch.samples
    image = batch["image"]
    if not 0 <= channel < image.shape[1]:
        raise ValueError(f"channel {channel}: the images have {image.shape[1]} channels")
    seg = batch.get("seg")
    return _render(out, dataset.case_ids, samples, crop, image[:, channel],
                   None if seg is None else seg[:, 0], augmented)


def _planes(volume: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """The panels of one sample: the middle slice across each axis of a 3-D patch (a patch
    one voxel thick is 2-D), or the 2-D patch."""
    if volume.ndim == 3 and volume.shape[0] == 1:
        volume = volume[0]
    if volume.ndim == 2:
        return [("", volume)]
    return [(f"axis {a} mid", np.take(volume, volume.shape[a] // 2, axis=a)) for a in range(3)]


def _render(out: str, case_ids: Sequence[str], samples: Sequence[Any], crop: Sequence[int],
            images: np.ndarray, segs: np.ndarray | None, augmented: bool) -> tuple[int, int]:
    from matplotlib.figure import Figure  # no pyplot: no global state, Agg writes the PNG

    cols = len(_planes(images[0]))
    fig = Figure(figsize=(cols * PANEL_PX / _DPI, len(images) * PANEL_PX / _DPI), dpi=_DPI)
    height = len(images) * PANEL_PX
    fig.subplots_adjust(left=0.01, right=0.99, bottom=4 / height, top=1 - 36 / height,
                        wspace=0.04, hspace=0.18)
    for row, (sample, image) in enumerate(zip(samples, images)):
        low, high = np.percentile(image, (1, 99))
        seg_planes = _planes(segs[row]) if segs is not None else None
        box = ", ".join(f"{s}:{s + n}" for s, n in zip(sample.box_start, crop))
        for col, (where, plane) in enumerate(_planes(image)):
            ax = fig.add_subplot(len(images), cols, row * cols + col + 1)
            ax.imshow(plane, cmap="gray", vmin=low, vmax=high if high > low else low + 1,
                      interpolation="nearest")
            if seg_planes is not None:
                _outline(ax, seg_planes[col][1])
            title = f"{case_ids[sample.case_index]} [{box}]" if col == 0 else where
            if col == 0 and where:
                title += f" {where}"
            ax.set_title(title, fontsize=7, pad=2)
            ax.set_axis_off()
    fig.suptitle(f"{len(images)} {'augmented' if augmented else 'plain'} samples", fontsize=8,
                 y=1 - 4 / height, verticalalignment="top")
    fig.savefig(out, format="png")
    width, height = fig.canvas.get_width_height()
    return width, height


def _outline(ax: Any, seg: np.ndarray) -> None:
    """Each label > 0 outlined in its colour (-1, nnU-Net's outside, and 0 are not)."""
    for label in np.unique(seg):
        if label <= 0:
            continue
        mask = (seg == label).astype(np.float32)
        if mask.min() == mask.max():  # the whole plane: no edge to draw
            continue
        ax.contour(mask, levels=[0.5], colors=[LABEL_COLOURS[(int(label) - 1) %
                                                             len(LABEL_COLOURS)]],
                   linewidths=1.5)


def _ints(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected integers like 64,64,64, not {text!r}")
    if any(v <= 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive integers, not {text!r}")
    return values


def main(argv: Sequence[str]) -> int:
    """`patchfeed show ...`: 0 when the picture is written; 1 with the error otherwise."""
    p = argparse.ArgumentParser(prog="patchfeed show", description=__doc__.split("\n\n")[0])
    p.add_argument("dataset", help="nnU-Net preprocessed folder, or a folder patchfeed convert "
                   "wrote")
    p.add_argument("--out", default="patches.png", help="PNG to write (default patches.png)")
    p.add_argument("--augmented", type=int, default=8, metavar="N",
                   help="how many samples, augmented as nnU-Net does (default 8)")
    p.add_argument("--plain", action="store_true", help="the samples without augmentation")
    p.add_argument("--patch", type=_ints, help="patch Z,Y,X, or 1,Y,X for 2-D patches (default: "
                   "the first case's shape, at most 128 per axis)")
    p.add_argument("--seed", type=int, default=0, help="the loader's seed (default 0)")
    p.add_argument("--channel", type=int, default=0, help="image channel shown (default 0)")
    args = p.parse_args(list(argv))
    try:
        import matplotlib  # noqa: F401  (only to say what is missing)
    except ImportError:
        print("patchfeed show: error: drawing needs matplotlib: pip install matplotlib",
              file=sys.stderr)
        return 1
    try:
        dataset = open_folder(args.dataset)
        width, height = draw_patches(dataset, args.out, count=args.augmented,
                                     augmented=not args.plain, patch=args.patch, seed=args.seed,
                                     channel=args.channel)
    except (ValueError, OSError) as e:
        print(f"patchfeed show: error: {e}", file=sys.stderr)
        return 1
    print(f"patchfeed show: {args.augmented} {'plain' if args.plain else 'augmented'} samples "
          f"-> {args.out} ({width}x{height})")
    return 0


BENCH_PLOT_PX = (800, 450)


def plot_bench(results: Sequence[dict[str, Any]], out: str, title: str) -> tuple[int, int]:
    """`patchfeed bench --plot`: samples/s at each timed step (a batch over the time since the
    previous one) for each run of a threads sweep, with the median of 5 steps around it and
    the run's mean as a dashed line: warm-up, stalls and how the thread counts compare show at
    once. Returns the PNG's (width, height)."""
    from matplotlib import colormaps
    from matplotlib.figure import Figure

    # Colours from tab10 itself, not "C0", "C1": those follow the global style, which other
    # code in the process may have changed (nnU-Net's progress plot calls seaborn.set()).
    palette = colormaps["tab10"]
    fig = Figure(figsize=(BENCH_PLOT_PX[0] / _DPI, BENCH_PLOT_PX[1] / _DPI), dpi=_DPI)
    ax = fig.add_subplot(1, 1, 1)
    top = 0.0
    for k, result in enumerate(results):
        colour = palette(k % 10)
        rate = result["batch"] / np.maximum(np.array(result["step_s"]), 1e-9)
        steps = np.arange(1, len(rate) + 1)
        ax.plot(steps, rate, color=colour, alpha=0.35, linewidth=0.8)
        half = 2
        median = [np.median(rate[max(0, i - half):i + half + 1]) for i in range(len(rate))]
        top = max(top, 1.5 * max(median), 1.2 * result["samples_per_s"])
        ax.plot(steps, median, color=colour, linewidth=1.8,
                label=f"{result['threads']} threads: {result['samples_per_s']:.1f} samples/s")
        ax.axhline(result["samples_per_s"], color=colour, linestyle="--", linewidth=1)
    ax.set_xlabel("step (batch)")
    ax.set_ylabel("samples/s")
    # A batch the ring had ready arrives in microseconds, a spike of 1e5 samples/s that would
    # flatten everything else: the axis ends above the medians and means, spikes run off it.
    ax.set_ylim(bottom=0, top=top if top > 0 else None)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(out, format="png")
    return fig.canvas.get_width_height()
