from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

import numpy as np
import numpy.typing as npt

class NnUNetAugmenter:
    """nnU-Net's default training augmentation for one sample at a time (one per thread)."""

    def __init__(
        self,
        augmentation: AugmentationOptions | Mapping[str, Any],
        seed: int = 0,
        deep_supervision_scales: Sequence[Sequence[float]] | None = None,
        cascade_foreground_labels: Sequence[int] | None = None,
    ) -> None: ...
    def __call__(
        self,
        image: npt.NDArray[np.float32],
        seg: npt.NDArray[np.int16],
        index: int,
        epoch: int = 0,
        batch: int = 0,
    ) -> dict[str, Any]: ...

class SpatialSettings(TypedDict, total=False):
    p_rotation: float
    rotation: Sequence[float] | float
    p_rotation_per_axis: float
    p_scaling: float
    scaling: Sequence[float] | float
    p_synchronize_scaling: float
    p_elastic: float
    elastic_scale: Sequence[float] | float
    elastic_magnitude: Sequence[float] | float
    p_synchronize_elastic_scale: float
    seg_mode: str
    seg_padding_value: int

class IntensitySettings(TypedDict, total=False):
    p_apply: float
    p_per_channel: float
    synchronize_channels: bool
    sigma: Sequence[float] | float
    synchronize_axes: bool
    multiplier: Sequence[float] | float
    factor: Sequence[float] | float
    preserve_range: bool
    bg_contrast: bool
    zoom: Sequence[float] | float
    ignore_axes: Sequence[int]
    gamma: Sequence[float] | float
    p_invert: float
    p_retain_stats: float

class BinaryOperatorSettings(TypedDict, total=False):
    p_apply: float
    strel_size: Sequence[float] | float
    p_per_label: float
    operators: Sequence[str]

class RemoveComponentSettings(TypedDict, total=False):
    p_apply: float
    p_per_label: float
    fill_with_other_class_p: float
    max_coverage: float

class AugmentationOptions(TypedDict, total=False):
    patch_size: Sequence[int]
    max_angle: float
    dummy_2d: bool
    image_array: str
    seg_array: str | None
    p_rotation: float
    p_scaling: float
    p_noise: float
    p_blur: float
    p_brightness: float
    p_contrast: float
    p_low_resolution: float
    p_gamma_inverted: float
    p_gamma: float
    mirror_axes: Sequence[int]
    mask_channels: Sequence[int]
    remove_label: bool
    regions: Sequence[Sequence[int]]
    deep_supervision_scales: Sequence[Sequence[float]]
    cascade_foreground_labels: Sequence[int]
    previous_seg_array: str
    binary_operator: BinaryOperatorSettings
    remove_component: RemoveComponentSettings
    spatial: SpatialSettings
    noise: IntensitySettings
    blur: IntensitySettings
    brightness: IntensitySettings
    contrast: IntensitySettings
    low_resolution: IntensitySettings
    gamma_inverted: IntensitySettings
    gamma: IntensitySettings

def crop_for(
    patch_size: Sequence[int],
    max_angle: float = ...,
    scale: Sequence[float] = (0.85, 1.25),
    dummy_2d: bool = False,
) -> tuple[int, ...]:
    """nnU-Net's initial patch size for `patch_size` (the crop the sampler draws)."""

__all__ = ["AugmentationOptions", "NnUNetAugmenter", "crop_for"]

def sampler_crop(
    patch_size: Sequence[int], crop: Sequence[int], case_spatial_dims: int
) -> tuple[list[int], list[int]]: ...
