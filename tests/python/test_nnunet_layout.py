# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""patchfeed's nnU-Net 2.8 chunk/block rule against nnU-Net's own `comp_blosc2_params`.

Differential: random image shapes (3-D and 2-D configurations), patch sizes and item sizes go
through both; chunks and blocks must be identical, and both must reject the same inputs.
Skipped when nnunetv2 is not installed.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from patchfeed import _core

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    nnunet_dataset = pytest.importorskip("nnunetv2.training.dataloading.nnunet_dataset")

comp_blosc2_params = nnunet_dataset.comp_blosc2_params


def _nnunet(shape, patch, itemsize):
    """(chunks, blocks) from nnU-Net, or None where it raises ValueError."""
    try:
        blocks, chunks = comp_blosc2_params(shape, patch, itemsize)
    except ValueError:
        return None
    return tuple(chunks), tuple(blocks)


def _ours(shape, patch, itemsize):
    try:
        chunks, blocks = _core.nnunet_chunk_block_shapes(list(shape), list(patch), itemsize)
    except ValueError:
        return None
    return tuple(chunks), tuple(blocks)


def _random_case(rng: np.random.Generator):
    kind = rng.integers(0, 4)
    itemsize = int(rng.choice([1, 2, 4, 8, 4, 2, 16]))
    c = int(rng.integers(1, 5))
    if kind == 0:  # typical 3-D fullres case
        spatial = [int(v) for v in rng.integers(20, 700, size=3)]
        patch = [int(rng.choice([32, 48, 64, 80, 96, 112, 128, 160, 192, 224])) for _ in range(3)]
        return (c, *spatial), patch, itemsize
    if kind == 1:  # 2-D configuration: x = 1, 2-value patch
        spatial = [1] + [int(v) for v in rng.integers(16, 1500, size=2)]
        patch = [int(v) for v in rng.integers(16, 1024, size=2)]
        return (c, *spatial), patch, itemsize
    if kind == 2:  # anything small, including odd sizes and patches larger than the image
        spatial = [int(v) for v in rng.integers(1, 80, size=3)]
        npatch = int(rng.choice([2, 3]))
        patch = [int(v) for v in rng.integers(1, 100, size=npatch)]
        return (c, *spatial), patch, itemsize
    # 3-D patches with singleton axes, large images and large items
    spatial = [int(v) for v in rng.integers(1, 3000, size=3)]
    patch = [int(rng.choice([1, 1, 7, 50, 128, 333, 1000])) for _ in range(3)]
    return (c, *spatial), patch, int(rng.choice([1, 4, 64, 1024, 65536, 131072]))


@pytest.mark.parametrize("seed", range(8))
def test_random_cases_match_nnunet(seed):
    rng = np.random.default_rng(seed)
    for _ in range(500):
        shape, patch, itemsize = _random_case(rng)
        assert _ours(shape, patch, itemsize) == _nnunet(shape, patch, itemsize), (
            shape, patch, itemsize)


@pytest.mark.parametrize(
    "shape,patch,itemsize",
    [
        ((1, 256, 256, 256), (128, 128, 128), 4),
        ((1, 256, 256, 256), (128, 128, 128), 2),
        ((2, 123, 423, 645), (96, 160, 160), 4),
        ((4, 1, 512, 512), (512, 512), 4),
        ((1, 300, 300, 300), (64, 1, 64), 8),
        ((1, 7, 9, 11), (3, 5, 7), 16),
        ((1, 1, 64, 64), (64, 64), 131072),
        ((1, 2**40, 2**40, 2**40), (2**40, 2**40, 2**40), 8),
    ],
)
def test_known_cases_match_nnunet(shape, patch, itemsize):
    assert _ours(shape, patch, itemsize) == _nnunet(shape, patch, itemsize)


@pytest.mark.parametrize(
    "shape,patch,itemsize",
    [
        ((1, 1, 64, 64), (64, 64), 131073),  # one item exceeds the 128 KiB block cap
        ((1, 2, 3), (4, 4, 4), 4),
        ((1, 0, 2, 2), (2, 2, 2), 4),
        ((1, 2, 2, 2), (2, 0), 4),
        ((1, 2, 2, 2), (2, 2, 2, 2), 4),
        ((1, 2, 2, 2), (2, 2, 2), 0),
    ],
)
def test_rejects_what_nnunet_rejects(shape, patch, itemsize):
    assert _nnunet(shape, patch, itemsize) is None
    with pytest.raises(ValueError):
        _core.nnunet_chunk_block_shapes(list(shape), list(patch), itemsize)
