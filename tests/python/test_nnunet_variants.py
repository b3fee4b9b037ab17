# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""nnU-Net's trainer variants through PatchfeedDataMixin: each one's own augmentation pipeline
is translated exactly or refused.

* The translation round-trips: the patchfeed augmentation made from a trainer's pipeline,
  rebuilt as batchgeneratorsv2 transforms by `render` below (written from bgv2's constructors,
  not from the translator), equals the trainer's pipeline transform by transform and parameter
  by parameter, for nnunetv2 2.8.1's variants, in 3d_fullres, 2d and dummy 2-D.
* nnUNetTrainerNoDA's training batches equal nnU-Net's bit for bit for the same boxes.
* Training batches of a user's subclass that changes one probability, of DASegOrd0 and of
  probabilistic oversampling have nnU-Net's statistics over 500 samples.
* What patchfeed does not implement (DA5's transforms, a user's own transform, another
  parameter value, another order) is refused by get_dataloaders, naming trainer, transform and
  parameter, before any loader starts.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from nnunet_testlib import env, make_trainer, nnunet_root, nnunet_sample  # noqa: F401 (fixtures)

nnunetv2 = pytest.importorskip("nnunetv2")
torch = pytest.importorskip("torch")

from batchgeneratorsv2.transforms.intensity.brightness import (  # noqa: E402
    MultiplicativeBrightnessTransform,
)
from batchgeneratorsv2.transforms.intensity.contrast import BGContrast, ContrastTransform  # noqa: E402
from batchgeneratorsv2.transforms.intensity.gamma import GammaTransform  # noqa: E402
from batchgeneratorsv2.transforms.intensity.gaussian_noise import GaussianNoiseTransform  # noqa: E402
from batchgeneratorsv2.transforms.noise.gaussian_blur import GaussianBlurTransform  # noqa: E402
from batchgeneratorsv2.transforms.spatial.low_resolution import (  # noqa: E402
    SimulateLowResolutionTransform,
)
from batchgeneratorsv2.transforms.spatial.mirroring import MirrorTransform  # noqa: E402
from batchgeneratorsv2.transforms.spatial.spatial import SpatialTransform  # noqa: E402
from batchgeneratorsv2.transforms.nnunet.random_binary_operator import (  # noqa: E402
    ApplyRandomBinaryOperatorTransform,
    binary_closing_torch,
    binary_dilation_torch,
    binary_erosion_torch,
    binary_opening_torch,
)
from batchgeneratorsv2.transforms.nnunet.remove_connected_components import (  # noqa: E402
    RemoveRandomConnectedComponentFromOneHotEncodingTransform,
)
from batchgeneratorsv2.transforms.nnunet.seg_to_onehot import (  # noqa: E402
    MoveSegAsOneHotToDataTransform,
)
from batchgeneratorsv2.transforms.utils.compose import ComposeTransforms  # noqa: E402
from batchgeneratorsv2.transforms.utils.deep_supervision_downsampling import (  # noqa: E402
    DownsampleSegForDSTransform,
)
from batchgeneratorsv2.transforms.utils.nnunet_masking import MaskImageTransform  # noqa: E402
from batchgeneratorsv2.transforms.utils.pseudo2d import (  # noqa: E402
    Convert2DTo3DTransform,
    Convert3DTo2DTransform,
)
from batchgeneratorsv2.transforms.utils.random import RandomTransform  # noqa: E402
from batchgeneratorsv2.transforms.utils.remove_label import RemoveLabelTransform  # noqa: E402
from batchgeneratorsv2.transforms.utils.seg_to_regions import (  # noqa: E402
    ConvertSegmentationToRegionsTransform,
)
from nnunetv2.training.nnUNetTrainer.nnUNetTrainer import nnUNetTrainer  # noqa: E402
from nnunetv2.training.nnUNetTrainer.variants.data_augmentation import (  # noqa: E402
    nnUNetTrainerDA5,
    nnUNetTrainerNoDA,
)
from nnunetv2.training.nnUNetTrainer.variants.network_architecture.nnUNetTrainerNoDeepSupervision import (  # noqa: E402,E501
    nnUNetTrainerNoDeepSupervision,
)
from nnunetv2.training.nnUNetTrainer.variants.data_augmentation import (  # noqa: E402
    nnUNetTrainerDAOrd0,
)
from nnunetv2.training.nnUNetTrainer.variants.sampling import (  # noqa: E402
    nnUNetTrainer_probabilisticOversampling,
)
from patchfeed.augment import NnUNetAugmenter  # noqa: E402
from patchfeed.nnunet import PatchfeedDataMixin  # noqa: E402
from scipy.stats import ks_2samp  # noqa: E402
from patchfeed.nnunet.pipeline import UnsupportedAugmentation, augmentation_for  # noqa: E402


class ForcedDummy2D(nnUNetTrainer):
    """nnU-Net's dummy 2-D augmentation (its choice for anisotropic patches) on the tiny data."""

    def configure_rotation_dummyDA_mirroring_and_inital_patch_size(self):
        rotation, _, _, mirror = super().configure_rotation_dummyDA_mirroring_and_inital_patch_size()
        from nnunetv2.training.data_augmentation.compute_initial_patch_size import get_patch_size

        patch = self.configuration_manager.patch_size
        rotation = (-math.pi, math.pi)
        initial = get_patch_size(patch[1:], rotation, (0, 0), (0, 0), (0.85, 1.25))
        return rotation, True, [patch[0], *initial], mirror


class StrongBrightness(nnUNetTrainer):
    """A user's variant changing one transform's probability: brightness on every sample."""

    @staticmethod
    def get_training_transforms(*args, **kwargs):
        pipeline = nnUNetTrainer.get_training_transforms(*args, **kwargs)
        for t in pipeline.transforms:
            if isinstance(t, RandomTransform) and \
                    isinstance(t.transform, MultiplicativeBrightnessTransform):
                t.apply_probability = 1.0
        return pipeline


def nnunets_variants() -> list[type]:
    """Every trainer class defined in nnunetv2's variants package (56 in 2.8.1)."""
    import importlib
    import inspect
    import pkgutil

    import nnunetv2.training.nnUNetTrainer.variants as package

    found = {}
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, nnUNetTrainer) and cls.__module__ == module.__name__:
                found[cls.__name__] = cls
    return [found[name] for name in sorted(found)]


ALL_VARIANTS = nnunets_variants()
# The variants patchfeed refuses: DA5's pipeline needs transforms patchfeed lacks.
REFUSED = {c for c in ALL_VARIANTS if "DA5" in c.__name__}
VARIANTS = [nnUNetTrainer, *[c for c in ALL_VARIANTS if c not in REFUSED], ForcedDummy2D,
            StrongBrightness]


def with_patchfeed(base: type) -> type:
    return type(f"{base.__name__}Patchfeed", (PatchfeedDataMixin, base), {})


def trainers_pipeline(trainer, train: bool):
    """The pipeline nnU-Net's get_dataloaders builds for the trainer."""
    cm, lm = trainer.configuration_manager, trainer.label_manager
    scales = trainer._get_deep_supervision_scales()
    regions = lm.foreground_regions if lm.has_regions else None
    if not train:
        return trainer.get_validation_transforms(scales, trainer.is_cascaded,
                                                 lm.foreground_labels, regions, lm.ignore_label)
    rotation, dummy_2d, _, mirror = trainer.configure_rotation_dummyDA_mirroring_and_inital_patch_size()
    return trainer.get_training_transforms(
        cm.patch_size, rotation, scales, mirror, dummy_2d, use_mask_for_norm=cm.use_mask_for_norm,
        is_cascaded=trainer.is_cascaded, foreground_labels=lm.foreground_labels, regions=regions,
        ignore_label=lm.ignore_label)


def render(aug: dict) -> ComposeTransforms:
    """patchfeed's augmentation dict as the batchgeneratorsv2 pipeline it stands for, each
    transform present when it can act (a probability above 0, axes or channels named)."""
    def scalar(pair, bg=False):
        return BGContrast(tuple(pair)) if bg else tuple(pair)

    def maybe(slot, make):
        settings = aug[slot]
        if settings["p_apply"] > 0:
            out.append(RandomTransform(make(settings), apply_probability=settings["p_apply"]))

    out = []
    patch = aug["patch_size"]
    sp = aug["spatial"]
    if aug["dummy_2d"]:
        out.append(Convert3DTo2DTransform())
    if max(sp["p_rotation"], sp["p_scaling"], sp["p_elastic"]) > 0:
        out.append(SpatialTransform(
            patch[1:] if aug["dummy_2d"] else patch, patch_center_dist_from_border=0,
            random_crop=False, p_elastic_deform=sp["p_elastic"],
            elastic_deform_scale=scalar(sp["elastic_scale"]),
            elastic_deform_magnitude=scalar(sp["elastic_magnitude"]),
            p_synchronize_def_scale_across_axes=sp["p_synchronize_elastic_scale"],
            p_rotation=sp["p_rotation"], rotation=scalar(sp["rotation"]),
            p_rot_per_axis=sp["p_rotation_per_axis"], p_scaling=sp["p_scaling"],
            scaling=scalar(sp["scaling"]),
            p_synchronize_scaling_across_axes=sp["p_synchronize_scaling"],
            bg_style_seg_sampling=False,
            mode_seg="nearest" if sp["seg_mode"] == "nearest" else "bilinear",
            border_mode_seg="constant", padding_value_seg=sp["seg_padding_value"]))
    if aug["dummy_2d"]:
        out.append(Convert2DTo3DTransform())
    maybe("noise", lambda s: GaussianNoiseTransform(
        noise_variance=scalar(s["sigma"]), p_per_channel=s["p_per_channel"],
        synchronize_channels=s["synchronize_channels"]))
    maybe("blur", lambda s: GaussianBlurTransform(
        blur_sigma=scalar(s["sigma"]), synchronize_channels=s["synchronize_channels"],
        synchronize_axes=s["synchronize_axes"], p_per_channel=s["p_per_channel"]))
    maybe("brightness", lambda s: MultiplicativeBrightnessTransform(
        multiplier_range=scalar(s["multiplier"], s["bg_contrast"]),
        synchronize_channels=s["synchronize_channels"], p_per_channel=s["p_per_channel"]))
    maybe("contrast", lambda s: ContrastTransform(
        contrast_range=scalar(s["factor"], s["bg_contrast"]), preserve_range=s["preserve_range"],
        synchronize_channels=s["synchronize_channels"], p_per_channel=s["p_per_channel"]))
    maybe("low_resolution", lambda s: SimulateLowResolutionTransform(
        scale=scalar(s["zoom"]), synchronize_channels=s["synchronize_channels"],
        synchronize_axes=s["synchronize_axes"], ignore_axes=tuple(s["ignore_axes"]) or None,
        allowed_channels=None, p_per_channel=s["p_per_channel"]))
    for slot in ("gamma_inverted", "gamma"):
        maybe(slot, lambda s: GammaTransform(
            gamma=scalar(s["gamma"], s["bg_contrast"]), p_invert_image=s["p_invert"],
            synchronize_channels=s["synchronize_channels"], p_per_channel=s["p_per_channel"],
            p_retain_stats=s["p_retain_stats"]))
    if aug["mirror_axes"]:
        out.append(MirrorTransform(allowed_axes=tuple(aug["mirror_axes"])))
    if aug["mask_channels"]:
        out.append(MaskImageTransform(apply_to_channels=aug["mask_channels"],
                                      channel_idx_in_seg=0, set_outside_to=0))
    if aug["remove_label"]:
        out.append(RemoveLabelTransform(-1, 0))
    if "cascade_foreground_labels" in aug:
        labels = aug["cascade_foreground_labels"]
        onehot = list(range(-len(labels), 0))
        out.append(MoveSegAsOneHotToDataTransform(source_channel_idx=1, all_labels=labels,
                                                  remove_channel_from_source=True))
        operators = {"dilation": binary_dilation_torch, "erosion": binary_erosion_torch,
                     "closing": binary_closing_torch, "opening": binary_opening_torch}
        maybe("binary_operator", lambda s: ApplyRandomBinaryOperatorTransform(
            channel_idx=onehot, any_of_these=tuple(operators[o] for o in s["operators"]),
            strel_size=scalar(s["strel_size"]), p_per_label=s["p_per_label"]))
        maybe("remove_component",
              lambda s: RemoveRandomConnectedComponentFromOneHotEncodingTransform(
                  channel_idx=onehot, fill_with_other_class_p=s["fill_with_other_class_p"],
                  dont_do_if_covers_more_than_x_percent=s["max_coverage"],
                  p_per_label=s["p_per_label"]))
    if "regions" in aug:
        out.append(ConvertSegmentationToRegionsTransform(regions=aug["regions"], channel_in_seg=0))
    if "deep_supervision_scales" in aug:
        out.append(DownsampleSegForDSTransform(ds_scales=aug["deep_supervision_scales"]))
    return ComposeTransforms(out)


IGNORED = {"benchmark", "benchmark_use_fft", "benchmark_num_runs", "_grid_cache"}


def canonical(value):
    """A pipeline as plain, comparable values: transforms by class and parameters."""
    if hasattr(value, "tolist"):
        return canonical(value.tolist())
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    if isinstance(value, dict):
        return {k: canonical(v) for k, v in value.items()}
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    return (type(value).__name__,
            {k: canonical(v) for k, v in vars(value).items() if k not in IGNORED})


@pytest.mark.parametrize("configuration", ["3d_fullres", "2d"])
@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.__name__)
def test_translation_round_trips_to_the_trainers_pipeline(env, variant, configuration):
    if variant is ForcedDummy2D and configuration == "2d":
        pytest.skip("dummy 2-D is a 3-D configuration's")
    if "Benchmark" in variant.__name__ and not torch.cuda.is_available():
        pytest.skip("nnU-Net's benchmark trainers assert a GPU when built")
    trainer = make_trainer(env, configuration, trainer_class=with_patchfeed(variant))
    for train in (True, False):
        theirs = trainers_pipeline(trainer, train)
        ours = render(augmentation_for(trainer, train))
        assert canonical(ours) == canonical(theirs), (variant.__name__, train)
    aug = augmentation_for(trainer, True)
    # Spot checks of what each variant is about, against the dicts themselves.
    if variant is nnUNetTrainerNoDA.nnUNetTrainerNoDA:
        assert aug["spatial"]["p_rotation"] == aug["spatial"]["p_scaling"] == 0
        assert all(aug[s]["p_apply"] == 0 for s in ("noise", "blur", "gamma"))
        assert aug["mirror_axes"] == []
    elif "DASegOrd0" in variant.__name__:
        assert aug["spatial"]["seg_mode"] == "nearest"
    elif variant is ForcedDummy2D:
        assert aug["dummy_2d"] and aug["low_resolution"]["ignore_axes"] == [0]
    elif variant is StrongBrightness:
        assert aug["brightness"]["p_apply"] == 1.0 and aug["gamma_inverted"]["p_apply"] == 0.1
    elif variant is nnUNetTrainerNoDeepSupervision:
        assert "deep_supervision_scales" not in aug


@pytest.mark.parametrize("dummy_2d", [False, True])
def test_translation_round_trips_with_every_option_on(dummy_2d):
    """nnU-Net's default pipelines with what the tiny datasets lack: channels normalised with a
    mask, regions with an ignore label, deep supervision and dummy 2-D at once."""
    from patchfeed.nnunet.pipeline import translate

    patch = [20, 64, 64]
    scales = [[1.0, 1.0, 1.0], [1.0, 0.5, 0.5], [0.5, 0.25, 0.25]]
    regions = [[1, 2, 3], [2, 3], [3]]
    train = nnUNetTrainer.get_training_transforms(
        patch, (-math.pi, math.pi) if dummy_2d else (-0.5, 0.5), scales, (1, 2), dummy_2d,
        use_mask_for_norm=[True, False, True], is_cascaded=False, foreground_labels=[1, 2, 3],
        regions=regions, ignore_label=4)
    val = nnUNetTrainer.get_validation_transforms(scales, False, [1, 2, 3], regions, 4)
    crop = [20, 90, 90] if dummy_2d else [30, 90, 90]
    for pipeline, crop_used in ((train, crop), (val, patch)):
        aug = translate(pipeline, patch, crop_used, where="test")
        assert canonical(render(aug)) == canonical(pipeline)
        NnUNetAugmenter(aug, seed=0)  # C++ takes it
    aug = translate(train, patch, crop, where="test")
    assert aug["mask_channels"] == [0, 2] and aug["regions"][-1] == [4]
    assert aug["dummy_2d"] == dummy_2d


def test_cascaded_translation_round_trips():
    """nnU-Net's cascaded pipelines (3d_cascade_fullres): the previous stage's one-hot channels
    and their two random steps in training, the one-hot channels alone in validation."""
    from patchfeed.nnunet.pipeline import translate

    patch = [24, 32, 32]
    scales = [[1.0, 1.0, 1.0], [0.5, 0.5, 0.5]]
    train = nnUNetTrainer.get_training_transforms(
        patch, (-0.5, 0.5), scales, (0, 1, 2), False, use_mask_for_norm=[False],
        is_cascaded=True, foreground_labels=[1, 2], regions=None, ignore_label=None)
    val = nnUNetTrainer.get_validation_transforms(scales, True, [1, 2], None, None)
    for pipeline, crop in ((train, [36, 48, 48]), (val, patch)):
        aug = translate(pipeline, patch, crop, where="test")
        assert canonical(render(aug)) == canonical(pipeline)
        NnUNetAugmenter(aug, seed=0)  # C++ takes it
    aug = translate(train, patch, [36, 48, 48], where="test")
    assert aug["cascade_foreground_labels"] == [1, 2]
    assert aug["binary_operator"] == {"p_apply": 0.4, "strel_size": [1.0, 8.0],
                                      "p_per_label": 0.5,
                                      "operators": ["dilation", "erosion", "closing", "opening"]}
    assert aug["remove_component"] == {"p_apply": 0.2, "p_per_label": 0.5,
                                       "fill_with_other_class_p": 0.0, "max_coverage": 0.15}
    val_aug = translate(val, patch, patch, where="test")
    assert val_aug["binary_operator"]["p_apply"] == val_aug["remove_component"]["p_apply"] == 0


def test_cascade_steps_the_cpp_does_not_run_are_refused():
    from patchfeed.nnunet.pipeline import translate

    onehot = MoveSegAsOneHotToDataTransform(source_channel_idx=1, all_labels=[1, 2])
    pipelines = {
        "source_channel_idx=2": [RemoveLabelTransform(-1, 0), MoveSegAsOneHotToDataTransform(
            source_channel_idx=2, all_labels=[1, 2])],
        "any_of_these": [RemoveLabelTransform(-1, 0), onehot, ApplyRandomBinaryOperatorTransform(
            channel_idx=[-2, -1], any_of_these=(binary_erosion_torch, binary_dilation_torch))],
        "channel_idx=": [RemoveLabelTransform(-1, 0), onehot,
                         RemoveRandomConnectedComponentFromOneHotEncodingTransform(channel_idx=[-1])],
        "without MoveSegAsOneHotToDataTransform": [
            RemoveLabelTransform(-1, 0),
            ApplyRandomBinaryOperatorTransform(channel_idx=[-2, -1])],
    }
    for problem, transforms in pipelines.items():
        with pytest.raises(UnsupportedAugmentation, match=problem):
            translate(ComposeTransforms(transforms), [8, 8, 8], [8, 8, 8], where="test")


@pytest.mark.parametrize("variant", sorted(REFUSED, key=lambda c: c.__name__),
                         ids=lambda v: v.__name__)
def test_every_other_variant_is_refused(env, variant):
    """With VARIANTS, every trainer of nnunetv2's variants package: translated exactly or
    refused, nothing in between."""
    assert len(ALL_VARIANTS) >= 56 and len(REFUSED) == 5
    trainer = make_trainer(env, "3d_fullres", trainer_class=with_patchfeed(variant))
    with pytest.raises(UnsupportedAugmentation, match="Rot90Transform"):
        augmentation_for(trainer, True)
    augmentation_for(trainer, False)  # DA5's validation pipeline is nnU-Net's default


def test_noda_training_batches_equal_nnunets_bit_for_bit(env):
    from patchfeed import Loader
    from patchfeed.nnunet.settings import loader_options

    trainer = make_trainer(env, "3d_fullres",
                           trainer_class=with_patchfeed(nnUNetTrainerNoDA.nnUNetTrainerNoDA))
    tr_keys, _ = trainer.do_split()
    options = loader_options(trainer, tr_keys, train=True)
    assert options["patch_size"] == list(trainer.configuration_manager.patch_size)
    transforms = trainers_pipeline(trainer, train=True)
    with Loader(**options) as loader:
        ids = loader.dataset.case_ids
        for _, batch in zip(range(3), loader):
            for j, s in enumerate(loader.last_batch.samples):
                image, targets = nnunet_sample(trainer, ids[s.case_index], s.box_start,
                                               options["patch_size"], transforms)
                assert torch.equal(batch["image"][j], image), s
                for ours, theirs in zip(batch["seg"], targets):
                    assert torch.equal(ours[j], theirs), s


def batch_statistics(batches, n):
    """Per sample, over n batches: the image's mean and standard deviation and the foreground
    fraction of the full-resolution target."""
    means, stds, foreground = [], [], []
    for _ in range(n):
        batch = next(batches)
        data = batch["data"].flatten(1).float()
        target = batch["target"][0] if isinstance(batch["target"], list) else batch["target"]
        means += data.mean(1).tolist()
        stds += data.std(1).tolist()
        foreground += (target > 0).flatten(1).float().mean(1).tolist()
    return np.array(means), np.array(stds), np.array(foreground)


def nnunets_batches(trainer):
    """nnU-Net's own training loader for the trainer, as its get_dataloaders builds it
    (single-threaded)."""
    from nnunetv2.training.dataloading.data_loader import nnUNetDataLoader
    from nnunetv2.training.dataloading.nnunet_dataset import nnUNetDatasetBlosc2

    _, _, initial, _ = trainer.configure_rotation_dummyDA_mirroring_and_inital_patch_size()
    tr_keys, _ = trainer.do_split()
    loader = nnUNetDataLoader(
        nnUNetDatasetBlosc2(trainer.preprocessed_dataset_folder, tr_keys), trainer.batch_size,
        initial, trainer.configuration_manager.patch_size, trainer.label_manager,
        oversample_foreground_percent=trainer.oversample_foreground_percent,
        probabilistic_oversampling=trainer.probabilistic_oversampling,
        transforms=trainers_pipeline(trainer, True))
    return iter(loader.generate_train_batch, None)


@pytest.mark.parametrize("variant", [
    StrongBrightness, nnUNetTrainerDAOrd0.nnUNetTrainer_DASegOrd0,
    nnUNetTrainer_probabilisticOversampling.nnUNetTrainer_probabilisticOversampling_010],
    ids=lambda v: v.__name__)
def test_training_batches_have_nnunets_statistics(env, variant):
    """Per-sample image means and deviations and foreground fractions of 500+ samples are
    distributed as those of nnU-Net's own loader with the same trainer (two-sample
    Kolmogorov-Smirnov; both sides seeded, so the outcome is fixed). For StrongBrightness, a
    user's subclass that puts brightness on every sample, the statistic also tells it from
    the default trainer."""
    np.random.seed(0)
    torch.manual_seed(0)
    trainer = make_trainer(env, "3d_fullres", trainer_class=with_patchfeed(variant))
    n = math.ceil(500 / trainer.batch_size)
    ours, _ = trainer.get_dataloaders()
    ours_stats = batch_statistics(ours, n)
    ours.close()
    theirs_stats = batch_statistics(nnunets_batches(trainer), n)
    for name, x, y in zip(("mean", "std", "foreground"), ours_stats, theirs_stats):
        assert ks_2samp(x, y).pvalue > 1e-4, (name, x.mean(), y.mean())
    if variant is StrongBrightness:
        default = batch_statistics(nnunets_batches(make_trainer(env, "3d_fullres")), n)
        assert ks_2samp(ours_stats[0], default[0]).pvalue < 1e-4


class OwnTransformTrainer(nnUNetTrainer):
    @staticmethod
    def get_training_transforms(*args, **kwargs):
        from batchgeneratorsv2.transforms.base.basic_transform import ImageOnlyTransform

        class InvertImage(ImageOnlyTransform):
            def _apply_to_image(self, img, **params):
                return -img

        pipeline = nnUNetTrainer.get_training_transforms(*args, **kwargs)
        pipeline.transforms.insert(3, InvertImage())
        return pipeline


class BorderPaddingTrainer(nnUNetTrainer):
    @staticmethod
    def get_training_transforms(*args, **kwargs):
        pipeline = nnUNetTrainer.get_training_transforms(*args, **kwargs)
        pipeline.transforms[0].padding_mode_image = "border"
        return pipeline


class NearestUpsamplingTrainer(nnUNetTrainer):
    """Low resolution upsampled by nearest neighbour: an attribute, not a constructor argument."""

    @staticmethod
    def get_training_transforms(*args, **kwargs):
        pipeline = nnUNetTrainer.get_training_transforms(*args, **kwargs)
        for t in pipeline.transforms:
            if isinstance(t, RandomTransform) and \
                    isinstance(t.transform, SimulateLowResolutionTransform):
                t.transform.upmodes = {1: "nearest", 2: "nearest", 3: "nearest"}
        return pipeline


class NanPaddingTrainer(nnUNetTrainer):
    @staticmethod
    def get_training_transforms(*args, **kwargs):
        pipeline = nnUNetTrainer.get_training_transforms(*args, **kwargs)
        pipeline.transforms[0].padding_value_seg = float("nan")
        return pipeline


class ReorderedTrainer(nnUNetTrainer):
    @staticmethod
    def get_training_transforms(*args, **kwargs):
        pipeline = nnUNetTrainer.get_training_transforms(*args, **kwargs)
        t = pipeline.transforms
        t[1], t[2] = t[2], t[1]  # blur before noise
        return pipeline


@pytest.mark.parametrize("variant, expected", [
    (nnUNetTrainerDA5.nnUNetTrainerDA5,
     ["Rot90Transform", "TransposeAxesTransform",
      "OneOfTransform(MedianFilterTransform, GaussianBlurTransform)",
      "BrightnessAdditiveTransform", "OneOfTransform(ContrastTransform, ContrastTransform)",
      "BlankRectangleTransform", "BrightnessGradientAdditiveTransform", "LocalGammaTransform",
      "SharpeningTransform"]),
    (OwnTransformTrainer, ["InvertImage (from test_nnunet_variants)"]),
    (BorderPaddingTrainer, ["SpatialTransform.padding_mode_image='border'"]),
    (ReorderedTrainer, ["GaussianNoiseTransform after blur"]),
    (NearestUpsamplingTrainer, ["SimulateLowResolutionTransform.upmodes="]),
    (NanPaddingTrainer, ["SpatialTransform.padding_value_seg=nan"]),
], ids=["DA5", "own-transform", "parameter", "order", "upmodes", "nan"])
def test_what_patchfeed_lacks_is_refused_before_loading(env, variant, expected):
    trainer = make_trainer(env, "3d_fullres", trainer_class=with_patchfeed(variant))
    with pytest.raises(UnsupportedAugmentation) as caught:
        trainer.get_dataloaders()
    message = str(caught.value)
    assert f"{with_patchfeed(variant).__name__}.get_training_transforms()" in message
    for name in expected:
        assert name in message, (name, message)
    assert "nnU-Net's own data loader" in message


def test_a_variant_trains_through_nnunets_api(env):
    """A few iterations of nnU-Net's own training loop on patchfeed batches, checkpoint
    written: what nnUNetv2_train -tr runs after finding the class."""
    import pathlib

    variant = with_patchfeed(nnUNetTrainerNoDA.nnUNetTrainerNoDA)
    trainer = make_trainer(env, "3d_fullres", trainer_class=variant)
    trainer.num_epochs = 1
    trainer.num_iterations_per_epoch = 2
    trainer.num_val_iterations_per_epoch = 1
    trainer.run_training()
    assert (pathlib.Path(trainer.output_folder) / "checkpoint_final.pth").is_file()
