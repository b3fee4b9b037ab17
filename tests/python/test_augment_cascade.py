# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Differential tests of patchfeed's cascade augmentation (augment/cascade/) against
batchgeneratorsv2 0.3.5, which nnU-Net's 3d_cascade_fullres trains with
(transforms/nnunet: MoveSegAsOneHotToDataTransform, ApplyRandomBinaryOperatorTransform,
RemoveRandomConnectedComponentFromOneHotEncodingTransform) and against skimage, which gives
bg2 its footprints and its component labelling.

The deterministic parts are compared bit for bit with bg2's own code, given the same params.
The random parts cannot share bg2's numpy/torch streams, so they are compared by statistics
over many samples of both on the same input: how often a sample changes, how much, and the
drawn operators and radii.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

bg2 = pytest.importorskip("batchgeneratorsv2")
scipy_stats = pytest.importorskip("scipy.stats")

from batchgeneratorsv2.transforms.nnunet import remove_connected_components as bg2_rcc
from batchgeneratorsv2.transforms.nnunet.random_binary_operator import (
    ApplyRandomBinaryOperatorTransform,
    binary_closing_torch,
    binary_dilation_torch,
    binary_erosion_torch,
    binary_opening_torch,
)
from batchgeneratorsv2.transforms.nnunet.remove_connected_components import (
    RemoveRandomConnectedComponentFromOneHotEncodingTransform,
)
from batchgeneratorsv2.transforms.nnunet.seg_to_onehot import MoveSegAsOneHotToDataTransform
from batchgeneratorsv2.transforms.utils.compose import ComposeTransforms
from batchgeneratorsv2.transforms.utils.random import RandomTransform
from skimage.measure import label as skimage_label
from skimage.morphology import ball, disk

from patchfeed import _core

aug = _core.augment
torch.set_num_threads(1)

BG2_OPERATORS = {
    "dilation": binary_dilation_torch,
    "erosion": binary_erosion_torch,
    "closing": binary_closing_torch,
    "opening": binary_opening_torch,
}
SHAPES = [(19, 26, 31), (37, 44)]  # 3D and 2D, odd and even sizes
IDS = ["3d", "2d"]


def blobs(shape, seed, count=6, labels=1):
    """A label map of `count` random balls (or disks) of labels 1..labels, as a previous
    stage's segmentation looks: a few compact objects, some touching the border."""
    rng = np.random.default_rng(seed)
    grid = np.indices(shape)
    out = np.zeros(shape, np.int16)
    for k in range(count):
        centre = [rng.uniform(0, s) for s in shape]
        radius = rng.uniform(1.5, min(shape) / 4)
        inside = sum((g - c) ** 2 for g, c in zip(grid, centre)) <= radius**2
        out[inside] = 1 + k % labels
    return out


def noisy_mask(shape, seed):
    rng = np.random.default_rng(seed)
    return rng.random(shape) < rng.uniform(0.05, 0.6)


def footprint(radius, ndim):
    return disk(radius, dtype=bool) if ndim == 2 else ball(radius, dtype=bool)


# --- footprints, morphology, labelling (deterministic) ---------------------------------------


@pytest.mark.parametrize("ndim", [3, 2])
def test_footprints_match_skimage(ndim):
    # Non-integer radii give even extents and, for disks, off-centre samples: bg2 draws
    # radii from U(1, 8), so these are the common case.
    radii = [1.0, 1.5, 2.0, 2.3, 2.5, 4.999, 7.5, 7.99] + list(
        np.random.default_rng(3).uniform(0.5, 12, 200)
    )
    for r in radii:
        ours = aug.footprint(float(r), ndim)
        ref = footprint(float(r), ndim).astype(np.uint8)
        assert ours.shape == ref.shape, r
        np.testing.assert_array_equal(ours, ref, err_msg=f"radius {r}")


def test_footprint_radius_out_of_range_is_an_error():
    with pytest.raises(ValueError, match="radius of 200 is outside"):
        aug.footprint(200.0, 3)
    with pytest.raises(ValueError, match="outside"):
        aug.footprint(float("nan"), 2)


# "auto" picks per call between the two dilation algorithms; each is checked on its own too
# ("separable" applies to balls and symmetric disks, and falls back to "runs" elsewhere).
@pytest.mark.parametrize("method", ["auto", "runs", "separable"])
@pytest.mark.parametrize("op", list(BG2_OPERATORS))
@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_binary_morphology_matches_bg2(shape, op, method):
    rng = np.random.default_rng(11)
    for trial in range(8):
        mask = blobs(shape, seed=trial).astype(bool) if trial % 2 else noisy_mask(shape, trial)
        radius = float(rng.uniform(1, 8)) if trial else 2.5  # 2.5: an even extent
        strel = torch.from_numpy(footprint(radius, len(shape)))
        ref = BG2_OPERATORS[op](torch.from_numpy(mask), strel).numpy().astype(np.uint8)
        ours = mask[None].astype(np.uint8)
        aug.binary_morphology_(ours, op, radius, method)
        np.testing.assert_array_equal(ours[0], ref, err_msg=f"{op} radius {radius} trial {trial}")


def test_erosion_keeps_the_border_like_bg2():
    # bg2 erodes as the complement of the complement's dilation with zero padding, so the
    # outside counts as foreground: a full volume stays full (scipy's default would empty it).
    mask = np.ones((1, 9, 10, 11), np.uint8)
    aug.binary_morphology_(mask, "erosion", 3.0)
    assert mask.all()


@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_label_components_match_skimage(shape):
    for seed, p in enumerate([0.03, 0.2, 0.35, 0.6]):
        mask = np.random.default_rng(seed).random(shape) < p
        ref = skimage_label(mask)  # connectivity=None: full, as acvl_utils calls it
        labels, sizes = aug.label_components(mask[None].astype(np.uint8))
        np.testing.assert_array_equal(labels, ref)
        np.testing.assert_array_equal(sizes, np.bincount(ref.ravel())[1:])


# --- the transforms with given params (deterministic) ----------------------------------------


def cascade_image(shape, labels, seed):
    """bg2's image after MoveSegAsOneHotToData: 2 image channels, then one-hot channels."""
    rng = np.random.default_rng(seed)
    seg = blobs(shape, seed=seed, count=3 * len(labels), labels=len(labels))
    onehot = np.stack([(seg == k + 1) for k in range(len(labels))]).astype(np.float32)
    image = rng.standard_normal((2, *shape)).astype(np.float32)
    return np.concatenate([image, onehot])


@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_seg_to_onehot_matches_bg2(shape):
    rng = np.random.default_rng(5)
    seg = np.stack([rng.integers(-1, 4, shape), rng.integers(-1, 6, shape)]).astype(np.int16)
    labels = [1, 2, 5, 3]
    image = rng.standard_normal((2, *shape)).astype(np.float32)
    ref = MoveSegAsOneHotToDataTransform(1, labels, True)(
        image=torch.from_numpy(image.copy()), segmentation=torch.from_numpy(seg.copy())
    )
    ours = aug.seg_to_onehot(seg, labels, 1)
    np.testing.assert_array_equal(ours, ref["image"][2:].numpy())
    np.testing.assert_array_equal(ref["segmentation"].numpy(), seg[:1])


def test_seg_to_onehot_rejects_a_missing_channel():
    with pytest.raises(ValueError, match="segmentation channel 1 does not exist"):
        aug.seg_to_onehot(np.zeros((1, 4, 5, 6), np.int16), [1, 2], 1)


@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_binary_operators_match_bg2(shape):
    rng = np.random.default_rng(2)
    labels = 3
    for trial in range(10):
        image = cascade_image(shape, range(labels), seed=trial)
        count = int(rng.integers(1, labels + 1))
        order = [int(c) for c in rng.permutation(labels)[:count]]
        ops = [str(o) for o in rng.choice(list(BG2_OPERATORS), count)]
        radii = [float(r) for r in rng.uniform(1, 8, count)]
        tr = ApplyRandomBinaryOperatorTransform(channel_idx=list(range(-labels, 0)))
        ref = tr._apply_to_image(
            torch.from_numpy(image.copy()),
            apply_to_channels=[c - labels for c in order],
            operators=[BG2_OPERATORS[o] for o in ops],
            strel_size=radii,
        ).numpy()
        ours = image[2:].copy()
        aug.binary_operators_(ours, order, ops, radii)
        np.testing.assert_array_equal(ours, ref[2:], err_msg=f"{order} {ops} {radii}")


@pytest.mark.parametrize("fill", [False, True])
@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_remove_component_matches_bg2(shape, fill, monkeypatch):
    rng = np.random.default_rng(8)
    labels = 3
    compared = 0
    for trial in range(10):
        image = cascade_image(shape, range(labels), seed=100 + trial)
        count = int(rng.integers(1, labels + 1))
        order = [int(c) for c in rng.permutation(labels)[:count]]
        picks = [float(u) for u in rng.random(count)]
        others = [float(u) for u in rng.random(count)]
        # bg2 picks with np.random.choice: per channel with candidates the component, then
        # (when it fills) the other class. Make each call take the element our uniform names.
        calls = []

        def choice(options, _calls=calls):
            j, is_other = divmod(len(_calls), 2) if fill else (len(_calls), 0)
            _calls.append(is_other)
            u = (others if is_other else picks)[j]
            return options[min(int(u * len(options)), len(options) - 1)]

        monkeypatch.setattr(bg2_rcc.np.random, "choice", choice)
        monkeypatch.setattr(bg2_rcc.np.random, "uniform", lambda: 0.0)
        tr = RemoveRandomConnectedComponentFromOneHotEncodingTransform(
            channel_idx=list(range(-labels, 0)),
            fill_with_other_class_p=1.0 if fill else 0.0,
            dont_do_if_covers_more_than_x_percent=0.15,
        )
        ref = tr._apply_to_image(
            torch.from_numpy(image.copy()), apply_to_channels=[c - labels for c in order]
        ).numpy()
        monkeypatch.undo()
        ours = image[2:].copy()
        aug.remove_component_(
            ours,
            order,
            picks,
            [0.0] * count,
            others,
            fill_with_other_class_p=1.0 if fill else 0.0,
            max_coverage=0.15,
        )
        # A channel without candidates takes no draw in bg2 but its uniforms in ours: compare
        # when every channel had candidates, so both sides used the same draws.
        if calls.count(0) == count:
            np.testing.assert_array_equal(ours, ref[2:], err_msg=f"trial {trial}")
            compared += 1
    assert compared >= 5


def test_remove_component_respects_the_coverage_limit():
    # One component of 20% of the volume, one of 1 voxel: only the small one may go.
    onehot = np.zeros((1, 10, 10, 10), np.float32)
    onehot[0, :2] = 1  # 200 voxels of 1000
    onehot[0, 9, 9, 9] = 1
    for pick in [0.0, 0.5, 0.99]:
        ours = onehot.copy()
        aug.remove_component_(ours, [0], [pick], [1.0], [0.0], max_coverage=0.15)
        assert ours[0, :2].all() and ours[0, 9, 9, 9] == 0
    ours = onehot.copy()
    aug.remove_component_(ours, [0], [0.0], [1.0], [0.0], max_coverage=0.2)  # 200 < 200: no
    assert ours[0, :2].all() and ours[0, 9, 9, 9] == 0


# --- the random transforms: statistics against bg2 -------------------------------------------

SAMPLES = 600
STATS_SHAPE = (20, 24, 24)
STATS_LABELS = 2


def stats_input():
    seg = blobs(STATS_SHAPE, seed=21, count=7, labels=STATS_LABELS)
    return np.stack([(seg == k + 1) for k in range(STATS_LABELS)]).astype(np.float32)


def changed_voxels(before, after):
    return int((before != after).sum())


def bg2_samples(transform, onehot):
    np.random.seed(1234)
    torch.manual_seed(1234)
    counts = []
    for _ in range(SAMPLES):
        out = transform(image=torch.from_numpy(onehot.copy()))["image"].numpy()
        counts.append(changed_voxels(onehot, out))
    return np.array(counts)


def our_samples(onehot, **kwargs):
    counts, draws = [], []
    for i in range(SAMPLES):
        out = onehot.copy()
        draws.append(aug.cascade_random_(out, seed=99, position=i, **kwargs))
        counts.append(changed_voxels(onehot, out))
    return np.array(counts), draws


def assert_same_rate(ours, ref, what):
    # Two binomial proportions; 4.5 standard errors (a chance failure ~1e-5 per run).
    p_ours, p_ref = np.mean(ours), np.mean(ref)
    pooled = (p_ours + p_ref) / 2
    se = np.sqrt(2 * pooled * (1 - pooled) / SAMPLES)
    print(f"[{what}] changed: patchfeed {p_ours:.3f}, bg2 {p_ref:.3f}")
    assert abs(p_ours - p_ref) < 4.5 * se + 1e-12, (what, p_ours, p_ref)


def assert_same_distribution(ours, ref, what):
    p = scipy_stats.ks_2samp(ours, ref).pvalue
    print(f"[{what}] KS p = {p:.3g}; medians {np.median(ours)} vs {np.median(ref)}")
    assert p > 1e-4, (what, p)


def test_binary_operator_statistics_match_bg2():
    onehot = stats_input()
    transform = RandomTransform(
        ApplyRandomBinaryOperatorTransform(
            channel_idx=list(range(-STATS_LABELS, 0)), strel_size=(1, 8), p_per_label=0.5
        ),
        apply_probability=0.4,
    )
    ref = bg2_samples(transform, onehot)
    ours, draws = our_samples(onehot, p_remove_component=0.0)
    assert_same_rate(ours > 0, ref > 0, "binary operator")
    assert_same_distribution(ours[ours > 0], ref[ref > 0], "binary operator changed voxels")
    # The draws themselves: bg2's get_parameters for the channel count, operators and radii.
    np.random.seed(77)
    torch.manual_seed(77)
    inner = transform.transform
    ref_ops, ref_radii, ref_counts = [], [], []
    for _ in range(SAMPLES):
        p = inner.get_parameters(image=torch.from_numpy(onehot))
        ref_counts.append(len(p["apply_to_channels"]))
        ref_ops += [o.__name__.split("_")[1] for o in p["operators"]]
        ref_radii += p["strel_size"]
    applied = [d for d in draws if d["binary_operator"]]
    our_counts = [len(d["operators"]) for d in applied]
    our_ops = [op for d in applied for _, op, _ in d["operators"]]
    our_radii = [r for d in applied for _, _, r in d["operators"]]
    assert_same_distribution(our_counts, ref_counts, "channels per sample")
    assert_same_distribution(our_radii, ref_radii, "strel radius")
    table = [[our_ops.count(o) for o in BG2_OPERATORS], [ref_ops.count(o) for o in BG2_OPERATORS]]
    p = scipy_stats.chi2_contingency(table).pvalue
    print(f"[operators] {table} chi2 p = {p:.3g}")
    assert p > 1e-4


def test_remove_component_statistics_match_bg2():
    onehot = stats_input()
    transform = RandomTransform(
        RemoveRandomConnectedComponentFromOneHotEncodingTransform(
            channel_idx=list(range(-STATS_LABELS, 0)),
            fill_with_other_class_p=0,
            dont_do_if_covers_more_than_x_percent=0.15,
            p_per_label=0.5,
        ),
        apply_probability=0.2,
    )
    ref = bg2_samples(transform, onehot)
    ours, _ = our_samples(onehot, p_binary_operator=0.0)
    assert_same_rate(ours > 0, ref > 0, "remove component")
    # Discrete sizes: compare the frequency of each removed-voxel count.
    values = sorted(set(ours[ours > 0]) | set(ref[ref > 0]))
    table = [[int((ours == v).sum()) for v in values], [int((ref == v).sum()) for v in values]]
    p = scipy_stats.chi2_contingency(table).pvalue
    print(f"[removed voxels] values {values} chi2 p = {p:.3g}")
    assert p > 1e-4


def test_nnunet_cascade_composition_statistics_match_bg2():
    # nnU-Net's two random steps one after the other, with its settings.
    onehot = stats_input()
    idx = list(range(-STATS_LABELS, 0))
    steps = [
        RandomTransform(
            ApplyRandomBinaryOperatorTransform(idx, strel_size=(1, 8), p_per_label=0.5), 0.4
        ),
        RandomTransform(
            RemoveRandomConnectedComponentFromOneHotEncodingTransform(idx, 0, 0.15, 0.5), 0.2
        ),
    ]

    ref = bg2_samples(ComposeTransforms(steps), onehot)
    ours, _ = our_samples(onehot)
    assert_same_rate(ours > 0, ref > 0, "cascade steps")
    assert_same_distribution(ours[ours > 0], ref[ref > 0], "cascade changed voxels")


# --- the whole pipeline against nnU-Net's own training transforms ----------------------------


def test_augmenter_cascade_output_layout():
    rng = np.random.default_rng(4)
    crop = (30, 31, 32)
    image = rng.standard_normal((2, *crop)).astype(np.float32)
    prev = blobs(crop, seed=3, count=6, labels=2)
    seg = np.stack([blobs(crop, seed=9, count=4, labels=3), prev])
    plain = aug.NnUNetAugmenter({"patch_size": (20, 20, 20)}, seed=5)
    cascade = aug.NnUNetAugmenter(
        {"patch_size": (20, 20, 20)}, seed=5, cascade_foreground_labels=[1, 2]
    )
    for i in range(6):
        want = plain(image, seg[:1].copy(), i)
        got = cascade(image, seg, i)
        assert got["image"].shape == (4, 20, 20, 20)
        assert got["segmentation"].shape == (1, 20, 20, 20)
        np.testing.assert_array_equal(got["image"][:2], want["image"])
        np.testing.assert_array_equal(got["segmentation"], want["segmentation"])
        assert set(np.unique(got["image"][2:])) <= {0.0, 1.0}
    with pytest.raises(ValueError, match="needs 2 channels"):
        cascade(image, seg[:1].copy(), 0)


@pytest.mark.parametrize("dummy_2d", [False, True], ids=["3d", "dummy2d"])
def test_augmenter_cascade_statistics_match_nnunet(dummy_2d):
    # nnU-Net's training transforms with is_cascaded=True against NnUNetAugmenter with the
    # cascade, on a case whose previous stage equals its ground truth: without the random
    # cascade steps the one-hot channels would equal (target == label) exactly, so the voxels
    # where they differ measure what those steps did, after the same spatial transform,
    # mirroring and label removal on both sides.
    from nnunetv2.training.nnUNetTrainer.nnUNetTrainer import nnUNetTrainer

    # nnU-Net's dummy 2D: the spatial transform per slice, rotations up to 180 degrees; the
    # cascade steps then see the 3-D patch again (balls, not disks).
    patch = (12, 24, 24) if dummy_2d else (24, 24, 24)
    angle = np.pi if dummy_2d else np.pi / 6
    crop = tuple(aug.crop_for(list(patch), angle, 0.7, dummy_2d))
    labels = [1, 2]
    prev = blobs(crop, seed=31, count=9, labels=2)
    seg = np.stack([prev, prev])
    image = np.random.default_rng(2).standard_normal((1, *crop)).astype(np.float32)
    transforms = nnUNetTrainer.get_training_transforms(
        patch, (-angle, angle), None, (0, 1, 2), dummy_2d, is_cascaded=True,
        foreground_labels=labels,
    )

    def perturbed(out_image, target):
        return sum(int((out_image[1 + k] != (target == lab)).sum()) for k, lab in enumerate(labels))

    np.random.seed(5)
    torch.manual_seed(5)
    ref = []
    for _ in range(SAMPLES):
        out = transforms(
            image=torch.from_numpy(image.copy()), segmentation=torch.from_numpy(seg.copy())
        )
        ref.append(perturbed(out["image"].numpy(), out["segmentation"][0].numpy()))
    augmenter = aug.NnUNetAugmenter(
        {"patch_size": patch, "max_angle": angle, "dummy_2d": dummy_2d},
        seed=8,
        cascade_foreground_labels=labels,
    )
    ours = []
    for i in range(SAMPLES):
        out = augmenter(image, seg, i)
        ours.append(perturbed(out["image"], out["segmentation"][0]))
    ours, ref = np.array(ours), np.array(ref)
    assert_same_rate(ours > 0, ref > 0, "pipeline cascade")
    assert_same_distribution(ours[ours > 0], ref[ref > 0], "pipeline cascade changed voxels")
