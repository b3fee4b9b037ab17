"""nnU-Net's default training augmentation, in C++.

The loader runs it on every sample when configured with augmentation; ``NnUNetAugmenter``
runs the same pipeline on one sample held in NumPy arrays::

    aug = patchfeed.augment.NnUNetAugmenter({"patch_size": (128, 128, 128)}, seed=0)
    out = aug(image, seg, index)   # image (C, *crop) float32, seg (1, *crop) int16
    out["image"], out["segmentation"]

The dict is the `augmentation` argument of `patchfeed.Loader` (its docstring lists the keys;
unnamed settings are nnU-Net's defaults). A sample's result depends only on (seed, epoch,
batch, index) and its input: `aug(image, seg, j, epoch=e, batch=b)` equals what the loader
makes of sample j of batch b in epoch e from the same crop. The GIL is released while it
runs; use one augmenter per thread.
"""

from patchfeed._core.augment import NnUNetAugmenter

__all__ = ["NnUNetAugmenter"]
