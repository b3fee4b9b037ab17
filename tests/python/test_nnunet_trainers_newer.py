# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""nnU-Net's newer trainers and nnUNetv2_train's options, with batches from patchfeed, run
through nnunetv2.run.run_training on the CPU for one epoch (one training and one validation
batch) on the tiny dataset (nnunet_testlib): -pretrained_weights, --c after an interrupted run,
--val and --val_best, the ResEnc M preset (nnU-Net's own planner), Primus-M and its batch-8
variant.

The networks are the planners' with fewer features per stage (nnunet_testlib.narrow_plans);
patch and batch size, strides and blocks are the planners'. Trainers are looked up by name in
this module (nnU-Net's own search over nnUNet_extTrainer is test_nnunet_ext_trainer's)."""

from __future__ import annotations

import pathlib

import pytest
from nnunet_testlib import (DATASET, RESENC_M_PLANS, narrow_plans, resenc_m_dataset,
                            torchvision_breaks_nnunets_trainers)

nnunetv2 = pytest.importorskip("nnunetv2")
torch = pytest.importorskip("torch")

from nnunetv2.run import run_training as rt  # noqa: E402
from patchfeed.nnunet import PatchfeedDataMixin, nnUNetTrainerPatchfeed  # noqa: E402
from patchfeed.nnunet.trainer import NnUNetBatches  # noqa: E402

CPU = torch.device("cpu")
CONFIGURATION = "3d_fullres"
BUILT: list[tuple[str, NnUNetBatches]] = []  # (trainer class, training batches) per get_dataloaders
LOADED: list[str] = []  # the checkpoints load_checkpoint was given, in order


class Interrupted(Exception):
    """Stands for a training killed between two epochs."""


def few_iterations(trainer) -> None:
    # One batch of each per epoch: on the CPU a training step's backward pass (3-D convolutions
    # at the full 56^3 patch) takes seconds even at these widths; the loaders are not the cost.
    trainer.num_epochs = 1
    trainer.num_iterations_per_epoch = 1
    trainer.num_val_iterations_per_epoch = 1


class RecordsLoaders:
    """Notes each get_dataloaders and the checkpoints loaded, for the assertions."""

    def get_dataloaders(self):
        train, val = super().get_dataloaders()
        BUILT.append((type(self).__name__, train))
        return train, val

    def load_checkpoint(self, filename_or_checkpoint):
        LOADED.append(str(filename_or_checkpoint))
        super().load_checkpoint(filename_or_checkpoint)


class PatchfeedFewIterations(RecordsLoaders, nnUNetTrainerPatchfeed):
    # nnU-Net's trainers keep their __init__ arguments by name (for checkpoints): spelled out.
    def __init__(self, plans: dict, configuration: str, fold: int, dataset_json: dict,
                 device: torch.device = CPU):
        super().__init__(plans, configuration, fold, dataset_json, device)
        few_iterations(self)


class PatchfeedPretrained(PatchfeedFewIterations):
    pass


class PatchfeedTwoEpochs(PatchfeedFewIterations):
    """Saves checkpoint_latest after every epoch and, while `interrupt_at` is set, stops at the
    start of that epoch as a killed process would (its loaders gone with it)."""

    interrupt_at: int | None = None

    def __init__(self, plans: dict, configuration: str, fold: int, dataset_json: dict,
                 device: torch.device = CPU):
        super().__init__(plans, configuration, fold, dataset_json, device)
        self.num_epochs = 2
        self.save_every = 1

    def on_epoch_start(self):
        if self.current_epoch == type(self).interrupt_at:
            self.dataloader_train.close()
            self.dataloader_val.close()
            raise Interrupted(self.current_epoch)
        super().on_epoch_start()


TRAINERS = {c.__name__: c for c in (PatchfeedFewIterations, PatchfeedPretrained,
                                    PatchfeedTwoEpochs)}


def primus_trainers():
    """nnU-Net's Primus trainers; they import timm, which imports torchvision."""
    why = torchvision_breaks_nnunets_trainers()
    if why:
        pytest.skip(f"nnU-Net's Primus trainers cannot be imported here (timm -> torchvision: "
                    f"{why}); they need a torchvision built for the installed torch "
                    f"(docs/nnunet.md)")
    from nnunetv2.training.nnUNetTrainer.primus import primus_trainers

    return primus_trainers


def with_patchfeed(base: type) -> type:
    """`class X(PatchfeedDataMixin, base)` with few iterations, registered by name."""
    def __init__(self, plans: dict, configuration: str, fold: int, dataset_json: dict,
                 device: torch.device = CPU):
        base.__init__(self, plans, configuration, fold, dataset_json, device)
        few_iterations(self)

    cls = type(f"Patchfeed_{base.__name__}", (RecordsLoaders, PatchfeedDataMixin, base),
               {"__init__": __init__})
    TRAINERS[cls.__name__] = cls
    return cls


@pytest.fixture(scope="module")
def nnunet(tmp_path_factory):
    """nnU-Net's folders (results in a temporary folder), the narrow plans' identifiers, and
    run_training's trainer lookup pointed at this module's classes."""
    from nnunetv2.training.nnUNetTrainer import nnUNetTrainer as trainer_module

    root = resenc_m_dataset()
    results = tmp_path_factory.mktemp("nnunet_results")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("nnUNet_raw", str(root / "raw"))
        mp.setenv("nnUNet_preprocessed", str(root / "preprocessed"))
        mp.setenv("nnUNet_results", str(results))
        mp.setenv("PATCHFEED_CACHE_DIR", str(results / "patchfeed_cache"))
        mp.setenv("nnUNet_n_proc_DA", "2")
        # nnUNet_def_n_proc=2, as if set before nnU-Net was imported: the final validation's
        # export and metrics pools start 2 processes, not 8, on this 2-core machine.
        mp.setattr(trainer_module, "default_num_processes", 2)
        mp.setattr(rt, "recursive_find_trainer_class_by_name", TRAINERS.__getitem__)
        yield {"default": narrow_plans(root), "resenc_m": narrow_plans(root, RESENC_M_PLANS)}


def run(nnunet, trainer: str, plans: str = "default", **kwargs) -> None:
    """nnUNetv2_train DATASET 3d_fullres 0 -tr trainer -p plans -device cpu [options]."""
    rt.run_training(DATASET, CONFIGURATION, 0, trainer, nnunet[plans], device=CPU, **kwargs)


def output_folder(nnunet, trainer: str, plans: str = "default") -> pathlib.Path:
    from nnunetv2.paths import nnUNet_results

    return (pathlib.Path(str(nnUNet_results)) / DATASET / f"{trainer}__{nnunet[plans]}__"
            f"{CONFIGURATION}" / "fold_0")


def train_only(nnunet, trainer: str, plans: str = "default", continue_training: bool = False,
               pretrained_weights: str | None = None):
    """run_training's steps without the final validation (run_training always ends with it)."""
    t = rt.get_trainer_from_args(DATASET, CONFIGURATION, 0, trainer, nnunet[plans],
                                 continue_training, device=CPU)
    rt.maybe_load_checkpoint(t, continue_training, False, pretrained_weights)
    t.run_training()
    return t


def assert_trained_with_patchfeed(trainer: str, folder: pathlib.Path) -> None:
    assert (folder / "checkpoint_final.pth").is_file()
    batches = [b for name, b in BUILT if name == trainer]
    assert batches and isinstance(batches[-1], NnUNetBatches)
    assert batches[-1].loader.closed  # on_train_end closed it


@pytest.fixture(scope="module")
def first_run(nnunet):
    """nnUNetv2_train ... -tr PatchfeedFewIterations: one epoch, then the final validation."""
    run(nnunet, "PatchfeedFewIterations")
    return output_folder(nnunet, "PatchfeedFewIterations")


def test_trains_and_validates_through_run_training(first_run):
    assert_trained_with_patchfeed("PatchfeedFewIterations", first_run)
    assert (first_run / "checkpoint_best.pth").is_file()
    assert (first_run / "validation" / "summary.json").is_file()


@pytest.mark.parametrize("best", [False, True], ids=["val", "val_best"])
def test_validation_only(nnunet, first_run, best):
    """--val (checkpoint_final) and --val_best (then checkpoint_best): the validation folder is
    written again from the checkpoint, no training and no loaders."""
    summary = first_run / "validation" / "summary.json"
    summary.unlink()
    built, loaded = len(BUILT), len(LOADED)
    run(nnunet, "PatchfeedFewIterations", only_run_validation=True, val_with_best=best)
    assert summary.is_file()
    assert len(BUILT) == built
    names = [pathlib.Path(p).name for p in LOADED[loaded:]]
    assert names == ["checkpoint_final.pth"] + (["checkpoint_best.pth"] if best else [])


def test_pretrained_weights(nnunet, first_run):
    """-pretrained_weights: nnU-Net's load_pretrained_weights copies every weight but the
    segmentation layers into the new network, which then trains on patchfeed batches."""
    checkpoint = first_run / "checkpoint_final.pth"
    t = rt.get_trainer_from_args(DATASET, CONFIGURATION, 0, "PatchfeedPretrained",
                                 nnunet["default"], False, device=CPU)
    rt.maybe_load_checkpoint(t, False, False, str(checkpoint))
    saved = torch.load(checkpoint, map_location=CPU, weights_only=False)["network_weights"]
    state = t.network.state_dict()
    copied = [k for k in state if ".seg_layers." not in k]
    assert copied and all(torch.equal(state[k], saved[k]) for k in copied)
    t.run_training()
    assert_trained_with_patchfeed("PatchfeedPretrained",
                                  output_folder(nnunet, "PatchfeedPretrained"))


def test_continue_after_an_interrupted_run(nnunet):
    """--c: a run stopped after epoch 0 (checkpoint_latest written) continues at epoch 1 with new
    patchfeed loaders and finishes."""
    name = "PatchfeedTwoEpochs"
    PatchfeedTwoEpochs.interrupt_at = 1
    with pytest.raises(Interrupted):
        train_only(nnunet, name)
    folder = output_folder(nnunet, name)
    assert (folder / "checkpoint_latest.pth").is_file()
    assert not (folder / "checkpoint_final.pth").exists()
    interrupted = [b for n, b in BUILT if n == name]
    assert len(interrupted) == 1 and interrupted[0].loader.closed

    latest = torch.load(folder / "checkpoint_latest.pth", map_location=CPU, weights_only=False)
    assert latest["current_epoch"] == 1

    PatchfeedTwoEpochs.interrupt_at = None
    t = train_only(nnunet, name, continue_training=True)
    assert pathlib.Path(LOADED[-1]).name == "checkpoint_latest.pth"
    assert t.current_epoch == 2
    losses = t.logger.get_value("train_losses", step=None)
    assert len(losses) == 2 and losses[0] == latest["logging"]["train_losses"][0]
    continued = [b for n, b in BUILT if n == name]
    assert len(continued) == 2 and continued[1] is not continued[0]
    assert_trained_with_patchfeed(name, folder)


def test_resenc_m_preset(nnunet):
    """nnU-Net's ResEnc M preset (nnUNetPlannerResEncM's plans for the tiny dataset): its
    ResidualEncoderUNet and batch size train on patchfeed batches."""
    t = train_only(nnunet, "PatchfeedFewIterations", plans="resenc_m")
    assert type(t.network).__name__ == "ResidualEncoderUNet"
    assert t.batch_size == t.configuration_manager.batch_size
    assert_trained_with_patchfeed("PatchfeedFewIterations",
                                  output_folder(nnunet, "PatchfeedFewIterations", "resenc_m"))


@pytest.mark.parametrize("name,batch", [("nnUNet_Primus_M_Trainer", None),
                                        ("nnUNet_Primus_M_Trainer_BS8", 8)])
def test_primus_m(nnunet, name, batch):
    """Primus-M (patch embedding 8^3: the tiny plans' 56^3 patch divides) and its batch-8
    variant: no deep supervision, so the target is one tensor."""
    primus = primus_trainers()
    cls = TRAINERS.get(f"Patchfeed_{name}") or with_patchfeed(getattr(primus, name))
    t = train_only(nnunet, cls.__name__)
    assert type(t.network).__name__ == "Primus"
    assert t._get_deep_supervision_scales() is None
    if batch is not None:
        assert t.batch_size == batch
    assert_trained_with_patchfeed(cls.__name__, output_folder(nnunet, cls.__name__))
