# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""patchfeed on a folder nnU-Net itself planned and preprocessed: nothing is written into it
(an index file there made nnU-Net refuse to train), forced-foreground samples come from nnU-Net's
own class_locations, and indexes patchfeed must build go to the cache folder."""

from __future__ import annotations

import pickle

import numpy as np
import patchfeed
import pytest
from loader_testlib import write_dataset
from nnunet_testlib import listing, nnunet_dataset, preprocessed


@pytest.fixture(scope="module")
def nnunet_root():
    return nnunet_dataset()


@pytest.mark.parametrize("configuration,patch", [("3d_fullres", (40, 40, 40)),
                                                 ("2d", (1, 40, 40))])
def test_the_preprocessed_folder_stays_untouched(nnunet_root, tmp_path, monkeypatch,
                                                 configuration, patch):
    monkeypatch.setenv("PATCHFEED_CACHE_DIR", str(tmp_path / "cache"))
    base = preprocessed(nnunet_root, configuration).parent
    before = listing(base)
    loader = patchfeed.Loader(str(preprocessed(nnunet_root, configuration)), patch, 4, seed=3,
                              oversample_foreground=0.5, as_numpy=True)
    for _, _ in zip(range(5), loader):
        pass
    loader.close()
    assert listing(base) == before
    # class_locations were used: nothing had to be built, so nothing was cached either.
    assert not (tmp_path / "cache").exists()


def test_forced_samples_centre_on_nnunet_class_locations(nnunet_root):
    folder = preprocessed(nnunet_root)
    patch = (24, 24, 24)
    loader = patchfeed.Loader(str(folder), patch, 4, seed=0, oversample_foreground=1.0,
                              as_numpy=True)
    ids = loader.dataset.case_ids
    centres = set()
    for _, _ in zip(range(10), loader):
        for s in loader.last_batch.samples:
            assert s.forced_foreground
            cid = ids[s.case_index]
            with open(folder / f"{cid}.pkl", "rb") as f:
                locations = pickle.load(f)["class_locations"]
            rows = np.asarray(locations[list(locations)[s.foreground_class]])[:, 1:]
            # nnU-Net's rule: corner = max(lower bound, voxel - patch // 2); the lower bound
            # is 0 here (no need_to_pad, patches smaller than the cases).
            assert loader.array_layout["image"][1][2:] == patch
            hits = [r for r in rows
                    if all(b == max(0, v - p // 2) for b, v, p in zip(s.box_start, r, patch))]
            assert hits, (cid, s)
            centres.add((cid, s.box_start))
    assert len(centres) > 10
    loader.close()


def test_a_built_index_goes_to_the_cache_folder(tmp_path, monkeypatch):
    data = write_dataset(tmp_path / "data")
    monkeypatch.setenv("PATCHFEED_CACHE_DIR", str(tmp_path / "cache"))
    before = listing(data)
    loader = patchfeed.Loader(str(data), (16, 16, 16), 2, seed=0, oversample_foreground=0.5,
                              as_numpy=True)
    next(iter(loader))
    loader.close()
    assert listing(data) == before
    cached = sorted(p.name for p in (tmp_path / "cache" / "fgindex").iterdir())
    assert len(cached) == len(loader.dataset.case_ids), cached
    assert all(name.endswith(".fgindex") and "_seg.b2nd." in name for name in cached)
    # A second loader loads them instead of building (their files stay as they are).
    stamps = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "cache" / "fgindex").iterdir()}
    patchfeed.Loader(str(data), (16, 16, 16), 2, seed=0, oversample_foreground=0.5).close()
    assert stamps == {p.name: p.stat().st_mtime_ns
                      for p in (tmp_path / "cache" / "fgindex").iterdir()}
