from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

class NnUNetAugmenter:
    """nnU-Net's default training augmentation for one sample at a time (one per thread)."""

    def __init__(
        self,
        augmentation: Mapping[str, Any],
        seed: int = 0,
        deep_supervision_scales: Sequence[Sequence[float]] | None = None,
    ) -> None: ...
    def __call__(
        self,
        image: npt.NDArray[np.float32],
        seg: npt.NDArray[np.int16],
        index: int,
        epoch: int = 0,
        batch: int = 0,
    ) -> dict[str, Any]: ...

__all__ = ["NnUNetAugmenter"]
