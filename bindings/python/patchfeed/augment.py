"""nnU-Net's default training augmentation, in C++.

The loader runs it on every sample when configured with augmentation; ``NnUNetAugmenter``
runs the same pipeline on one sample held in NumPy arrays::

    aug = patchfeed.augment.NnUNetAugmenter(patch_size=(128, 128, 128), max_angle=math.pi / 6,
                                            seed=0)
    out = aug(image, seg, index)   # image (C, *crop) float32, seg (1, *crop) int16
    out["image"], out["segmentation"]

A sample's result depends only on (seed, index) and its input. The GIL is released while it
runs; use one augmenter per thread.
"""

from patchfeed._core.augment import NnUNetAugmenter

__all__ = ["NnUNetAugmenter"]
