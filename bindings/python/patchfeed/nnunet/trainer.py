# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""nnUNetTrainerPatchfeed and PatchfeedDataMixin (see patchfeed.nnunet). Imports nnunetv2."""

from __future__ import annotations

from typing import Any

import numpy as np
from nnunetv2.training.dataloading.nnunet_dataset import infer_dataset_class, nnUNetDatasetBlosc2
from nnunetv2.training.nnUNetTrainer.nnUNetTrainer import nnUNetTrainer

from patchfeed.loader import Loader
from patchfeed.nnunet.settings import loader_options


class NnUNetBatches:
    """nnU-Net's batches from a patchfeed.Loader: `next()` gives {"data", "target", "keys"} as
    nnUNetDataLoader does, the tensors viewing the loader's ring slot (no copy)."""

    def __init__(self, loader: Loader) -> None:
        self.loader = loader
        self._batches = iter(loader)
        self._case_ids = loader.dataset.case_ids

    def __iter__(self) -> NnUNetBatches:
        return self

    def __next__(self) -> dict[str, Any]:
        batch = next(self._batches)
        keys = [self._case_ids[s.case_index] for s in self.loader.last_batch.samples]
        return {"data": batch["image"], "target": batch["seg"], "keys": np.array(keys)}

    def close(self) -> None:
        self.loader.close()


class PatchfeedDataMixin:
    """Put first in the bases of an nnU-Net trainer to take its batches from patchfeed:
    `class MyTrainer(PatchfeedDataMixin, nnUNetTrainer_250epochs)`. Only get_dataloaders (and
    closing the loaders at the end) changes; the network, loss, schedule, checkpoints and
    validation are the trainer's."""

    def get_dataloaders(self):
        if self.dataset_class is None:
            self.dataset_class = infer_dataset_class(self.preprocessed_dataset_folder)
        if not issubclass(self.dataset_class, nnUNetDatasetBlosc2):
            raise NotImplementedError(
                f"patchfeed reads nnU-Net's Blosc2 (.b2nd) preprocessed data; "
                f"{self.preprocessed_dataset_folder} holds {self.dataset_class.__name__} data. "
                f"Preprocess it again with nnU-Net 2.6 or newer.")
        tr_keys, val_keys = self.do_split()
        train = Loader(**loader_options(self, tr_keys, train=True))
        val = Loader(**loader_options(self, val_keys, train=False))
        return NnUNetBatches(train), NnUNetBatches(val)

    def on_train_end(self):
        super().on_train_end()
        for batches in (self.dataloader_train, self.dataloader_val):
            if isinstance(batches, NnUNetBatches):
                batches.close()


class nnUNetTrainerPatchfeed(PatchfeedDataMixin, nnUNetTrainer):
    """nnU-Net's default trainer with batches from patchfeed."""
