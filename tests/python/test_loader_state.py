# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""patchfeed.Loader's position: batches depend only on (seed, epoch, batch index), so a
loader resumed from state_dict() returns the batches an uninterrupted one would; set_epoch,
len() and epoch boundaries in the finite modes."""

from __future__ import annotations

import collections

import patchfeed
import pytest
from loader_testlib import PATCH, take, write_dataset


@pytest.fixture(scope="module")
def dataset_dir(tmp_path_factory):
    return write_dataset(tmp_path_factory.mktemp("loader_state"))


def make_loader(folder, **kw):
    kw.setdefault("num_threads", 2)
    kw.setdefault("seed", 11)
    return patchfeed.Loader(folder, PATCH, kw.pop("batch_size", 2), **kw)


def test_same_seed_same_batches_whatever_the_threads(dataset_dir):
    with make_loader(dataset_dir, num_threads=1, ring_size=2) as a:
        want = take(a, 5)
    with make_loader(dataset_dir, num_threads=2, ring_size=4) as b:
        assert take(b, 5) == want
    with make_loader(dataset_dir, seed=12) as c:
        assert [r[2] for r in take(c, 5)] != [r[2] for r in want]


def test_resume_from_state_dict_infinite(dataset_dir):
    with make_loader(dataset_dir) as full:
        want = take(full, 9)
    with make_loader(dataset_dir) as first:
        assert take(first, 4) == want[:4]
        state = first.state_dict()
    assert state["next_batch"] == 4 and state["epoch"] == 0 and state["seed"] == 11
    with make_loader(dataset_dir) as resumed:
        resumed.load_state_dict(state)
        assert take(resumed, 5) == want[4:]


def test_resume_with_a_different_seed_rebuilds(dataset_dir):
    with make_loader(dataset_dir, seed=5) as full:
        want = take(full, 6)
        state = {**full.state_dict(), "next_batch": 3, "epoch": 0}
    with make_loader(dataset_dir, seed=99) as other:
        other.load_state_dict(state)
        assert other.state_dict()["seed"] == 5
        assert take(other, 3) == want[3:]


def test_resume_across_epochs_finite(dataset_dir):
    opts = {"epoch_mode": "without_replacement", "samples_per_epoch": 6}
    with make_loader(dataset_dir, **opts) as full:
        assert len(full) == 3
        want = take(full, 8)  # 3 batches, end, 3 batches, end
    assert want[3] is None and want[7] is None
    assert [r[:2] for r in want if r] == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    with make_loader(dataset_dir, **opts) as first:
        take(first, 5)
        state = first.state_dict()
    assert (state["epoch"], state["next_batch"]) == (1, 1)
    with make_loader(dataset_dir, **opts) as resumed:
        resumed.load_state_dict(state)
        assert take(resumed, 3) == want[5:]


def test_iteration_runs_one_epoch_and_set_epoch_moves(dataset_dir):
    opts = {"epoch_mode": "without_replacement"}
    with make_loader(dataset_dir, **opts) as ref:
        ref.set_epoch(2)
        epoch2 = take(ref, 2)
    with make_loader(dataset_dir, **opts) as loader:
        assert len(loader) == 2  # 4 cases, batch 2
        for epoch in range(3):
            loader.set_epoch(epoch)
            batches = [loader.last_batch for _ in loader]
            assert [b.batch_index for b in batches] == [0, 1]
            assert {b.epoch for b in batches} == {epoch}
            cases = collections.Counter(s.case_index for b in batches for s in b.samples)
            assert cases == {0: 1, 1: 1, 2: 1, 3: 1}  # a permutation of the cases
        loader.set_epoch(2)
        assert take(loader, 2) == epoch2


def test_infinite_loader_has_no_length(dataset_dir):
    with make_loader(dataset_dir) as loader, pytest.raises(TypeError, match="no length"):
        len(loader)


def test_state_dict_rejects_garbage(dataset_dir):
    with make_loader(dataset_dir) as loader:
        with pytest.raises(ValueError, match="missing"):
            loader.load_state_dict({"epoch": 0})
        with pytest.raises(ValueError):
            loader.load_state_dict({**loader.state_dict(), "next_batch": -1})
