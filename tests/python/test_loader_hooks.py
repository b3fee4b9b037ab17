# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""What a torch DataLoader / MONAI user hooks into patchfeed.Loader: `batch_transform` (run
on every delivered batch, a MONAI transform included; its errors name the batch, which stays
undelivered) and the augmentation crop the loader works out itself from the output patch
(nnU-Net's initial patch size and need_to_pad, `patchfeed.augment.crop_for`)."""

from __future__ import annotations

import math

import numpy as np
import patchfeed
import pytest
import torch
from loader_testlib import take, write_dataset
from patchfeed.augment import crop_for


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return write_dataset(tmp_path_factory.mktemp("hooks"), [(1, 40, 36, 44), (1, 30, 40, 38)])


def make(folder, **kw):
    kw.setdefault("seed", 4)
    kw.setdefault("num_threads", 1)
    return patchfeed.Loader(folder, kw.pop("patch_size", (16, 16, 16)), 2, **kw)


# ---- batch_transform ---------------------------------------------------------------------


def test_batch_transform_sees_every_batch_and_its_result_is_delivered(folder):
    seen = []

    def transform(batch):
        seen.append(batch["image"].shape)
        return {"image": batch["image"] * 2 + 1, "seg": batch["seg"], "extra": batch["seg"] > 0}

    with make(folder) as plain, make(folder, batch_transform=transform) as hooked:
        for _ in range(4):
            want, got = plain.next_batch(), hooked.next_batch()
            assert torch.equal(got["image"], want["image"] * 2 + 1)
            assert torch.equal(got["seg"], want["seg"])
            assert torch.equal(got["extra"], want["seg"] > 0)
    assert seen == [torch.Size([2, 1, 16, 16, 16])] * 4


def test_a_monai_transform_runs_as_batch_transform(folder):
    monai = pytest.importorskip("monai")
    from monai.transforms import Compose, ScaleIntensityRanged

    transform = Compose([ScaleIntensityRanged(keys="image", a_min=-2.0, a_max=2.0, b_min=0.0,
                                              b_max=1.0, clip=True)])
    with make(folder) as plain, make(folder, batch_transform=transform) as hooked:
        want, got = plain.next_batch(), hooked.next_batch()
    expected = ((want["image"].clamp(-2, 2) + 2) / 4).numpy()
    np.testing.assert_allclose(np.asarray(got["image"]), expected, rtol=1e-6, atol=1e-6)
    assert monai.__version__


def test_batch_transform_error_names_the_batch_and_keeps_it(folder):
    calls = []

    def flaky(batch):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("augmentation exploded")
        return batch

    with make(folder, as_numpy=True) as ref:
        want = take(ref, 4)
    with make(folder, as_numpy=True, batch_transform=flaky) as loader:
        got = take(loader, 2)
        with pytest.raises(RuntimeError, match="exploded") as info:
            loader.next_batch()
        notes = getattr(info.value, "__notes__", [])
        assert any("batch 2 of epoch 0" in n for n in notes), notes
        assert loader.state_dict()["next_batch"] == 2  # undelivered
        assert loader.last_batch.batch_index == 1
        got += take(loader, 2)  # the same batch again, then on
    assert got == want


def test_batch_transform_must_be_callable(folder):
    with pytest.raises(TypeError, match="batch_transform must be callable"):
        make(folder, batch_transform=42)


# ---- the augmentation crop ---------------------------------------------------------------


def test_crop_for_is_nnunets_initial_patch_size():
    from nnunetv2.training.data_augmentation.compute_initial_patch_size import get_patch_size

    rng = np.random.default_rng(0)
    for _ in range(300):
        patch = [int(p) for p in rng.integers(1, 300, size=int(rng.integers(2, 4)))]
        angle = float(rng.choice([math.pi / 6, math.pi, math.pi / 12, rng.uniform(0, 3)]))
        want = get_patch_size(patch, (-angle, angle), (-angle, angle), (-angle, angle),
                              (0.85, 1.25))
        assert crop_for(patch, angle) == tuple(int(w) for w in want), (patch, angle)
    assert crop_for((128, 128, 128)) == (205, 205, 205)
    assert crop_for((40, 160, 160), math.pi, dummy_2d=True)[0] == 40
    with pytest.raises(ValueError, match="2-D or 3-D"):
        crop_for((64,))
    with pytest.raises(ValueError, match="positive"):
        crop_for((0, 64))


def test_loader_derives_the_crop_from_the_output_patch(folder):
    # The new spelling (patch_size is the output, no "patch_size" in augmentation) draws the
    # same batches as nnU-Net's spelling with the crop and need_to_pad given by hand.
    crop = list(crop_for((16, 16, 16)))
    pad = [c - 16 for c in crop]
    with make(folder, augmentation={}) as derived, \
         make(folder, patch_size=crop, need_to_pad=pad,
              augmentation={"patch_size": (16, 16, 16)}) as by_hand:
        assert derived.array_layout["image"][1] == (2, 1, 16, 16, 16)
        for _ in range(3):
            a, b = derived.next_batch(), by_hand.next_batch()
            assert torch.equal(a["image"], b["image"]) and torch.equal(a["seg"], b["seg"])
            assert derived.last_batch.samples == by_hand.last_batch.samples


def test_loader_derives_a_2d_slab_crop_on_3d_cases(folder):
    crop2 = list(crop_for((16, 16), math.pi))
    aug = {"max_angle": math.pi}
    with make(folder, patch_size=(16, 16), augmentation=aug) as derived, \
         make(folder, patch_size=[1, *crop2], need_to_pad=[0, *(c - 16 for c in crop2)],
              augmentation={**aug, "patch_size": (16, 16)}) as by_hand:
        a, b = derived.next_batch(), by_hand.next_batch()
        assert a["image"].shape == (2, 1, 16, 16)
        assert torch.equal(a["image"], b["image"]) and torch.equal(a["seg"], b["seg"])


def test_no_rotation_or_scaling_needs_no_larger_crop(folder):
    with make(folder, augmentation={"p_rotation": 0.0, "p_scaling": 0.0}) as derived, \
         make(folder, need_to_pad=[0, 0, 0],
              augmentation={"p_rotation": 0.0, "p_scaling": 0.0,
                            "patch_size": (16, 16, 16)}) as by_hand:
        a, b = derived.next_batch(), by_hand.next_batch()
        assert torch.equal(a["image"], b["image"])
        assert derived.last_batch.samples == by_hand.last_batch.samples
