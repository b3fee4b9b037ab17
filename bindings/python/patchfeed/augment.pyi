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

def crop_for(
    patch_size: Sequence[int],
    max_angle: float = ...,
    scale: Sequence[float] = (0.85, 1.25),
    dummy_2d: bool = False,
) -> tuple[int, ...]:
    """nnU-Net's initial patch size for `patch_size` (the crop the sampler draws)."""

__all__ = ["AugmentationOptions", "NnUNetAugmenter", "crop_for"]
