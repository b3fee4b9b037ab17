# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Differential tests of patchfeed's intensity and label augmentations against
batchgeneratorsv2 0.3.5 (the transforms nnU-Net v2 trains with).

bg2 draws its parameters inside `get_parameters`; here each test builds that params dict
itself with fixed values, calls bg2's `_apply_to_image` / `_apply_to_segmentation` with it,
and calls patchfeed with the same values on the same input. Exact where the arithmetic is
exact (labels, masks, nearest-exact, brightness, noise with torch's own field, low-res);
otherwise a stated tolerance, and the observed maximum error is printed (pytest -s) and
asserted below the tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

bg2 = pytest.importorskip("batchgeneratorsv2")

from batchgeneratorsv2.transforms.intensity.brightness import (
    MultiplicativeBrightnessTransform,
)
from batchgeneratorsv2.transforms.intensity.contrast import (
    BGContrast,
    ContrastTransform,
)
from batchgeneratorsv2.transforms.intensity.gamma import GammaTransform
from batchgeneratorsv2.transforms.intensity.gaussian_noise import GaussianNoiseTransform
from batchgeneratorsv2.transforms.noise.gaussian_blur import (
    GaussianBlurTransform,
    _build_kernel,
    _compute_kernel_size,
)
from batchgeneratorsv2.transforms.spatial.low_resolution import (
    SimulateLowResolutionTransform,
)
from batchgeneratorsv2.transforms.utils.deep_supervision_downsampling import (
    DownsampleSegForDSTransform,
)
from batchgeneratorsv2.transforms.utils.nnunet_masking import MaskImageTransform
from batchgeneratorsv2.transforms.utils.remove_label import RemoveLabelTransform
from batchgeneratorsv2.transforms.utils.seg_to_regions import (
    ConvertSegmentationToRegionsTransform,
)
from patchfeed import _core

aug = _core.augment
torch.set_num_threads(1)

SHAPES = [(2, 19, 24, 29), (3, 40, 37)]  # 3D and 2D, odd sizes, multi-channel
IDS = ["3d", "2d"]


def image(shape, seed=0, offset=0.0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 3 + offset).astype(np.float32)


def seg(shape, seed=1, lo=-1, hi=5):
    rng = np.random.default_rng(seed)
    return rng.integers(lo, hi + 1, size=shape).astype(np.int16)


def report(name, ours, ref, atol, rtol=0.0):
    ours = np.asarray(ours, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    err = np.abs(ours - ref)
    print(
        f"[{name}] max abs err {err.max():.3g}, max rel err "
        f"{(err / np.maximum(np.abs(ref), 1e-30)).max():.3g} (atol {atol:g}, rtol {rtol:g})"
    )
    np.testing.assert_allclose(ours, ref, atol=atol, rtol=rtol)


# --- noise ----------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_gaussian_noise_matches_with_torch_field(shape):
    x = image(shape)
    c = shape[0]
    idx = torch.arange(c)
    sigma = 0.0731
    t = GaussianNoiseTransform((0, 0.1), 1, True)
    torch.manual_seed(7)
    ref = t._apply_to_image(
        torch.from_numpy(x.copy()),
        apply_mask=torch.ones(c, dtype=bool),
        apply_idx=idx,
        num_apply=c,
        sigmas=sigma,
    ).numpy()
    torch.manual_seed(7)
    field = torch.empty((c, *shape[1:])).normal_().numpy()
    ours = x.copy()
    aug.gaussian_noise_field(ours, list(range(c)), [sigma] * c, field)
    report("noise", ours, ref, atol=0)


def test_gaussian_noise_own_field_statistics():
    x = np.zeros((2, 64, 64, 64), np.float32)
    aug.gaussian_noise(x, [1], [0.05], seed=3)
    assert np.all(x[0] == 0)
    n = x[1].ravel() / 0.05
    assert abs(n.mean()) < 5 / np.sqrt(n.size)
    assert abs(n.std() - 1) < 0.005
    # Same seed, same field; another seed, another field.
    y = np.zeros_like(x)
    aug.gaussian_noise(y, [1], [0.05], seed=3)
    np.testing.assert_array_equal(x, y)
    aug.gaussian_noise(y, [1], [0.05], seed=4)
    assert not np.array_equal(x, y)


# --- blur -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sigma", [0.5, 0.5833, 0.58334, 0.75, 0.9166, 0.91667, 1.0, 2.3]
)
def test_blur_kernel_matches(sigma):
    assert len(aug.blur_kernel(sigma)) == _compute_kernel_size(sigma, truncate=6)
    report(
        f"kernel {sigma}",
        aug.blur_kernel(sigma),
        _build_kernel(sigma, truncate=6).numpy(),
        atol=2e-7,
    )


@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_gaussian_blur_matches(shape):
    x = image(shape, offset=10.0)
    c, dims = shape[0], len(shape) - 1
    apply = torch.zeros(c, dtype=bool)
    apply[0] = apply[-1] = True
    rng = np.random.default_rng(5)
    sigmas = [
        [float(s) for s in rng.uniform(0.5, 1.0, dims)] for _ in range(int(apply.sum()))
    ]
    sigmas[0][0] = 0.58  # k = 3 on one axis, to cover all kernel lengths
    t = GaussianBlurTransform((0.5, 1.0), False, False, 0.5)
    ref = t._apply_to_image(
        torch.from_numpy(x.copy()), apply_to_channel=apply, sigmas=sigmas
    ).numpy()
    ours = x.copy()
    aug.gaussian_blur(ours, [int(i) for i in np.where(apply)[0]], sigmas)
    # torch convolves with im2col/GEMM or mkldnn in its own summation order: a few ulp.
    report("blur", ours, ref, atol=0, rtol=2e-6)


# --- brightness, contrast -------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_brightness_matches(shape):
    x = image(shape)
    c = shape[0]
    mult = [0.8 + 0.1 * i for i in range(c)]
    t = MultiplicativeBrightnessTransform(
        BGContrast((0.75, 1.25)).sample_contrast, False, 1
    )
    ref = t._apply_to_image(
        torch.from_numpy(x.copy()),
        apply_to_channel=torch.arange(c),
        multipliers=torch.Tensor(mult),
    ).numpy()
    ours = x.copy()
    aug.brightness(ours, list(range(c)), mult)
    report("brightness", ours, ref, atol=0)


@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
@pytest.mark.parametrize("preserve", [True, False])
def test_contrast_matches(shape, preserve):
    x = image(shape, offset=5.0)
    c = shape[0]
    factors = [0.77 + 0.2 * i for i in range(c)]
    sel = list(range(c))[::-1]  # order of the list must not matter
    t = ContrastTransform(BGContrast((0.75, 1.25)).sample_contrast, preserve, False, 1)
    ref = t._apply_to_image(
        torch.from_numpy(x.copy()),
        apply_to_channel=torch.tensor(sel),
        multipliers=torch.tensor(factors, dtype=torch.float32),
    ).numpy()
    ours = x.copy()
    aug.contrast(ours, sel, factors, preserve)
    # The mean differs from torch's float reduction by ~1 ulp: outputs by a few ulp of |x|.
    report("contrast", ours, ref, atol=1e-7 * np.abs(x).max())


# --- gamma ----------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
@pytest.mark.parametrize(
    "invert,retain", [(True, True), (False, True), (False, False), (True, False)]
)
def test_gamma_matches(shape, invert, retain):
    x = image(shape, offset=2.0)
    c = shape[0]
    gammas = [0.7 + 0.35 * i for i in range(c)]
    t = GammaTransform(
        BGContrast((0.7, 1.5)).sample_contrast, float(invert), False, 1, float(retain)
    )
    ref = t._apply_to_image(
        torch.from_numpy(x.copy()),
        apply_to_channel=torch.arange(c),
        retain_stats=torch.full((c,), retain),
        invert_image=torch.full((c,), invert),
        gamma=torch.tensor(gammas, dtype=torch.float32),
    ).numpy()
    ours = x.copy()
    aug.gamma(ours, list(range(c)), gammas, [invert] * c, [retain] * c)
    # Sleef's vectorised powf vs glibc powf (<= 1 ulp) and float vs double statistics.
    report("gamma", ours, ref, atol=5e-7 * np.abs(x).max())


# --- low resolution -------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
@pytest.mark.parametrize("zoom", [0.5, 0.6123, 0.77, 0.999, 1.0])
def test_low_resolution_matches(shape, zoom):
    x = image(shape)
    c, dims = shape[0], len(shape) - 1
    sel = [0, c - 1]
    zooms = [[zoom] * dims, [min(1.0, zoom + 0.13)] * dims]
    if dims == 3:
        zooms[1][0] = 1.0  # ignore_axes=(0,) as in dummy 2D
    t = SimulateLowResolutionTransform((0.5, 1), False, True, None, None, 0.5)
    ref = t._apply_to_image(
        torch.from_numpy(x.copy()),
        apply_to_channel=torch.tensor(sel),
        scales=torch.Tensor(zooms),
    ).numpy()
    ours = x.copy()
    aug.low_resolution(ours, sel, zooms)
    # 3D (trilinear, also nnU-Net's dummy 2D) is bit-exact: same fused multiply-adds as ATen's
    # AVX2 kernel. 2D bilinear differs by <= 1 ulp: ATen's 2D kernel groups the float ops in
    # an order we have not reproduced.
    report(
        f"lowres {zoom} {len(shape) - 1}d",
        ours,
        ref,
        atol=0 if dims == 3 else 2.5e-7 * np.abs(x).max(),
    )


# --- label transforms -----------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_mask_image_matches(shape):
    x = image(shape)
    s = seg((1, *shape[1:]))
    t = MaskImageTransform([0, shape[0] - 1])
    ref = t.apply(
        {"image": torch.from_numpy(x.copy()), "segmentation": torch.from_numpy(s)}
    )["image"].numpy()
    ours = x.copy()
    aug.mask_image(ours, s, [0, shape[0] - 1])
    np.testing.assert_array_equal(ours, ref)


@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_remove_label_matches(shape):
    s = seg((2, *shape[1:]))
    ref = (
        RemoveLabelTransform(-1, 0)
        ._apply_to_segmentation(torch.from_numpy(s.copy()))
        .numpy()
    )
    ours = s.copy()
    aug.remove_label(ours)
    np.testing.assert_array_equal(ours, ref)
    assert ours.min() >= 0


@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_regions_match(shape):
    s = seg((1, *shape[1:]), lo=0, hi=4)
    regions = [[1, 2, 3], [2, 3], 3, [4]]
    ref = (
        ConvertSegmentationToRegionsTransform(regions)
        ._apply_to_segmentation(torch.from_numpy(s))
        .numpy()
    )
    ours = aug.segmentation_to_regions(
        s, [r if isinstance(r, list) else [r] for r in regions]
    )
    assert ours.dtype == np.bool_ and ours.shape == ref.shape
    np.testing.assert_array_equal(ours, ref)


@pytest.mark.parametrize(
    "shape", [(1, 128, 96, 80), (1, 19, 24, 29), (2, 40, 37), (1, 7, 5, 6)]
)
def test_downsample_seg_for_ds_matches(shape):
    s = seg(shape)
    dims = len(shape) - 1
    scales = [
        [1.0] * dims,
        [0.5] * dims,
        [0.25] * dims,
        [0.125] * dims,
        [1.0] + [0.5] * (dims - 1),
        [0.3] * dims,
    ]
    ref = DownsampleSegForDSTransform(
        [tuple(v) for v in scales]
    )._apply_to_segmentation(torch.from_numpy(s))
    ours = aug.downsample_seg_for_ds(s, scales)
    assert ours[0] is s  # full size passes through
    for o, r in zip(ours, ref):
        assert o.dtype == np.int16 and o.shape == tuple(r.shape)
        np.testing.assert_array_equal(o, r.numpy())


def test_downsample_empty_axis_is_an_error_in_both():
    s = seg((1, 7, 5, 3))
    with pytest.raises(RuntimeError):
        DownsampleSegForDSTransform([0.125])._apply_to_segmentation(torch.from_numpy(s))
    with pytest.raises(ValueError):
        aug.downsample_seg_for_ds(s, [[0.125]])


def test_downsample_bool_regions():
    s = seg((1, 33, 20, 17), lo=0, hi=3)
    regions = aug.segmentation_to_regions(s, [[1, 2], [2]])
    ref = DownsampleSegForDSTransform([1, 0.5, 0.25])._apply_to_segmentation(
        torch.from_numpy(regions)
    )
    ours = aug.downsample_seg_for_ds(regions, [[1.0], [0.5], [0.25]])
    for o, r in zip(ours, ref):
        assert o.dtype == np.bool_
        np.testing.assert_array_equal(o, r.numpy())


def test_in_place_functions_reject_copies():
    with pytest.raises(TypeError):
        aug.brightness(np.zeros((1, 4, 4, 4), np.float64), [0], [1.0])
    with pytest.raises(TypeError):
        aug.remove_label(np.zeros((1, 4, 4), np.int32))
    with pytest.raises(ValueError):
        aug.gaussian_blur(np.zeros((1, 2, 8, 8), np.float32), [0], [[1.0, 1.0, 1.0]])
