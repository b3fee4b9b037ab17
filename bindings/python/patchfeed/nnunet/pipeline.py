# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""A trainer's own augmentation pipeline, translated into patchfeed's.

nnU-Net's `get_dataloaders` builds its pipelines by calling the trainer's
`get_training_transforms(...)` and `get_validation_transforms(...)`; a trainer variant changes
its augmentation by overriding them (nnUNetTrainerNoDA, DAOrd0, DA5, a user's own subclass).
`augmentation_for(trainer, train)` makes the same calls with the same arguments, walks the
batchgeneratorsv2 pipeline they return and translates every transform and parameter into the
`augmentation` dict of patchfeed.Loader, which sets each transform's config in C++
(augment/augment_config.h).

patchfeed runs nnU-Net's transforms, in nnU-Net's order (ORDER). A transform it does not
implement, a parameter value its C++ does not reproduce, a second instance or another order is
refused with an UnsupportedAugmentation naming the trainer, each transform and parameter, all of
them at once, before any loader starts: a silent difference from nnU-Net is worse.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any

# The order patchfeed runs nnU-Net's transforms in (augment/nnunet_pipeline.cc); nnU-Net's
# default trainer uses every slot but the last of the two gammas' names says nothing: a
# pipeline's first GammaTransform fills "gamma_inverted", its second "gamma".
ORDER = ("spatial", "noise", "blur", "brightness", "contrast", "low_resolution",
         "gamma_inverted", "gamma", "mirror", "mask", "remove_label", "onehot",
         "binary_operator", "remove_component", "regions", "deep_supervision")
# bgv2's binary operators by function name, in the order of the C++ BinaryOperator enum.
_BINARY_OPERATORS = {"binary_dilation_torch": "dilation", "binary_erosion_torch": "erosion",
                     "binary_closing_torch": "closing", "binary_opening_torch": "opening"}
_INTENSITY = ("noise", "blur", "brightness", "contrast", "low_resolution", "gamma_inverted",
              "gamma")
# Instance attributes that change how bgv2 computes, never what: benchmarks and caches.
_NOT_PARAMETERS = {"benchmark", "benchmark_use_fft", "benchmark_num_runs", "_grid_cache"}
# SimulateLowResolutionTransform's upsampling per spatial rank, the only modes patchfeed runs.
_LOW_RESOLUTION_UPMODES = {1: "linear", 2: "bilinear", 3: "trilinear"}


class UnsupportedAugmentation(NotImplementedError):
    """A trainer's augmentation that patchfeed would not reproduce exactly."""


def augmentation_for(trainer: Any, train: bool) -> dict[str, Any]:
    """patchfeed.Loader's `augmentation` for the trainer's training (`train`) or validation
    pipeline, as nnU-Net's get_dataloaders would build it."""
    cm, lm = trainer.configuration_manager, trainer.label_manager
    final = [int(p) for p in cm.patch_size]
    scales = trainer._get_deep_supervision_scales()
    regions = lm.foreground_regions if lm.has_regions else None
    rotation, dummy_2d, initial, mirror_axes = \
        trainer.configure_rotation_dummyDA_mirroring_and_inital_patch_size()
    if train:
        pipeline = trainer.get_training_transforms(
            cm.patch_size, rotation, scales, mirror_axes, dummy_2d,
            use_mask_for_norm=cm.use_mask_for_norm, is_cascaded=trainer.is_cascaded,
            foreground_labels=lm.foreground_labels, regions=regions,
            ignore_label=lm.ignore_label)
        crop = [int(p) for p in initial]
    else:
        pipeline = trainer.get_validation_transforms(
            scales, is_cascaded=trainer.is_cascaded, foreground_labels=lm.foreground_labels,
            regions=regions, ignore_label=lm.ignore_label)
        crop = final
    name = "get_training_transforms" if train else "get_validation_transforms"
    return translate(pipeline, final, crop, where=f"{type(trainer).__name__}.{name}()")


def translate(pipeline: Any, patch_size: Sequence[int], crop: Sequence[int],
              where: str) -> dict[str, Any]:
    """The augmentation dict for a batchgeneratorsv2 `pipeline` that turns crops of `crop`
    into patches of `patch_size` (nnU-Net's initial and final patch sizes)."""
    walk = _Walk(where, [int(p) for p in patch_size])
    for transform, p_apply in _flatten(pipeline, 1.0):
        walk.add(transform, p_apply)
    augmentation = walk.result()
    if "spatial" not in walk.seen and [int(c) for c in crop] != walk.patch:
        walk.problems.append(
            f"no SpatialTransform, but nnU-Net crops {list(crop)} for patches of {walk.patch}: "
            f"without a spatial transform its batches would keep the crop's size")
    if walk.problems:
        raise UnsupportedAugmentation(
            f"patchfeed cannot run {where} exactly, so it refuses rather than differ from "
            f"nnU-Net:\n" + "\n".join(f"  - {p}" for p in walk.problems) +
            "\nTrain this trainer with nnU-Net's own data loader (without PatchfeedDataMixin); "
            "docs/nnunet.md lists the variants patchfeed runs.")
    return augmentation


def _flatten(transform: Any, p_apply: float):
    """(transform, probability) for each leaf of nested ComposeTransforms/RandomTransforms."""
    kind = type(transform).__name__
    if kind == "ComposeTransforms":
        for t in transform.transforms:
            yield from _flatten(t, p_apply)
    elif kind == "RandomTransform":
        yield from _flatten(transform.transform, p_apply * float(transform.apply_probability))
    else:
        yield transform, p_apply


class _Walk:
    """The translation so far: each slot's settings, in ORDER, and the problems found."""

    def __init__(self, where: str, patch: list[int]) -> None:
        self.where, self.patch = where, patch
        self.problems: list[str] = []
        self.seen: list[str] = []
        self.dummy_2d = False
        self.settings: dict[str, Any] = {}

    def add(self, transform: Any, p_apply: float) -> None:
        kind = type(transform).__name__
        # By class and module: a user's own class of the same name is not bgv2's.
        from_bgv2 = type(transform).__module__.startswith("batchgeneratorsv2.")
        handler = _HANDLERS.get(kind) if from_bgv2 else None
        if handler is None:
            self.problems.append(f"{_describe(transform)} is not implemented in patchfeed")
            return
        try:
            slot, read = handler(self, transform, p_apply)
        except (TypeError, ValueError, OverflowError, AttributeError) as error:
            self.problems.append(f"{kind}: a parameter patchfeed cannot read ({error})")
            return
        if slot is None:
            return
        if slot == "gamma_inverted" and "gamma_inverted" in self.seen:
            slot = "gamma"
        if slot in self.seen:
            self.problems.append(f"a second {kind}: patchfeed runs each of nnU-Net's "
                                 f"transforms once")
            return
        if self.seen and ORDER.index(slot) < ORDER.index(self.seen[-1]):
            self.problems.append(f"{kind} after {self.seen[-1]}: patchfeed runs nnU-Net's "
                                 f"transforms in nnU-Net's order ({', '.join(ORDER)})")
            return
        self.seen.append(slot)
        unknown = set(vars(transform)) - set(read) - _NOT_PARAMETERS
        for attribute in sorted(unknown):
            self.problems.append(f"{kind}.{attribute}: a parameter patchfeed does not know")
        if slot in _INTENSITY:
            self.settings[slot]["p_apply"] = p_apply

    def require(self, transform: Any, attribute: str, ok: Callable[[Any], bool],
                what: str) -> None:
        value = getattr(transform, attribute)
        try:
            accepted = bool(ok(value))
        except (TypeError, ValueError, OverflowError):  # e.g. a string or NaN where a number goes
            accepted = False
        if not accepted:
            self.problems.append(f"{type(transform).__name__}.{attribute}={value!r}: "
                                 f"patchfeed implements only {what}")

    def scalar(self, transform: Any, attribute: str, bg_contrast_ok: bool = False
               ) -> tuple[list[float], bool]:
        """A bgv2 RandomScalar as ([lo, hi], drawn with BGContrast)."""
        value = getattr(transform, attribute)
        if type(value).__name__ == "BGContrast" and bg_contrast_ok:
            lo, hi = value.contrast_range
            return [float(lo), float(hi)], True
        if isinstance(value, numbers.Real):
            return [float(value), float(value)], False
        if isinstance(value, (tuple, list)) and len(value) == 2 and \
                all(isinstance(v, numbers.Real) for v in value):
            return [float(value[0]), float(value[1])], False
        self.problems.append(f"{type(transform).__name__}.{attribute}={value!r}: patchfeed "
                             f"draws only from a (low, high) range, a constant"
                             f"{' or BGContrast' if bg_contrast_ok else ''}")
        return [0.0, 0.0], False

    def whole(self, transform: Any, p_apply: float) -> None:
        if p_apply != 1.0:
            self.problems.append(f"{type(transform).__name__} applied with probability "
                                 f"{p_apply:g} as a whole: patchfeed implements it always on")

    def result(self) -> dict[str, Any]:
        s = self.settings
        out: dict[str, Any] = {"patch_size": self.patch, "dummy_2d": self.dummy_2d}
        out["spatial"] = s.get("spatial", {"p_rotation": 0.0, "p_scaling": 0.0,
                                           "p_elastic": 0.0})
        for slot in _INTENSITY:
            out[slot] = s.get(slot, {"p_apply": 0.0})
        out["mirror_axes"] = s.get("mirror", [])
        out["mask_channels"] = s.get("mask", [])
        out["remove_label"] = "remove_label" in s
        if "onehot" in s:
            out["cascade_foreground_labels"] = s["onehot"]
            # Absent random steps are off (validation), not the C++ defaults (nnU-Net's training).
            for slot in ("binary_operator", "remove_component"):
                out[slot] = s.get(slot, {"p_apply": 0.0})
        elif "binary_operator" in s or "remove_component" in s:
            self.problems.append("ApplyRandomBinaryOperatorTransform or RemoveRandomConnected"
                                 "ComponentFromOneHotEncodingTransform without MoveSegAsOneHot"
                                 "ToDataTransform: patchfeed runs them on the cascade's one-hot "
                                 "channels only")
        if "regions" in s:
            out["regions"] = s["regions"]
        if "deep_supervision" in s:
            out["deep_supervision_scales"] = s["deep_supervision"]
        return out


def _describe(transform: Any) -> str:
    kind = type(transform).__name__
    if not type(transform).__module__.startswith("batchgeneratorsv2."):
        return f"{kind} (from {type(transform).__module__})"
    if kind == "RandomTransform":
        return _describe(transform.transform)
    if kind in ("OneOfTransform", "ComposeTransforms"):
        inner = getattr(transform, "list_of_transforms", None) or transform.transforms
        return f"{kind}({', '.join(_describe(t) for t in inner)})"
    return kind


# Each handler translates one bgv2 transform: (its slot or None, the attributes it read).

def _spatial(walk: _Walk, t: Any, p_apply: float):
    walk.whole(t, p_apply)
    spatial_patch = walk.patch[1:] if walk.dummy_2d else walk.patch
    walk.require(t, "patch_size", lambda v: [int(p) for p in v] == spatial_patch,
                 f"the configuration's patch size {spatial_patch}")
    walk.require(t, "patch_center_dist_from_border",
                 lambda v: all(int(x) == 0 for x in (v if isinstance(v, (list, tuple))
                                                     else [v])), "0 (nnU-Net's crop path)")
    walk.require(t, "random_crop", lambda v: v is False, "False (nnU-Net centres the patch)")
    walk.require(t, "p_elastic_deform", lambda v: float(v) == 0.0,
                 "0: patchfeed's elastic field approximates bgv2's FFT Gaussian with box "
                 "filters, equal in distribution and shape, not value by value")
    walk.require(t, "bg_style_seg_sampling", lambda v: v is False,
                 "False (nnU-Net's: one-hot free resampling of the labels)")
    walk.require(t, "mode_seg", lambda v: v in ("bilinear", "nearest"), "'bilinear' or 'nearest'")
    walk.require(t, "border_mode_seg", lambda v: v == "constant", "'constant'")
    walk.require(t, "center_deformation", lambda v: v is True, "True")
    walk.require(t, "mode_image", lambda v: v == "bilinear", "'bilinear'")
    walk.require(t, "padding_mode_image", lambda v: v == "zeros", "'zeros'")
    walk.require(t, "padding_value_image", lambda v: float(v) == 0.0, "0")
    walk.require(t, "align_corners", lambda v: v is False, "False")
    walk.require(t, "padding_value_seg", lambda v: float(v) == int(v) and -2**15 <= v < 2**15,
                 "an int16 value")
    rotation, _ = walk.scalar(t, "rotation")
    scaling, _ = walk.scalar(t, "scaling")
    elastic_scale, _ = walk.scalar(t, "elastic_deform_scale")
    elastic_magnitude, _ = walk.scalar(t, "elastic_deform_magnitude")
    walk.settings["spatial"] = {
        "p_rotation": float(t.p_rotation), "rotation": rotation,
        "p_rotation_per_axis": float(t.p_rot_per_axis),
        "p_scaling": float(t.p_scaling), "scaling": scaling,
        "p_synchronize_scaling": float(t.p_synchronize_scaling_across_axes),
        "p_elastic": float(t.p_elastic_deform), "elastic_scale": elastic_scale,
        "elastic_magnitude": elastic_magnitude,
        "p_synchronize_elastic_scale": float(t.p_synchronize_def_scale_across_axes),
        "seg_mode": "nearest" if t.mode_seg == "nearest" else "linear",
        "seg_padding_value": _int_or(t.padding_value_seg, -1)}
    return "spatial", ("patch_size", "patch_center_dist_from_border", "random_crop",
                       "p_elastic_deform", "elastic_deform_scale", "elastic_deform_magnitude",
                       "p_synchronize_def_scale_across_axes", "p_rotation", "rotation",
                       "p_rot_per_axis", "p_scaling", "scaling",
                       "p_synchronize_scaling_across_axes", "bg_style_seg_sampling",
                       "mode_seg", "border_mode_seg", "center_deformation", "mode_image",
                       "padding_mode_image", "padding_value_seg", "padding_value_image",
                       "align_corners")


def _to_2d(walk: _Walk, t: Any, p_apply: float):
    walk.whole(t, p_apply)
    if walk.seen or len(walk.patch) != 3:
        walk.problems.append("Convert3DTo2DTransform elsewhere than first in a 3-D pipeline: "
                             "patchfeed's dummy 2-D wraps the spatial transform only")
    walk.dummy_2d = True
    return None, ()


def _to_3d(walk: _Walk, t: Any, p_apply: float):
    walk.whole(t, p_apply)
    if not walk.dummy_2d or walk.seen[-1:] != ["spatial"]:
        walk.problems.append("Convert2DTo3DTransform elsewhere than right after the spatial "
                             "transform of a dummy 2-D pipeline")
    return None, ()


def _noise(walk: _Walk, t: Any, p_apply: float):
    sigma, _ = walk.scalar(t, "noise_variance")  # bgv2 uses the "variance" as sigma
    walk.settings["noise"] = {"sigma": sigma, "p_per_channel": float(t.p_per_channel),
                              "synchronize_channels": bool(t.synchronize_channels)}
    return "noise", ("noise_variance", "p_per_channel", "synchronize_channels")


def _blur(walk: _Walk, t: Any, p_apply: float):
    sigma, _ = walk.scalar(t, "blur_sigma")
    walk.settings["blur"] = {"sigma": sigma, "p_per_channel": float(t.p_per_channel),
                             "synchronize_channels": bool(t.synchronize_channels),
                             "synchronize_axes": bool(t.synchronize_axes)}
    return "blur", ("blur_sigma", "p_per_channel", "synchronize_channels", "synchronize_axes")


def _brightness(walk: _Walk, t: Any, p_apply: float):
    multiplier, bg = walk.scalar(t, "multiplier_range", bg_contrast_ok=True)
    walk.settings["brightness"] = {"multiplier": multiplier, "bg_contrast": bg,
                                   "p_per_channel": float(t.p_per_channel),
                                   "synchronize_channels": bool(t.synchronize_channels)}
    return "brightness", ("multiplier_range", "p_per_channel", "synchronize_channels")


def _contrast(walk: _Walk, t: Any, p_apply: float):
    factor, bg = walk.scalar(t, "contrast_range", bg_contrast_ok=True)
    walk.settings["contrast"] = {"factor": factor, "bg_contrast": bg,
                                 "preserve_range": bool(t.preserve_range),
                                 "p_per_channel": float(t.p_per_channel),
                                 "synchronize_channels": bool(t.synchronize_channels)}
    return "contrast", ("contrast_range", "preserve_range", "p_per_channel",
                        "synchronize_channels")


def _low_resolution(walk: _Walk, t: Any, p_apply: float):
    zoom, _ = walk.scalar(t, "scale")
    walk.require(t, "allowed_channels", lambda v: v is None, "None (every channel)")
    walk.require(t, "upmodes", lambda v: dict(v) == _LOW_RESOLUTION_UPMODES,
                 f"{_LOW_RESOLUTION_UPMODES} (linear upsampling)")
    ignore = t.ignore_axes
    ignore = [] if ignore is None else [int(a) for a in (
        ignore if isinstance(ignore, (list, tuple)) else [ignore])]
    walk.settings["low_resolution"] = {"zoom": zoom, "ignore_axes": ignore,
                                       "p_per_channel": float(t.p_per_channel),
                                       "synchronize_channels": bool(t.synchronize_channels),
                                       "synchronize_axes": bool(t.synchronize_axes)}
    return "low_resolution", ("scale", "allowed_channels", "ignore_axes", "p_per_channel",
                              "synchronize_channels", "synchronize_axes", "upmodes")


def _gamma(walk: _Walk, t: Any, p_apply: float):
    gamma, bg = walk.scalar(t, "gamma", bg_contrast_ok=True)
    slot = "gamma" if "gamma_inverted" in walk.seen else "gamma_inverted"
    walk.settings[slot] = {"gamma": gamma, "bg_contrast": bg,
                           "p_invert": float(t.p_invert_image),
                           "p_retain_stats": float(t.p_retain_stats),
                           "p_per_channel": float(t.p_per_channel),
                           "synchronize_channels": bool(t.synchronize_channels)}
    return "gamma_inverted", ("gamma", "p_invert_image", "p_retain_stats", "p_per_channel",
                              "synchronize_channels")


def _mirror(walk: _Walk, t: Any, p_apply: float):
    walk.whole(t, p_apply)
    walk.settings["mirror"] = [int(a) for a in t.allowed_axes]
    return "mirror", ("allowed_axes",)


def _mask(walk: _Walk, t: Any, p_apply: float):
    walk.whole(t, p_apply)
    walk.require(t, "channel_idx_in_seg", lambda v: v == 0, "0")
    walk.require(t, "set_outside_to", lambda v: v == 0, "0")
    walk.settings["mask"] = [int(c) for c in t.apply_to_channels]
    return "mask", ("apply_to_channels", "channel_idx_in_seg", "set_outside_to")


def _remove_label(walk: _Walk, t: Any, p_apply: float):
    walk.whole(t, p_apply)
    walk.require(t, "label_value", lambda v: v == -1, "-1 (the padding label)")
    walk.require(t, "set_to", lambda v: v == 0, "0")
    walk.require(t, "segmentation_channels", lambda v: v is None or list(np_list(v)) == [0],
                 "None or [0] (the one segmentation channel)")
    walk.settings["remove_label"] = True
    return "remove_label", ("label_value", "set_to", "segmentation_channels")


def _onehot(walk: _Walk, t: Any, p_apply: float):
    walk.whole(t, p_apply)
    walk.require(t, "source_channel_idx", lambda v: v == 1,
                 "1 (the previous stage's segmentation, the cascade's second channel)")
    walk.require(t, "remove_channel_from_source", lambda v: v is True, "True")
    walk.settings["onehot"] = [int(x) for x in np_list(t.all_labels)]
    return "onehot", ("source_channel_idx", "all_labels", "remove_channel_from_source")


def _require_onehot_channels(walk: _Walk, t: Any) -> None:
    labels = len(walk.settings.get("onehot", []))
    # bgv2 shuffles channel_idx in place on every call: its order means nothing.
    walk.require(t, "channel_idx", lambda v: sorted(int(c) for c in np_list(v)) ==
                 list(range(-labels, 0)) and labels > 0,
                 "the one-hot channels MoveSegAsOneHotToDataTransform appended, each once")


def _binary_operator(walk: _Walk, t: Any, p_apply: float):
    _require_onehot_channels(walk, t)
    names = [getattr(f, "__name__", repr(f)) for f in t.any_of_these]
    known = [n for n in _BINARY_OPERATORS if n in names]
    if names != known:
        walk.problems.append(
            f"ApplyRandomBinaryOperatorTransform.any_of_these={tuple(names)}: patchfeed "
            f"implements bgv2's {', '.join(_BINARY_OPERATORS)}, each at most once, in that "
            f"order (a draw picks by position)")
    strel, _ = walk.scalar(t, "strel_size")
    walk.settings["binary_operator"] = {
        "p_apply": p_apply, "strel_size": strel, "p_per_label": float(t.p_per_label),
        "operators": [_BINARY_OPERATORS[n] for n in known] or ["dilation"]}
    return "binary_operator", ("channel_idx", "any_of_these", "strel_size", "p_per_label")


def _remove_component(walk: _Walk, t: Any, p_apply: float):
    _require_onehot_channels(walk, t)
    walk.settings["remove_component"] = {
        "p_apply": p_apply, "p_per_label": float(t.p_per_label),
        "fill_with_other_class_p": float(t.fill_with_other_class_p),
        "max_coverage": float(t.dont_do_if_covers_more_than_x_percent)}
    return "remove_component", ("channel_idx", "fill_with_other_class_p",
                                "dont_do_if_covers_more_than_x_percent", "p_per_label")


def _regions(walk: _Walk, t: Any, p_apply: float):
    walk.whole(t, p_apply)
    walk.require(t, "channel_in_seg", lambda v: v == 0, "0")
    walk.settings["regions"] = [[int(x) for x in np_list(r)] for r in t.regions]
    return "regions", ("regions", "channel_in_seg")


def _deep_supervision(walk: _Walk, t: Any, p_apply: float):
    walk.whole(t, p_apply)
    dims = len(walk.patch)
    walk.settings["deep_supervision"] = [
        [float(x) for x in s] if isinstance(s, (list, tuple)) or hasattr(s, "__len__")
        else [float(s)] * dims for s in t.ds_scales]
    return "deep_supervision", ("ds_scales",)


def _int_or(value: Any, fallback: int) -> int:
    """`value` as an int, or `fallback` where it is none (a refusal already names it)."""
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return fallback


def np_list(value: Any) -> list:
    """A scalar, sequence, NumPy array or torch tensor as a flat list."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    return list(value) if isinstance(value, (list, tuple)) else [value]


_HANDLERS: dict[str, Callable[[_Walk, Any, float], tuple[str | None, Sequence[str]]]] = {
    "SpatialTransform": _spatial,
    "Convert3DTo2DTransform": _to_2d,
    "Convert2DTo3DTransform": _to_3d,
    "GaussianNoiseTransform": _noise,
    "GaussianBlurTransform": _blur,
    "MultiplicativeBrightnessTransform": _brightness,
    "ContrastTransform": _contrast,
    "SimulateLowResolutionTransform": _low_resolution,
    "GammaTransform": _gamma,
    "MirrorTransform": _mirror,
    "MaskImageTransform": _mask,
    "RemoveLabelTransform": _remove_label,
    "MoveSegAsOneHotToDataTransform": _onehot,
    "ApplyRandomBinaryOperatorTransform": _binary_operator,
    "RemoveRandomConnectedComponentFromOneHotEncodingTransform": _remove_component,
    "ConvertSegmentationToRegionsTransform": _regions,
    "DownsampleSegForDSTransform": _deep_supervision,
}
