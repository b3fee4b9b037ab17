# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""The per-transform settings of the `augmentation` dict ("spatial", "noise", ... dicts, as
patchfeed.nnunet translates a trainer's pipeline into): each reaches the C++ transform (its
effect shows in the output), and bad or ambiguous settings are errors naming them."""

from __future__ import annotations

import numpy as np
import patchfeed.augment
import pytest

PATCH = (16, 16, 16)
# Everything off: what a test turns on is all that runs.
OFF = {"patch_size": PATCH, "p_rotation": 0.0, "p_scaling": 0.0, "mirror_axes": [],
       **{f"p_{t}": 0.0 for t in ("noise", "blur", "brightness", "contrast", "low_resolution",
                                  "gamma_inverted", "gamma")}}


def sample():
    rng = np.random.default_rng(3)
    image = rng.normal(0, 1, (1, *PATCH)).astype(np.float32)
    seg = (rng.random((1, *PATCH)) < 0.3).astype(np.int16)
    return image, seg


def run(augmentation: dict, index: int = 0):
    image, seg = sample()
    out = patchfeed.augment.NnUNetAugmenter(augmentation, seed=5)(image, seg, index)
    return image, seg, out


def without(*keys):
    return {k: v for k, v in OFF.items() if k not in keys}


def test_nested_settings_reach_the_transforms():
    image, seg, out = run(OFF)
    np.testing.assert_array_equal(out["image"], image)  # all off: identity

    # Noise always on with a constant sigma of 0.5: the difference has that deviation.
    _, _, out = run({**without("p_noise"), "noise": {"p_apply": 1.0, "sigma": [0.5, 0.5]}})
    assert abs(float(np.std(out["image"] - image)) - 0.5) < 0.03
    _, _, out = run({**without("p_noise"), "noise": {"p_apply": 1.0, "sigma": 0.1}})
    assert abs(float(np.std(out["image"] - image)) - 0.1) < 0.01

    # Brightness with a constant factor of 2, drawn plainly (not BGContrast).
    _, _, out = run({**without("p_brightness"), "brightness": {
        "p_apply": 1.0, "multiplier": [2.0, 2.0], "bg_contrast": False}})
    np.testing.assert_allclose(out["image"], 2 * image, rtol=1e-6)
    # p_per_channel 0: the transform runs, no channel is picked.
    _, _, out = run({**without("p_brightness"), "brightness": {
        "p_apply": 1.0, "multiplier": [2.0, 2.0], "p_per_channel": 0.0}})
    np.testing.assert_array_equal(out["image"], image)

    # Nearest vs linear resampling of the labels under the same rotations.
    rotate = {**without("p_rotation"), "spatial": {"p_rotation": 1.0, "rotation": [0.4, 0.4]}}
    _, _, linear = run(rotate)
    _, _, nearest = run({**rotate, "spatial": {**rotate["spatial"], "seg_mode": "nearest"}})
    assert not np.array_equal(linear["segmentation"], nearest["segmentation"])
    np.testing.assert_array_equal(linear["image"], nearest["image"])


def test_bad_nested_settings_are_errors_naming_them():
    with pytest.raises(ValueError, match="unknown setting 'sigmas' of augmentation 'noise'"):
        run({**OFF, "noise": {"sigmas": [0, 1]}})
    with pytest.raises(ValueError, match="'p_noise' and 'noise\\[\"p_apply\"\\]' set the same"):
        run({**OFF, "noise": {"p_apply": 1.0}})
    with pytest.raises(ValueError, match="'max_angle' and 'spatial\\[\"rotation\"\\]'"):
        run({**OFF, "max_angle": 0.1, "spatial": {"rotation": [0, 1]}})
    with pytest.raises(TypeError, match="'blur' must be a dict"):
        run({**OFF, "blur": 0.5})
    with pytest.raises(ValueError, match="'spatial.seg_mode' is 'linear' or 'nearest'"):
        run({**OFF, "spatial": {"seg_mode": "cubic"}})
    with pytest.raises(ValueError, match="'noise.sigma' needs \\[low, high\\]"):
        run({**without("p_noise"), "noise": {"sigma": [0, 1, 2]}})
    with pytest.raises(ValueError, match="gamma.p_invert = 2.0 is not a probability"):
        run({**without("p_gamma"), "gamma": {"p_invert": 2.0}})
    with pytest.raises(ValueError, match="the low_resolution.zoom range must be positive"):
        run({**without("p_low_resolution"), "low_resolution": {"zoom": [0, 1]}})
    with pytest.raises(ValueError, match="the contrast.factor range .* must be finite and ordered"):
        run({**without("p_contrast"), "contrast": {"factor": [2, 1]}})
    with pytest.raises(ValueError, match="'low_resolution.ignore_axes': axis 3 is not a patch"):
        run({**without("p_low_resolution"), "low_resolution": {"ignore_axes": [3]}})


def test_the_typed_keys_are_the_ones_cpp_reads():
    """Every key of SpatialSettings is a "spatial" setting; every key of IntensitySettings is a
    setting of at least one intensity transform, and each transform's known keys (listed by the
    error for an unknown one) are typed there."""
    from patchfeed.augment import IntensitySettings, SpatialSettings

    spatial = {"rotation": [0, 0.1], "scaling": [0.9, 1.1], "elastic_scale": [0, 0.1],
               "elastic_magnitude": [0, 0.1], "seg_mode": "linear", "seg_padding_value": -1}
    for key in SpatialSettings.__annotations__:
        run({**without("p_rotation", "p_scaling"), "spatial": {key: spatial.get(key, 0.5)}})
    known = set()
    for transform in ("noise", "blur", "brightness", "contrast", "low_resolution", "gamma"):
        with pytest.raises(ValueError, match="known: ") as caught:
            run({**OFF, transform: {"no such key": 0}})
        known |= set(str(caught.value).split("known: ")[1].rstrip(")").split(", "))
    assert known == set(IntensitySettings.__annotations__)


def test_sampler_crop_is_nnunets_crop_padding_and_2d_slab():
    from patchfeed.augment import sampler_crop

    assert sampler_crop((64, 64, 64), (96, 90, 80), 3) == ([96, 90, 80], [32, 26, 16])
    assert sampler_crop((56, 48), (80, 70), 3) == ([1, 80, 70], [0, 24, 22])  # nnU-Net's 2d
    assert sampler_crop((56, 48), (80, 70), 2) == ([80, 70], [24, 22])  # 2-D cases
    with pytest.raises(ValueError, match="same number of axes"):
        sampler_crop((56, 48), (1, 80, 70), 3)
