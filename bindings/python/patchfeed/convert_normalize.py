# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Intensity normalisation for `patchfeed convert --normalize` (patchfeed/convert.py).

The schemes are nnU-Net 2.8's (`nnunetv2/preprocessing/normalization/
default_normalization_schemes.py`), computed with the same NumPy operations in the same dtype,
so a case converted here holds the values nnU-Net's class gives for the same array:

  * "none": the raw intensities (the default);
  * "zscore": per case and channel, (x - mean) / max(std, eps) (ZScoreNormalization);
  * "zscore-nonzero": the same inside the nonzero mask only (ZScoreNormalization with
    use_mask_for_norm=True). nnU-Net's mask is `seg >= 0` of its cropped case, where the
    segmentation was set to -1 at label-0 voxels outside the nonzero region (any channel
    nonzero, holes filled: create_nonzero_mask). So the mask here is that region plus the
    voxels labelled > 0, and voxels outside it keep their value, which is 0;
  * "ct": clip to the dataset's 0.5/99.5 percentiles of foreground (label > 0) voxels, then
    (x - mean) / max(std, eps) with the dataset's foreground mean and std (CTNormalization;
    the statistics as DatasetFingerprintExtractor computes them, `CTStatistics`);
  * "rescale": per case and channel, (x - min) / max(max - min, eps) (RescaleTo01Normalization).

eps is 1e-8, or 1e-4 for float16, as in nnU-Net. Images must be a float dtype (nnU-Net
normalises float32). Differences from nnU-Net's pipeline: nothing is cropped to the nonzero
bounding box, so label > 0 voxels outside that box (where every channel is 0) count for the
masked z-score and the CT statistics here, while nnU-Net crops them away; and where a case
holds NaN or Inf (written only with --allow-nonfinite) the statistics are taken over its finite
voxels, which nnU-Net refuses to handle.
"""

from __future__ import annotations

import numpy as np

from patchfeed.convert_inputs import ConvertError

SCHEMES = ("none", "zscore", "zscore-nonzero", "ct", "rescale")
# DatasetFingerprintExtractor's num_foreground_voxels_for_intensitystats and sampling seed.
CT_FOREGROUND_SAMPLES = 10e7
CT_SEED = 1234


def _eps(dtype: np.dtype) -> float:
    return 1e-4 if dtype == np.float16 else 1e-8


def nonzero_mask(image: np.ndarray) -> np.ndarray:
    """nnU-Net's create_nonzero_mask of a (C, *spatial) image: voxels where any channel is
    nonzero, holes filled."""
    try:
        from scipy.ndimage import binary_fill_holes
    except ImportError:
        raise ImportError("normalize='zscore-nonzero' fills the nonzero mask's holes as nnU-Net "
                          "does, with scipy: pip install scipy") from None
    mask = image[0] != 0
    for channel in image[1:]:
        mask |= channel != 0
    return binary_fill_holes(mask)


def zscore_mask(image: np.ndarray, label: np.ndarray | None) -> np.ndarray:
    """Where "zscore-nonzero" normalises: nnU-Net's `seg >= 0` after it set label-0 voxels
    outside the nonzero region to -1, i.e. the nonzero region and the voxels labelled > 0."""
    mask = nonzero_mask(image)
    if label is None:
        return mask
    seg = label[0]
    return (seg > 0) | ((seg == 0) & mask)


def normalize_case(image: np.ndarray, label: np.ndarray | None, scheme: str,
                   ct_channels: list[dict[str, float]] | None,
                   finite_only: bool) -> list[dict[str, float]] | None:
    """Normalises the float (C, *spatial) `image` in place, channel by channel, and returns
    each channel's parameters for the manifest (None for "none" and "ct", whose parameters
    are the dataset's). `finite_only`: take statistics over finite voxels (the case holds
    NaN or Inf)."""
    if scheme == "none":
        return None
    # NaN or Inf that the arithmetic makes are counted and refused by convert, so NumPy's
    # warnings about them would only repeat that.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return _normalize(image, label, scheme, ct_channels, finite_only)


def _normalize(image: np.ndarray, label: np.ndarray | None, scheme: str,
               ct_channels: list[dict[str, float]] | None,
               finite_only: bool) -> list[dict[str, float]] | None:
    eps = _eps(image.dtype)
    mask = zscore_mask(image, label) if scheme == "zscore-nonzero" else None
    params = []
    for c, x in enumerate(image):  # x is a view: the channel changes in place
        if scheme == "ct":
            st = ct_channels[c]
            np.clip(x, st["percentile_00_5"], st["percentile_99_5"], out=x)
            x -= st["mean"]
            x /= max(st["std"], eps)
            continue
        where = np.isfinite(x) if finite_only else None
        if mask is not None:
            where = mask if where is None else mask & where
        values = x if where is None else x[where]
        if values.size == 0:  # an empty mask, or no finite voxel: nothing to normalise
            params.append({})
            continue
        if scheme == "rescale":
            low = values.min()
            x -= low
            high = x.max() if where is None else x[where].max()
            x /= np.clip(high, a_min=eps, a_max=None)
            params.append({"min": float(low), "max_minus_min": float(high)})
            continue
        mean, std = values.mean(), values.std()
        if mask is None:
            x -= mean
            x /= max(std, eps)
        else:
            x[mask] = (x[mask] - mean) / max(std, eps)
        params.append({"mean": float(mean), "std": float(std)})
    return params


class CTStatistics:
    """The dataset's foreground intensity statistics per channel, as nnU-Net's
    DatasetFingerprintExtractor computes them: from each case (in case order) it draws
    `total // cases` foreground voxels per channel with replacement, with a generator seeded
    1234 for every case, and takes the percentiles, mean and std of all draws together. The
    draws are kept in memory: `total` values per channel (1e8 float32 by default, 400 MB)."""

    def __init__(self, num_cases: int, total: float | None = None) -> None:
        self.per_case = int((CT_FOREGROUND_SAMPLES if total is None else total) // num_cases)
        self._draws: list[list[np.ndarray]] = []

    def add(self, image: np.ndarray, label: np.ndarray) -> None:
        """Draws one case's foreground voxels (label > 0; finite ones: NaN has no place in a
        percentile)."""
        if not self._draws:
            self._draws = [[] for _ in range(len(image))]
        rs = np.random.RandomState(CT_SEED)
        foreground = label[0] > 0
        for c, channel in enumerate(image):
            values = channel[foreground]
            values = values[np.isfinite(values)]
            # nnU-Net appends an empty list for a case without foreground, which makes the
            # concatenation float64; np.empty(0) does the same.
            self._draws[c].append(rs.choice(values, self.per_case, replace=True)
                                  if values.size else np.empty(0))

    def result(self) -> list[dict[str, float]]:
        out = []
        for c, draws in enumerate(self._draws):
            values = np.concatenate(draws)
            if values.size == 0:
                raise ConvertError(f"normalize='ct' needs foreground voxels (label > 0) and "
                                   f"channel {c} has none in any case")
            p005, median, p995 = np.percentile(values, np.array((0.5, 50.0, 99.5)))
            out.append({"mean": float(np.mean(values)), "std": float(np.std(values)),
                        "median": float(median), "min": float(np.min(values)),
                        "max": float(np.max(values)), "percentile_00_5": float(p005),
                        "percentile_99_5": float(p995)})
        return out
