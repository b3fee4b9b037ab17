# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""nnUNetTrainerPatchfeed on nnU-Net's cascade (3d_cascade_fullres) against nnU-Net 2.8 itself.

The tiny dataset is too small for nnU-Net's planner to add a low-resolution stage, so the plans
get `3d_lowres` and `3d_cascade_fullres` as the planner writes them for a large dataset (the
low-resolution stage reuses 3d_fullres's settings: only the case shapes its predictions have
matter here). The previous stage's predictions are written where nnU-Net's trainer looks for
them (folder_with_segs_from_previous_stage) with nnU-Net's own blosc2 writer: the ground truth
with labels flipped, uint8 without a channel axis, as nnU-Net's resample_and_save writes them.
Then: validation batches equal nnU-Net's bit for bit for the same boxes, training batches have
the statistics of nnU-Net's own loader, and nnU-Net trains with the trainer."""

from __future__ import annotations

import copy
import json
import math
import pathlib

import numpy as np
import pytest
from nnunet_testlib import DATASET, env, nnunet_root, nnunet_sample  # noqa: F401 (fixtures)

nnunetv2 = pytest.importorskip("nnunetv2")
torch = pytest.importorskip("torch")
scipy_stats = pytest.importorskip("scipy.stats")

CASCADE = "3d_cascade_fullres"


def cascade_plans(root: pathlib.Path) -> dict:
    """nnU-Net's plans of the tiny dataset with a low-resolution stage and the cascade, keyed as
    ExperimentPlanner.plan_experiment writes them (next_stage / previous_stage / inherits_from)."""
    plans = json.loads((root / "preprocessed" / DATASET / "nnUNetPlans.json").read_text())
    plans["plans_name"] = "nnUNetPlansCascade"
    configurations = plans["configurations"]
    configurations["3d_lowres"] = copy.deepcopy(configurations["3d_fullres"])
    configurations["3d_lowres"]["next_stage"] = CASCADE
    configurations[CASCADE] = {"inherits_from": "3d_fullres", "previous_stage": "3d_lowres"}
    return plans


def cascade_trainer(root: pathlib.Path, trainer_class: type | None = None, widest: int = 0):
    """The cascade's trainer as nnUNetv2_train builds it (fold 0, CPU); `widest` > 0 narrows
    the network to at most that many features per stage (for training on the CPU)."""
    if trainer_class is None:
        from patchfeed.nnunet import nnUNetTrainerPatchfeed as trainer_class

    plans = cascade_plans(root)
    if widest:
        kwargs = plans["configurations"]["3d_fullres"]["architecture"]["arch_kwargs"]
        kwargs["features_per_stage"] = [min(w, widest) for w in kwargs["features_per_stage"]]
    plans["continue_training"] = False
    dataset_json = json.loads((root / "preprocessed" / DATASET / "dataset.json").read_text())
    trainer = trainer_class(plans, CASCADE, 0, dataset_json, device=torch.device("cpu"))
    trainer._set_batch_size_and_oversample()
    assert trainer.is_cascaded
    return trainer


def write_previous_stage(trainer) -> pathlib.Path:
    """A previous stage's predictions of every case: the ground truth with a slab's outer label
    turned inner and 3 % of the voxels random, written with nnU-Net's blosc2 writer."""
    from nnunetv2.training.dataloading.nnunet_dataset import (comp_blosc2_params,
                                                              nnUNetDatasetBlosc2)

    folder = pathlib.Path(trainer.folder_with_segs_from_previous_stage)
    folder.mkdir(parents=True, exist_ok=True)
    ids = nnUNetDatasetBlosc2.get_identifiers(trainer.preprocessed_dataset_folder)
    dataset = nnUNetDatasetBlosc2(trainer.preprocessed_dataset_folder, ids)
    rng = np.random.default_rng(7)
    for cid in ids:
        _, seg, _, _ = dataset.load_case(cid)
        prediction = np.clip(np.asarray(seg[0]), 0, None).astype(np.uint8)
        z = prediction.shape[0] // 2
        prediction[z - 2: z + 2][prediction[z - 2: z + 2] == 1] = 2
        noisy = rng.random(prediction.shape) < 0.03
        prediction[noisy] = rng.integers(0, 3, int(noisy.sum()), dtype=np.uint8)
        blocks, chunks = comp_blosc2_params((1, *prediction.shape),
                                            tuple(trainer.configuration_manager.patch_size), 1)
        nnUNetDatasetBlosc2.save_seg(prediction, str(folder / cid),
                                     chunks_seg=[int(c) for c in chunks[1:]],
                                     blocks_seg=[int(b) for b in blocks[1:]])
    return folder


def test_a_missing_previous_stage_is_a_clear_error(env):
    from patchfeed.nnunet.settings import loader_options

    trainer = cascade_trainer(env)
    _, val_keys = trainer.do_split()
    with pytest.raises(FileNotFoundError, match="Train every fold of the previous stage"):
        loader_options(trainer, val_keys, train=False)


def test_cascade_validation_batches_equal_nnunets_bit_for_bit(env):
    from patchfeed import Loader
    from patchfeed.nnunet.settings import loader_options

    trainer = cascade_trainer(env)
    write_previous_stage(trainer)
    _, val_keys = trainer.do_split()
    options = loader_options(trainer, val_keys, train=False)
    lm = trainer.label_manager
    transforms = trainer.get_validation_transforms(
        trainer._get_deep_supervision_scales(), is_cascaded=True,
        foreground_labels=lm.foreground_labels, regions=None, ignore_label=None)
    onehot_voxels = 0
    with Loader(**options) as loader:
        ids = loader.dataset.case_ids
        patch = options["patch_size"]
        for _, batch in zip(range(3), loader):
            assert batch["image"].shape[1] == 1 + len(lm.foreground_labels)
            for j, s in enumerate(loader.last_batch.samples):
                image, targets = nnunet_sample(trainer, ids[s.case_index], s.box_start, patch,
                                               transforms)
                assert torch.equal(batch["image"][j], image), s
                assert len(batch["seg"]) == len(targets)
                for ours, theirs in zip(batch["seg"], targets):
                    assert ours[j].dtype == theirs.dtype and torch.equal(ours[j], theirs), s
                onehot_voxels += int(image[1:].sum())
    assert onehot_voxels > 0


def _onehot_statistics(batches, n: int, labels: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Per sample and label over n batches: the mean of the label's one-hot channel, and the
    fraction of voxels where it disagrees with the target's label (what the random binary
    operators and the component removal change)."""
    means, disagreement = [], []
    for _ in range(n):
        batch = next(batches)
        data = batch["data"]
        target = batch["target"][0] if isinstance(batch["target"], list) else batch["target"]
        onehot = data[:, -len(labels):].flatten(2).float()
        truth = torch.stack([(target[:, 0] == label) for label in labels], 1).flatten(2).float()
        means.append(onehot.mean(2).numpy())
        disagreement.append((onehot - truth).abs().mean(2).numpy())
    return np.concatenate(means), np.concatenate(disagreement)


def test_cascade_training_batches_have_nnunets_statistics(env):
    """Per sample over 500+ samples, each one-hot channel's mean and its disagreement with the
    target's label (the previous stage's labels after the spatial transform, the random binary
    operators and the component removal) are distributed as those of nnU-Net's own loader
    (two-sample Kolmogorov-Smirnov, both seeded)."""
    from nnunetv2.training.dataloading.data_loader import nnUNetDataLoader
    from nnunetv2.training.dataloading.nnunet_dataset import nnUNetDatasetBlosc2

    np.random.seed(0)
    torch.manual_seed(0)
    trainer = cascade_trainer(env)
    write_previous_stage(trainer)
    labels = [int(x) for x in trainer.label_manager.foreground_labels]
    n = math.ceil(500 / trainer.batch_size)
    ours, _ = trainer.get_dataloaders()
    ours_stats = _onehot_statistics(ours, n, labels)
    ours.close()

    cm, lm = trainer.configuration_manager, trainer.label_manager
    rotation, dummy_2d, initial, mirror_axes = \
        trainer.configure_rotation_dummyDA_mirroring_and_inital_patch_size()
    transforms = trainer.get_training_transforms(
        cm.patch_size, rotation, trainer._get_deep_supervision_scales(), mirror_axes, dummy_2d,
        use_mask_for_norm=cm.use_mask_for_norm, is_cascaded=True,
        foreground_labels=lm.foreground_labels, regions=None, ignore_label=None)
    tr_keys, _ = trainer.do_split()
    theirs = nnUNetDataLoader(
        nnUNetDatasetBlosc2(trainer.preprocessed_dataset_folder, tr_keys,
                            trainer.folder_with_segs_from_previous_stage),
        trainer.batch_size, initial, cm.patch_size, lm,
        oversample_foreground_percent=trainer.oversample_foreground_percent,
        probabilistic_oversampling=trainer.probabilistic_oversampling, transforms=transforms)
    theirs_stats = _onehot_statistics(iter(theirs.generate_train_batch, None), n, labels)
    for name, ours_s, theirs_s in zip(("mean", "disagreement"), ours_stats, theirs_stats):
        for c in range(len(labels)):
            x, y = ours_s[:, c], theirs_s[:, c]
            assert x.max() > 0
            assert scipy_stats.ks_2samp(x, y).pvalue > 1e-4, (name, c, x.mean(), y.mean())


def test_nnunet_trains_the_cascade_with_the_trainer(env):
    trainer = cascade_trainer(env, widest=32)
    write_previous_stage(trainer)
    trainer.num_epochs = 1
    trainer.num_iterations_per_epoch = 3
    trainer.num_val_iterations_per_epoch = 2
    trainer.run_training()
    assert trainer.num_input_channels == 1 + len(trainer.label_manager.foreground_labels)
    assert (pathlib.Path(trainer.output_folder) / "checkpoint_final.pth").is_file()
