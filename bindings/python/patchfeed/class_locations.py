# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""nnU-Net's `class_locations` as the loader's foreground indexes.

nnU-Net's preprocessing stores, in each case's `<id>.pkl`, the voxels it samples foreground
patches from: `properties["class_locations"]`, a dict from a label (or a region's tuple of
labels, or the annotated-classes key `(-1, *labels)` with an ignore label) to an (n, 4) array of
rows `[0, z, y, x]`. Using them instead of building an index means the loader samples from the
very voxels nnU-Net does, and writes nothing anywhere.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from patchfeed import _core
from patchfeed.frames import open_array


def label_set(key: Any) -> list[int]:
    """A class_locations key (a label, or a tuple of labels) as the labels it collects."""
    if isinstance(key, (tuple, list)):
        return [int(k) for k in key]
    return [int(key)]


def index_from_locations(locations: Mapping[Any, Any], keys: Sequence[Any],
                         spatial_shape: Sequence[int]) -> _core.ForegroundIndex:
    """One case's index over `keys` (a key the case lacks has no voxels)."""
    coords = []
    for key in keys:
        rows = locations.get(key)
        rows = np.zeros((0, len(spatial_shape) + 1), np.int64) if rows is None else rows
        coords.append(np.asarray(rows, dtype=np.int64).reshape(-1, len(spatial_shape) + 1))
    return _core.ForegroundIndex.from_locations(
        list(spatial_shape), [label_set(k) for k in keys], coords, len(spatial_shape) + 1)


def read_case_locations(pkl_path: str) -> dict:
    with open(pkl_path, "rb") as f:
        properties = pickle.load(f)  # nnU-Net's own file, as nnU-Net reads it
    return properties["class_locations"]


def nnunet_indexes(folder: str, case_ids: Sequence[str], seg_paths: Sequence[str],
                   keys: Sequence[Any] | None = None,
                   io: str = "mmap") -> list[_core.ForegroundIndex | None] | None:
    """The indexes of every case from `<folder>/<id>.pkl`, or None when a case has no .pkl (the
    loader then builds its own). `keys` default: the first case's class_locations keys, in
    nnU-Net's order. A case whose label map cannot be opened gets None: the loader opens it
    again and reports it with every other case it cannot use (or leaves them out)."""
    pkls = [os.path.join(folder, f"{cid}.pkl") for cid in case_ids]
    if not pkls or not all(os.path.isfile(p) for p in pkls):
        return None
    indexes = []
    for pkl, seg in zip(pkls, seg_paths):
        locations = read_case_locations(pkl)
        if keys is None:
            keys = list(locations.keys())
        try:
            shape = open_array(seg, io=io).shape[1:]  # (1, *spatial)
        except (OSError, ValueError):
            indexes.append(None)
            continue
        indexes.append(index_from_locations(locations, keys, shape))
    return indexes
