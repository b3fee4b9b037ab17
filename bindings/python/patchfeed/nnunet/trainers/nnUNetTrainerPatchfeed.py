# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Found by nnU-Net through `nnUNet_extTrainer=$(patchfeed nnunet-path)`: nnU-Net imports every
module of that folder and takes the class named by `-tr`."""

from patchfeed.nnunet.trainer import nnUNetTrainerPatchfeed

__all__ = ["nnUNetTrainerPatchfeed"]
