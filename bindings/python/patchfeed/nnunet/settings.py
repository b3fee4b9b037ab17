# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""nnU-Net's settings, read from a trainer, as patchfeed.Loader options.

Everything nnU-Net's `get_dataloaders` decides is taken from the trainer itself (so a trainer
variant that changes a setting changes it here too): the fold split, batch size and
oversampling, the initial (enlarged) patch size and need_to_pad, the foreground classes, and the
augmentation, translated from the trainer's own transforms (pipeline.py).
nnU-Net's `2d` configuration samples a slice of a 3-D case: the loader draws a (1, Y, X) crop and
augments and returns it as 2-D (patchfeed.augment.sampler_crop).
nnU-Net's cascade (3d_cascade_fullres) reads each case's previous-stage segmentation from the
trainer's folder_with_segs_from_previous_stage, as nnU-Net's own data loader does.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from patchfeed.augment import sampler_crop
from patchfeed.loader import Dataset
from patchfeed.nnunet.pipeline import augmentation_for
from patchfeed.nnunet.ranks import memory_budget_per_rank, threads_per_rank


#: The dataset array holding the cascade's previous-stage segmentation.
PREVIOUS_SEG_ARRAY = "seg_prev"


def case_dataset(folder: str, case_ids: Sequence[str],
                 previous_stage_folder: str | None = None) -> Dataset:
    """The cases `case_ids` of an nnU-Net preprocessed configuration folder; with
    `previous_stage_folder` (the cascade) each case also has its previous stage's segmentation
    `<previous_stage_folder>/<case>.b2nd` as the array "seg_prev"."""
    from patchfeed import _core

    names = ["image", "seg"]
    cases = [(cid, [os.path.join(folder, f"{cid}.b2nd"), os.path.join(folder, f"{cid}_seg.b2nd")])
             for cid in case_ids]
    if previous_stage_folder is not None:
        names.append(PREVIOUS_SEG_ARRAY)
        missing = []
        for cid, paths in cases:
            path = os.path.join(previous_stage_folder, f"{cid}.b2nd")
            paths.append(path)
            if not os.path.isfile(path):
                missing.append(path)
        if missing:
            raise FileNotFoundError(
                f"nnU-Net's cascade needs the previous stage's segmentation of every case, and "
                f"{len(missing)} of {len(cases)} are missing, e.g. {missing[0]}. Train every "
                f"fold of the previous stage (3d_lowres) first: each fold's final validation "
                f"predicts its cases into {previous_stage_folder} (nnUNetv2_train ... --val "
                f"redoes it), as nnU-Net's own training of this configuration needs")
    return Dataset(_core.Dataset.from_list(names, cases), nnunet_folder=folder)


def _foreground_keys(trainer: Any) -> tuple[list[list[int]], int]:
    """The class keys nnU-Net's preprocessing wrote into class_locations, in its order, and the
    index of the annotated-classes key (ignore label), or -1."""
    lm = trainer.label_manager
    keys = lm.foreground_regions if lm.has_regions else lm.foreground_labels
    keys = [list(k) if isinstance(k, (tuple, list)) else [int(k)] for k in keys]
    annotated = -1
    if lm.has_ignore_label:
        keys.append([-1, *lm.all_labels])  # nnU-Net's annotated_classes_key
        annotated = len(keys) - 1
    return keys, annotated


def loader_options(trainer: Any, case_ids: Sequence[str], train: bool) -> dict[str, Any]:
    """patchfeed.Loader keyword arguments for the trainer's training or validation data."""
    final = [int(p) for p in trainer.configuration_manager.patch_size]
    _, _, initial, _ = trainer.configure_rotation_dummyDA_mirroring_and_inital_patch_size()
    # nnU-Net's cases have 3 spatial axes, also for its 2d configuration.
    crop, need_to_pad = sampler_crop(final, initial if train else final, case_spatial_dims=3)
    keys, annotated = _foreground_keys(trainer)
    augmentation = augmentation_for(trainer, train)
    previous = trainer.folder_with_segs_from_previous_stage if trainer.is_cascaded else None
    if previous is not None:
        augmentation["previous_seg_array"] = PREVIOUS_SEG_ARRAY
    threads = threads_per_rank()  # nnUNet_n_proc_DA, else this rank's share of the cores
    batch_size = int(trainer.batch_size)
    return dict(
        dataset=case_dataset(trainer.preprocessed_dataset_folder, case_ids, previous),
        patch_size=crop,
        batch_size=batch_size,
        need_to_pad=need_to_pad,
        oversample_foreground=float(trainer.oversample_foreground_percent),
        probabilistic_oversampling=bool(trainer.probabilistic_oversampling),
        foreground_keys=keys,
        annotated_key=annotated,
        # nnU-Net draws with NumPy's global generator: seeding NumPy seeds these loaders too.
        seed=int(np.random.randint(0, 2**31 - 1)),
        rank=0,
        world_size=1,  # nnU-Net already gives each DDP rank its own batch size and oversampling
        num_threads=threads,
        ring_size=ring_size_for(threads, batch_size),
        memory_budget=memory_budget_per_rank(),
        augmentation=augmentation,
    )


def ring_size_for(threads: int, batch_size: int) -> int:
    """Ring slots enough for every thread to own a sample of a batch in flight.

    A sample's steps after the resampling (intensity transforms, mirroring, targets) run on one
    thread, so a loader keeps at most ring_size x batch_size threads on them; nnU-Net's batch 2
    with the default ring of 3 stopped at 6 (docs/python.md). `threads` 0 means every core.
    """
    if threads <= 0:
        threads = len(os.sched_getaffinity(0))
    return max(3, -(-threads // batch_size))
