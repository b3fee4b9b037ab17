"""nnU-Net's default training augmentation, in C++.

The loader runs it on every sample when configured with augmentation; ``NnUNetAugmenter``
runs the same pipeline on one sample held in NumPy arrays::

    aug = patchfeed.augment.NnUNetAugmenter({"patch_size": (128, 128, 128)}, seed=0)
    out = aug(image, seg, index)   # image (C, *crop) float32, seg (1, *crop) int16
    out["image"], out["segmentation"]

The dict is the `augmentation` argument of `patchfeed.Loader` (`AugmentationOptions` lists the
keys; unnamed settings are nnU-Net's defaults). A sample's result depends only on (seed,
epoch, batch, index) and its input: `aug(image, seg, j, epoch=e, batch=b)` equals what the
loader makes of sample j of batch b in epoch e from the same crop. The GIL is released while
it runs; use one augmenter per thread.

For nnU-Net's 3d_cascade_fullres, `NnUNetAugmenter(..., cascade_foreground_labels=labels)` takes
a (2, *crop) segmentation whose second channel is the previous stage's; the output image then
has one more channel per foreground label (that segmentation as one-hot, randomly dilated,
eroded, opened or closed, and with a random small component removed, as nnU-Net does) and the
output segmentation only the first channel.

`crop_for(patch_size)` is the crop a sample must be drawn with so that its rotated and scaled
patch still lies in data (nnU-Net's initial patch size); `patchfeed.Loader` works it out itself
when `augmentation` has no "patch_size".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypedDict

from patchfeed._core.augment import NnUNetAugmenter
from patchfeed._core.augment import crop_for as _crop_for

__all__ = ["AugmentationOptions", "BinaryOperatorSettings", "IntensitySettings",
           "NnUNetAugmenter", "RemoveComponentSettings", "SpatialSettings", "crop_for",
           "sampler_crop"]


class SpatialSettings(TypedDict, total=False):
    """"spatial": batchgeneratorsv2's SpatialTransform (nnU-Net's values by default)."""

    p_rotation: float
    rotation: Sequence[float] | float  #: [low, high] radians, every axis (or a constant)
    p_rotation_per_axis: float
    p_scaling: float
    scaling: Sequence[float] | float  #: [low, high]
    p_synchronize_scaling: float  #: one scale for all axes with this probability
    p_elastic: float
    elastic_scale: Sequence[float] | float
    elastic_magnitude: Sequence[float] | float
    p_synchronize_elastic_scale: float
    seg_mode: str  #: "linear" (nnU-Net's) or "nearest" (its DASegOrd0 variants)
    seg_padding_value: int  #: labels outside the case (-1)


class IntensitySettings(TypedDict, total=False):
    """"noise", "blur", "brightness", "contrast", "low_resolution", "gamma_inverted",
    "gamma": one intensity transform each; a range is [low, high] or a constant. Which keys a
    transform takes: patchfeed/augment/augment_config.h (an unknown key is a ValueError)."""

    p_apply: float  #: the transform's probability (RandomTransform's apply_probability)
    p_per_channel: float
    synchronize_channels: bool
    sigma: Sequence[float] | float  #: noise, blur
    synchronize_axes: bool  #: blur, low_resolution
    multiplier: Sequence[float] | float  #: brightness
    factor: Sequence[float] | float  #: contrast
    preserve_range: bool  #: contrast
    bg_contrast: bool  #: brightness, contrast, gamma: draw as bgv2's BGContrast
    zoom: Sequence[float] | float  #: low_resolution
    ignore_axes: Sequence[int]  #: low_resolution
    gamma: Sequence[float] | float  #: gamma
    p_invert: float  #: gamma
    p_retain_stats: float  #: gamma


class BinaryOperatorSettings(TypedDict, total=False):
    """"binary_operator": the cascade's ApplyRandomBinaryOperatorTransform on the one-hot
    channels (nnU-Net: p_apply 0.4, strel_size [1, 8], p_per_label 0.5, all four operators)."""

    p_apply: float
    strel_size: Sequence[float] | float  #: ball (3-D) or disk (2-D) radius, drawn per label
    p_per_label: float
    operators: Sequence[str]  #: of "dilation", "erosion", "closing", "opening"


class RemoveComponentSettings(TypedDict, total=False):
    """"remove_component": the cascade's RemoveRandomConnectedComponentFromOneHotEncoding
    Transform (nnU-Net: p_apply 0.2, p_per_label 0.5, fill_with_other_class_p 0,
    max_coverage 0.15, bgv2's dont_do_if_covers_more_than_x_percent, a fraction)."""

    p_apply: float
    p_per_label: float
    fill_with_other_class_p: float
    max_coverage: float


class AugmentationOptions(TypedDict, total=False):
    """The `augmentation` argument of `patchfeed.Loader` and `NnUNetAugmenter`. Every key is
    optional; an absent one is nnU-Net's default (nnUNetTrainer.get_training_transforms)."""

    patch_size: Sequence[int]  #: the patch after augmentation (Loader: derived when absent)
    max_angle: float  #: rotations in (-max_angle, max_angle) radians per axis; default pi/6
    dummy_2d: bool  #: 3-D patches augmented slice-wise in 2-D (anisotropic data)
    image_array: str  #: the array augmented as the image ("image")
    seg_array: str | None  #: the segmentation ("seg"), None for image-only datasets
    p_rotation: float  #: probabilities of each transform (nnU-Net's 0.2, 0.2, 0.1, ...)
    p_scaling: float
    p_noise: float
    p_blur: float
    p_brightness: float
    p_contrast: float
    p_low_resolution: float
    p_gamma_inverted: float
    p_gamma: float
    mirror_axes: Sequence[int]  #: spatial axes mirrored with p 0.5 each (default all)
    mask_channels: Sequence[int]  #: channels zeroed outside the mask (use_mask_for_norm)
    remove_label: bool  #: segmentation -1 -> 0 at the end (nnU-Net: always)
    regions: Sequence[Sequence[int]]  #: one bool target channel per region of labels
    deep_supervision_scales: Sequence[Sequence[float]]  #: targets at these scales
    #: nnU-Net's cascade (3d_cascade_fullres): the previous stage's segmentation becomes one
    #: image channel per label given here (label_manager.foreground_labels), after the image's
    #: own; the Loader reads it from the dataset array named by previous_seg_array (a label
    #: map without a channel axis, uint8/uint16/int8/int16, -1 outside the case).
    cascade_foreground_labels: Sequence[int]
    previous_seg_array: str
    binary_operator: BinaryOperatorSettings  #: cascade only
    remove_component: RemoveComponentSettings  #: cascade only
    #: Every setting of one transform (the flat p_* keys are shorthands; give one or the
    #: other). patchfeed.nnunet fills these from a trainer's own pipeline.
    spatial: SpatialSettings
    noise: IntensitySettings
    blur: IntensitySettings
    brightness: IntensitySettings
    contrast: IntensitySettings
    low_resolution: IntensitySettings
    gamma_inverted: IntensitySettings
    gamma: IntensitySettings


def crop_for(patch_size: Sequence[int], max_angle: float = math.pi / 6,
             scale: Sequence[float] = (0.85, 1.25), dummy_2d: bool = False) -> tuple[int, ...]:
    """nnU-Net's initial patch size: the crop whose every rotation by up to `max_angle` radians
    (per axis, capped at 90 degrees) scaled down to `min(scale)` still covers `patch_size`.

    nnU-Net computes it with the scale range (0.85, 1.25) (not its transform's (0.7, 1.4)) and
    30 degree rotations for 3-D patches: `crop_for((128, 128, 128)) == (205, 205, 205)`. With
    `dummy_2d` the first axis stays at the patch size. The sampler draws this crop, and
    `need_to_pad = crop - patch` lets samples reach the case borders, as nnU-Net pads."""
    if not len(scale):
        raise ValueError("scale needs at least one value")
    return tuple(_crop_for([int(p) for p in patch_size], float(max_angle), float(min(scale)),
                           bool(dummy_2d)))


def sampler_crop(patch_size: Sequence[int], crop: Sequence[int], case_spatial_dims: int
                 ) -> tuple[list[int], list[int]]:
    """The sampler's crop and need_to_pad for patches of `patch_size` augmented from crops of
    `crop` (nnU-Net's final and initial patch sizes): need_to_pad = crop - patch, so samples
    reach the case borders as nnU-Net pads; 2-D patches of cases with 3 spatial axes (nnU-Net's
    2d configuration) are drawn as (1, Y, X) slabs. The one place this rule lives for
    patchfeed.Loader and patchfeed.nnunet."""
    patch, crop = [int(p) for p in patch_size], [int(c) for c in crop]
    if len(crop) != len(patch):
        raise ValueError(f"crop {crop} and patch {patch} need the same number of axes")
    need_to_pad = [c - p for c, p in zip(crop, patch)]
    if len(patch) == 2 and case_spatial_dims == 3:
        return [1, *crop], [0, *need_to_pad]
    return crop, need_to_pad
