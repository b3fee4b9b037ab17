# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""nnU-Net drop-in: train with nnU-Net's own tooling, batches from patchfeed.

One line in the nnU-Net workflow switches a training to patchfeed::

    nnUNet_extTrainer=$(patchfeed nnunet-path) nnUNetv2_train 4 3d_fullres 0 -tr nnUNetTrainerPatchfeed

`nnUNetTrainerPatchfeed` is nnU-Net's `nnUNetTrainer` with one change: `get_dataloaders` builds
patchfeed loaders from the trainer's own plans, configuration, fold split, label manager and
augmentation settings, and hands nnU-Net its usual batches (`{"data", "target", "keys"}`,
deep-supervision targets included) as zero-copy tensors. `PatchfeedDataMixin` gives any trainer
variant the same data path: `class MyTrainer(PatchfeedDataMixin, nnUNetTrainer_250epochs)`.

nnunetv2 is imported only when one of these names is used; patchfeed works without it.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["PatchfeedDataMixin", "nnUNetTrainerPatchfeed", "trainer_path"]


def trainer_path() -> str:
    """The folder to put in `nnUNet_extTrainer`: it holds a module defining
    nnUNetTrainerPatchfeed, which nnU-Net 2.8 finds by name there."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "trainers")


def __getattr__(name: str) -> Any:
    if name in ("PatchfeedDataMixin", "nnUNetTrainerPatchfeed"):
        from patchfeed.nnunet import trainer

        return getattr(trainer, name)
    raise AttributeError(f"module 'patchfeed.nnunet' has no attribute {name!r}")
