# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""nnUNetTrainerPatchfeed against nnU-Net 2.8 itself, on a dataset nnU-Net planned and
preprocessed (nnunet_testlib): validation batches equal nnU-Net's (its nnUNetDataLoader crop and
validation transforms) bit for bit for the same boxes, deep-supervision targets included;
training batches have nnU-Net's structure and foreground statistics; and nnU-Net trains and
validates with the trainer, leaving the preprocessed folder as it was."""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np
import pytest
from nnunet_testlib import (DATASET, REGIONS_DATASET, env, listing,  # noqa: F401 (fixtures)
                            make_trainer, nnunet_root, nnunet_sample)

nnunetv2 = pytest.importorskip("nnunetv2")
torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dataset,configuration", [(DATASET, "3d_fullres"), (DATASET, "2d"),
                                                   (REGIONS_DATASET, "3d_fullres")])
def test_validation_batches_equal_nnunets_bit_for_bit(env, dataset, configuration):
    from patchfeed import Loader
    from patchfeed.nnunet.settings import loader_options

    trainer = make_trainer(env, configuration, dataset)
    _, val_keys = trainer.do_split()
    options = loader_options(trainer, val_keys, train=False)
    lm = trainer.label_manager
    assert lm.has_regions == (dataset == REGIONS_DATASET)
    transforms = trainer.get_validation_transforms(
        trainer._get_deep_supervision_scales(), is_cascaded=False,
        foreground_labels=lm.foreground_labels,
        regions=lm.foreground_regions if lm.has_regions else None, ignore_label=lm.ignore_label)
    with Loader(**options) as loader:
        ids = loader.dataset.case_ids
        patch = options["patch_size"]
        for _, batch in zip(range(3), loader):
            assert isinstance(batch["seg"], list) and len(batch["seg"]) > 1
            for j, s in enumerate(loader.last_batch.samples):
                image, targets = nnunet_sample(trainer, ids[s.case_index], s.box_start, patch,
                                               transforms)
                assert torch.equal(batch["image"][j], image), (configuration, s)
                assert len(batch["seg"]) == len(targets)
                for ours, theirs in zip(batch["seg"], targets):
                    assert ours[j].dtype == theirs.dtype and torch.equal(ours[j], theirs), s


def test_ring_gives_every_thread_a_sample(env, monkeypatch):
    """nnU-Net's batch of 2 in a ring of 3 would keep at most 6 threads on the steps that run per
    sample; the trainer's loaders get ceil(threads / batch) slots (at least 3)."""
    from patchfeed.nnunet.settings import loader_options

    trainer = make_trainer(env, "3d_fullres")
    _, val_keys = trainer.do_split()
    batch = trainer.batch_size
    for n_proc in (2, 16, 33):
        monkeypatch.setenv("nnUNet_n_proc_DA", str(n_proc))
        options = loader_options(trainer, val_keys, train=True)
        assert options["num_threads"] == n_proc
        assert options["ring_size"] >= 3
        assert options["ring_size"] * batch >= n_proc
        assert (options["ring_size"] - 1) * batch < n_proc or options["ring_size"] == 3


def foreground_fractions(batches, n):
    """Per batch position: the foreground fraction of each sample's full-resolution target."""
    per_position = None
    for _ in range(n):
        target = next(batches)["target"]
        seg = target[0] if isinstance(target, list) else target
        fg = (seg > 0).flatten(1).float().mean(1).numpy()
        per_position = [[] for _ in fg] if per_position is None else per_position
        for j, f in enumerate(fg):
            per_position[j].append(f)
    return [np.array(p) for p in per_position]


@pytest.mark.parametrize("configuration", ["3d_fullres", "2d"])
def test_training_batches_match_nnunets_structure_and_statistics(env, configuration):
    from nnunetv2.training.dataloading.data_loader import nnUNetDataLoader
    from nnunetv2.training.dataloading.nnunet_dataset import nnUNetDatasetBlosc2

    trainer = make_trainer(env, configuration)
    ours, _ = trainer.get_dataloaders()
    # nnU-Net's own training loader, built as its get_dataloaders builds it (single-threaded).
    rotation, dummy_2d, initial, mirror = \
        trainer.configure_rotation_dummyDA_mirroring_and_inital_patch_size()
    scales = trainer._get_deep_supervision_scales()
    transforms = trainer.get_training_transforms(
        trainer.configuration_manager.patch_size, rotation, scales, mirror, dummy_2d,
        use_mask_for_norm=trainer.configuration_manager.use_mask_for_norm, is_cascaded=False,
        foreground_labels=trainer.label_manager.foreground_labels, regions=None,
        ignore_label=trainer.label_manager.ignore_label)
    tr_keys, _ = trainer.do_split()
    theirs_dl = nnUNetDataLoader(
        nnUNetDatasetBlosc2(trainer.preprocessed_dataset_folder, tr_keys), trainer.batch_size,
        initial, trainer.configuration_manager.patch_size, trainer.label_manager,
        oversample_foreground_percent=trainer.oversample_foreground_percent,
        transforms=transforms)
    theirs = iter(theirs_dl.generate_train_batch, None)

    a, b = next(ours), next(theirs)
    assert set(a) == set(b) == {"data", "target", "keys"}
    assert a["data"].shape == b["data"].shape and a["data"].dtype == b["data"].dtype
    assert len(a["target"]) == len(b["target"])
    for x, y in zip(a["target"], b["target"]):
        assert x.shape == y.shape and x.dtype == y.dtype
    assert len(a["keys"]) == len(b["keys"]) and set(a["keys"]) <= set(tr_keys)

    # Foreground per batch position (nnU-Net forces the last round(B * 0.33) samples), over
    # at least 500 samples of each loader.
    n = math.ceil(500 / trainer.batch_size)
    ours_fg = foreground_fractions(ours, n)
    theirs_fg = foreground_fractions(theirs, n)
    for j, (x, y) in enumerate(zip(ours_fg, theirs_fg)):
        se = math.sqrt(x.var() / len(x) + y.var() / len(y))
        assert abs(x.mean() - y.mean()) <= 4 * se + 0.005, (configuration, j, x.mean(), y.mean())
    ours.close()


def test_nnunet_trains_and_validates_with_the_trainer(env):
    folder = env / "preprocessed" / DATASET
    before = listing(folder)
    trainer = make_trainer(env, "3d_fullres")
    trainer.num_epochs = 1
    trainer.num_iterations_per_epoch = 3
    trainer.num_val_iterations_per_epoch = 2
    trainer.run_training()
    trainer.perform_actual_validation()
    assert listing(folder) == before
    out = pathlib.Path(trainer.output_folder)  # below tmp_path: nnUNet_results is patched
    assert (out / "checkpoint_final.pth").is_file()
    summary = json.loads((out / "validation" / "summary.json").read_text())
    assert "foreground_mean" in summary


def test_nnunet_finds_the_trainer_in_nnunet_path():
    """What nnUNetv2_train does with nnUNet_extTrainer (its search through nnU-Net's own
    trainers first needs a torchvision matching the torch, which this machine lacks: see
    docs/nnunet.md)."""
    from nnunetv2.utilities.find_class_by_name import recursive_find_python_class
    from patchfeed.nnunet import nnUNetTrainerPatchfeed, trainer_path

    found = recursive_find_python_class(trainer_path(), "nnUNetTrainerPatchfeed", None,
                                        base_folder=trainer_path(),
                                        cleanup_imports_from_base_folder=True)
    assert found is not None and found.__name__ == nnUNetTrainerPatchfeed.__name__
