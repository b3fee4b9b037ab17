# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""patchfeed.Loader with nnU-Net's augmentation: every sample equals NnUNetAugmenter run on the
whole crop (read with python-blosc2) with the same draws, so the loader's fused read (only the
window the spatial transform samples) changes nothing; batches do not depend on the thread
count; bad options are ValueErrors."""

from __future__ import annotations

import math

import numpy as np
import patchfeed
import patchfeed.augment
import pytest
from loader_testlib import reference_box, write_dataset

CROP = (20, 20, 20)
OUT = (8, 8, 8)
# Rotation and scaling half the time each and every intensity transform on: both read paths
# (window and direct) and the whole pipeline run within a few batches.
AUG = {
    "patch_size": OUT,
    "max_angle": math.pi / 6,
    "p_rotation": 0.5,
    "p_scaling": 0.5,
    "p_noise": 1.0,
    "p_blur": 1.0,
    "p_brightness": 1.0,
    "p_contrast": 1.0,
    "p_low_resolution": 1.0,
    "p_gamma": 1.0,
}


@pytest.fixture(scope="module")
def dataset_dir(tmp_path_factory):
    return write_dataset(tmp_path_factory.mktemp("loader_augment"))


def make_loader(folder, **kw):
    kw.setdefault("num_threads", 2)
    # nnU-Net's padding of the enlarged crop, as a training would set it.
    kw.setdefault("need_to_pad", [c - p for c, p in zip(CROP, AUG["patch_size"])])
    return patchfeed.Loader(folder, CROP, 3, seed=11, as_numpy=True, augmentation=AUG,
                            oversample_foreground=0.33, **kw)


def test_samples_equal_the_augmenter_on_the_whole_crop(dataset_dir):
    # 12 samples with rotation or scaling each drawn with p 0.5: both read paths run (all 12
    # on the crop path has probability 0.25^12).
    augmenter = patchfeed.augment.NnUNetAugmenter(AUG, seed=11)
    with make_loader(dataset_dir) as loader:
        assert loader.array_layout == {"image": ("<f4", (3, 1, *OUT)),
                                       "seg": ("<i2", (3, 1, *OUT))}
        ids = loader.dataset.case_ids
        for _ in range(4):
            batch = loader.next_batch()
            info = loader.last_batch
            assert (batch["seg"] >= 0).all()  # RemoveLabel ran
            for j, sample in enumerate(info.samples):
                case = ids[sample.case_index]
                image = reference_box(str(dataset_dir / f"{case}.b2nd"), sample.box_start, CROP, 0)
                seg = reference_box(str(dataset_dir / f"{case}_seg.b2nd"), sample.box_start,
                                    CROP, -1)
                want = augmenter(image, seg, j, epoch=info.epoch, batch=info.batch_index)
                np.testing.assert_array_equal(batch["image"][j], want["image"])
                np.testing.assert_array_equal(batch["seg"][j], want["segmentation"])


def test_batches_do_not_depend_on_the_thread_count(dataset_dir):
    runs = []
    for threads in (1, 2):
        with make_loader(dataset_dir, num_threads=threads) as loader:
            runs.append([{k: v.copy() for k, v in loader.next_batch().items()} for _ in range(3)])
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a["image"], b["image"])
        np.testing.assert_array_equal(a["seg"], b["seg"])


def test_bad_augmentation_options_are_value_errors(dataset_dir):
    with pytest.raises(ValueError, match="unknown augmentation option"):
        patchfeed.Loader(dataset_dir, CROP, 2, augmentation={"patch_size": OUT, "p_rotate": 1})
    with pytest.raises(ValueError, match="must fit in the sampler's crop"):
        patchfeed.Loader(dataset_dir, (6, 20, 20), 2, augmentation={"patch_size": OUT})
    with pytest.raises(ValueError, match="rotation range .* must be finite"):
        patchfeed.Loader(dataset_dir, CROP, 2,
                         augmentation={"patch_size": OUT, "max_angle": float("nan")})
    with pytest.raises(ValueError, match="p_noise = 5.0+ is not a probability"):
        patchfeed.augment.NnUNetAugmenter({"patch_size": OUT, "p_noise": 5})
    with pytest.raises(TypeError, match="option 'p_blur' has the wrong type"):
        patchfeed.augment.NnUNetAugmenter({"patch_size": OUT, "p_blur": "often"})


def test_settings_that_change_nnunet_sampling_warn_with_the_fix(tmp_path):
    """A crop equal to the patch (no room for rotations) or an enlarged crop without
    need_to_pad makes sampling differ from nnU-Net's silently; both warn naming the fix."""
    import warnings

    from loader_testlib import write_dataset

    folder = write_dataset(tmp_path / "d")
    with pytest.warns(UserWarning, match="equals the patch"):
        patchfeed.Loader(str(folder), (16, 16, 16), 2, augmentation={"patch_size": (16,) * 3},
                         as_numpy=True).close()
    with pytest.warns(UserWarning, match=r"need_to_pad=\[4, 4, 4\]"):
        patchfeed.Loader(str(folder), (20, 20, 20), 2, augmentation={"patch_size": (16,) * 3},
                         as_numpy=True).close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nnU-Net's settings: no warning
        patchfeed.Loader(str(folder), (20, 20, 20), 2, need_to_pad=(4, 4, 4),
                         augmentation={"patch_size": (16,) * 3}, as_numpy=True).close()
        patchfeed.Loader(str(folder), (16, 16, 16), 2, augmentation={
            "patch_size": (16,) * 3, "p_rotation": 0, "p_scaling": 0}, as_numpy=True).close()
