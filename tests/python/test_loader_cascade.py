# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""patchfeed.Loader with nnU-Net's cascade (3d_cascade_fullres): the previous stage's
segmentation, a uint8 label map without a channel axis as nnU-Net writes it, is read with the
crop's box (-1 outside the case) and becomes one-hot image channels. Every sample equals
NnUNetAugmenter(cascade) run on the whole crop read with python-blosc2, on both read paths
(straight into the slot and through staging), also for 2-D patches of 3-D cases."""

from __future__ import annotations

import math

import blosc2
import numpy as np
import patchfeed
import patchfeed.augment
import pytest
from loader_testlib import SHAPES, reference_box, write_dataset

CROP = (20, 20, 20)
OUT = (8, 8, 8)
LABELS = [1, 2]
# Rotation and scaling half the time (both read paths), the cascade's random steps always.
AUG = {
    "patch_size": OUT,
    "max_angle": math.pi / 6,
    "p_rotation": 0.5,
    "p_scaling": 0.5,
    "p_noise": 1.0,
    "p_gamma": 1.0,
    "cascade_foreground_labels": LABELS,
    "previous_seg_array": "prev",
    "binary_operator": {"p_apply": 1.0, "strel_size": [1, 3]},
    "remove_component": {"p_apply": 1.0, "p_per_label": 0.5},
}


def previous_stage(seg: np.ndarray, seed: int) -> np.ndarray:
    """A previous stage's prediction: the label map (no channel axis) with labels flipped in
    a slab and a few random voxels, as uint8 (nnU-Net's type for < 255 labels)."""
    rng = np.random.default_rng(100 + seed)
    prev = seg[0].astype(np.uint8)
    z = prev.shape[0] // 2
    prev[z - 1: z + 1] = np.where(prev[z - 1: z + 1] == 1, 2, prev[z - 1: z + 1])
    flips = rng.random(prev.shape) < 0.02
    prev[flips] = rng.integers(0, 3, int(flips.sum()), dtype=np.uint8)
    return prev


@pytest.fixture(scope="module")
def cascade_dataset(tmp_path_factory):
    folder = write_dataset(tmp_path_factory.mktemp("loader_cascade"))
    cases = {}
    for i in range(len(SHAPES)):
        cid = f"case_{i:03d}"
        seg = blosc2.open(str(folder / f"{cid}_seg.b2nd"), mode="r")[:]
        prev = previous_stage(seg, i)
        blosc2.asarray(prev, urlpath=str(folder / f"{cid}_prev.b2nd"), mode="w",
                       chunks=prev.shape, blocks=tuple(min(8, s) for s in prev.shape))
        cases[cid] = [folder / f"{cid}.b2nd", folder / f"{cid}_seg.b2nd",
                      folder / f"{cid}_prev.b2nd"]
    return patchfeed.loader.Dataset.from_list(["image", "seg", "prev"], cases)


def crop_previous(dataset, case_index, box_start, crop) -> np.ndarray:
    """nnU-Net's seg_prev crop: the box of the label map, -1 outside the case, int16."""
    path = dataset.paths(case_index)[2]
    prev = blosc2.open(path, mode="r")[:]
    out = np.full(tuple(crop), -1, np.int16)
    src, dst = [], []
    for lo, p, s in zip(box_start, crop, prev.shape):
        a, b = max(lo, 0), min(lo + p, s)
        if a >= b:
            return out
        src.append(slice(a, b))
        dst.append(slice(a - lo, b - lo))
    out[tuple(dst)] = prev[tuple(src)]
    return out


def make_loader(dataset, augmentation=AUG, crop=CROP, **kw):
    kw.setdefault("num_threads", 2)
    patch = (1,) * (3 - len(augmentation["patch_size"])) + tuple(augmentation["patch_size"])
    kw.setdefault("need_to_pad", [c - p for c, p in zip(crop, patch)])
    return patchfeed.Loader(dataset, crop, 3, seed=5, as_numpy=True, augmentation=augmentation,
                            oversample_foreground=0.33, **kw)


@pytest.mark.parametrize("slab", [False, True], ids=["3d", "2d_of_3d"])
def test_cascade_samples_equal_the_augmenter_on_the_whole_crop(cascade_dataset, slab):
    augmentation = dict(AUG)
    crop = CROP
    if slab:  # nnU-Net's 2d: (1, Y, X) crops of 3-D cases, a 2-D pipeline
        augmentation.update(patch_size=OUT[1:], max_angle=math.pi)
        crop = (1, *CROP[1:])
    augmenter = patchfeed.augment.NnUNetAugmenter(augmentation, seed=5)
    patch = tuple(augmentation["patch_size"])
    with make_loader(cascade_dataset, augmentation, crop) as loader:
        assert loader.array_layout == {"image": ("<f4", (3, 1 + len(LABELS), *patch)),
                                       "seg": ("<i2", (3, 1, *patch))}
        onehot_seen = 0
        for _ in range(4):
            batch = loader.next_batch()
            info = loader.last_batch
            for j, sample in enumerate(info.samples):
                paths = cascade_dataset.paths(sample.case_index)
                image = reference_box(paths[0], sample.box_start, crop, 0)
                seg = reference_box(paths[1], sample.box_start, crop, -1)
                prev = crop_previous(cascade_dataset, sample.case_index, sample.box_start, crop)
                both = np.concatenate([seg, prev[None]], axis=0)
                if slab:
                    image, both = image[:, 0], both[:, 0]
                want = augmenter(image, both, j, epoch=info.epoch, batch=info.batch_index)
                np.testing.assert_array_equal(batch["image"][j], want["image"])
                np.testing.assert_array_equal(batch["seg"][j], want["segmentation"])
                onehot_seen += int(batch["image"][j][1:].any())
        assert onehot_seen > 0  # the one-hot channels are not trivially empty


def test_cascade_with_regions_takes_them_from_the_labels(cascade_dataset):
    """nnU-Net's regions come from segmentation channel 0 only (the previous stage's channel is
    gone by then): each region is the augmenter's labels in it."""
    regions = [[1, 2], [2]]
    augmenter = patchfeed.augment.NnUNetAugmenter(AUG, seed=5)
    with make_loader(cascade_dataset, {**AUG, "regions": regions}) as loader:
        assert loader.array_layout["seg"] == ("|b1", (3, len(regions), *OUT))
        for _ in range(2):
            batch = loader.next_batch()
            info = loader.last_batch
            for j, sample in enumerate(info.samples):
                paths = cascade_dataset.paths(sample.case_index)
                image = reference_box(paths[0], sample.box_start, CROP, 0)
                seg = reference_box(paths[1], sample.box_start, CROP, -1)
                prev = crop_previous(cascade_dataset, sample.case_index, sample.box_start, CROP)
                want = augmenter(image, np.concatenate([seg, prev[None]]), j, epoch=info.epoch,
                                 batch=info.batch_index)
                np.testing.assert_array_equal(batch["image"][j], want["image"])
                labels = want["segmentation"][0]
                for r, region in enumerate(regions):
                    np.testing.assert_array_equal(batch["seg"][j][r], np.isin(labels, region))


def test_cascade_refuses_what_it_cannot_read(cascade_dataset, tmp_path):
    no_prev = {k: v for k, v in AUG.items() if k != "previous_seg_array"}
    with pytest.raises(ValueError, match="previous_seg_array"):
        make_loader(cascade_dataset, no_prev)
    no_labels = {k: v for k, v in AUG.items() if k != "cascade_foreground_labels"}
    with pytest.raises(ValueError, match="previous_seg_array is read only for nnU-Net's cascade"):
        make_loader(cascade_dataset, no_labels)
    with pytest.raises(ValueError, match="no array 'previous'"):
        make_loader(cascade_dataset, {**AUG, "previous_seg_array": "previous"})
    with pytest.raises(ValueError, match="'dilate' is none of dilation"):
        make_loader(cascade_dataset, {**AUG, "binary_operator": {"operators": ["dilate"]}})
    # Each setting reaches its C++ field, whose check names it.
    for transform, key, field in (("binary_operator", "p_apply", "p_binary_operator"),
                                  ("binary_operator", "p_per_label",
                                   "p_binary_operator_per_label"),
                                  ("remove_component", "p_apply", "p_remove_component"),
                                  ("remove_component", "p_per_label",
                                   "p_remove_component_per_label"),
                                  ("remove_component", "fill_with_other_class_p",
                                   "fill_with_other_class_p"),
                                  ("remove_component", "max_coverage", "max_component_coverage")):
        with pytest.raises(ValueError, match=f"cascade augmentation: {field} = 5"):
            patchfeed.augment.NnUNetAugmenter({**AUG, transform: {key: 5}})
    with pytest.raises(ValueError, match=r"strel size range \[9, 2\]"):
        patchfeed.augment.NnUNetAugmenter({**AUG, "binary_operator": {"strel_size": [9, 2]}})
    # A float map, and one with a channel axis, are not nnU-Net's previous stage.
    bad = {}
    for i in range(len(SHAPES)):
        paths = cascade_dataset.paths(i)
        cid = cascade_dataset.case_ids[i]
        prev = blosc2.open(paths[2], mode="r")[:]
        blosc2.asarray(prev.astype(np.float32), urlpath=str(tmp_path / f"{cid}_f.b2nd"), mode="w")
        blosc2.asarray(prev[None], urlpath=str(tmp_path / f"{cid}_c.b2nd"), mode="w")
        huge = prev.astype(np.uint16)
        huge[...] = 40000  # more than nnU-Net's int16 crop holds
        blosc2.asarray(huge, urlpath=str(tmp_path / f"{cid}_u.b2nd"), mode="w")
        bad[cid] = paths[:2] + [tmp_path / f"{cid}_{k}.b2nd" for k in "fcu"]
    ds = patchfeed.loader.Dataset.from_list(["image", "seg", "float", "channels", "huge"], bad)
    with make_loader(ds, {**AUG, "previous_seg_array": "huge"}) as loader:
        with pytest.raises(ValueError, match=r"case 'case_00\d'.*array 'huge'.*label 40000, "
                                            r"more than int16 holds"):
            loader.next_batch()
    with pytest.raises(ValueError, match="uint8, uint16, int8 or int16"):
        make_loader(ds, {**AUG, "previous_seg_array": "float"})
    with pytest.raises(ValueError, match="no channel axis, as nnU-Net writes"):
        make_loader(ds, {**AUG, "previous_seg_array": "channels"})
