# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""A small dataset preprocessed by nnU-Net itself, for the tests that compare with nnU-Net.

`nnunet_dataset()` writes a synthetic NIfTI dataset (Dataset901_Tiny: 6 CT-like cases of about
52^3 voxels with two nested labels) and runs nnU-Net's own `nnUNetv2_plan_and_preprocess` on it
for the 3d_fullres and 2d configurations, and a twin with regions and an ignore label
(Dataset902_TinyRegions, 3d_fullres). The result is cached in the build folder
(`$PATCHFEED_BUILD_DIR/nnunet_cache`), keyed by this file's generator version, so only the first
test session pays the ~30 s of preprocessing.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

GENERATOR_VERSION = 2  # bump when the generated data or the preprocessing call changes
DATASET = "Dataset901_Tiny"
# The same cases with nnU-Net's regions (whole = labels 1 and 2, core = 2) and an ignore label
# (3, on a few slices of each case), preprocessed for 3d_fullres only.
REGIONS_DATASET = "Dataset902_TinyRegions"


def _cache_root() -> pathlib.Path:
    build = os.environ.get("PATCHFEED_BUILD_DIR")
    base = pathlib.Path(build) if build else pathlib.Path(__file__).resolve().parents[2] / "build"
    return base / "nnunet_cache" / f"v{GENERATOR_VERSION}"


def _write_raw(root: pathlib.Path, name: str = DATASET) -> None:
    import nibabel as nib

    regions = name == REGIONS_DATASET
    folder = root / name
    (folder / "imagesTr").mkdir(parents=True, exist_ok=True)
    (folder / "labelsTr").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for i in range(6):
        shape = (48 + 4 * (i % 3), 56, 52 + 4 * (i % 2))
        z, y, x = np.meshgrid(*[np.arange(s) for s in shape], indexing="ij")
        c = [s / 2 + rng.integers(-5, 5) for s in shape]
        d = np.sqrt((z - c[0]) ** 2 + (y - c[1]) ** 2 + (x - c[2]) ** 2)
        seg = np.zeros(shape, np.uint8)
        seg[d < 12] = 1
        seg[d < 6] = 2
        if regions:
            seg[:, :, 10:13] = 3  # the ignore label
        img = (100 + 50 * seg + rng.normal(0, 10, shape)).astype(np.float32)
        affine = np.eye(4)
        nib.save(nib.Nifti1Image(img, affine), folder / "imagesTr" / f"tiny_{i:03d}_0000.nii.gz")
        nib.save(nib.Nifti1Image(seg, affine), folder / "labelsTr" / f"tiny_{i:03d}.nii.gz")
    labels = {"background": 0, "outer": 1, "inner": 2}
    if regions:
        labels = {"background": 0, "whole": [1, 2], "core": [2], "ignore": 3}
    meta = {"channel_names": {"0": "CT"}, "labels": labels, "numTraining": 6,
            "file_ending": ".nii.gz"}
    if regions:
        meta["regions_class_order"] = [1, 2]
    (folder / "dataset.json").write_text(json.dumps(meta))


def nnunet_env(root: pathlib.Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(nnUNet_raw=str(root / "raw"), nnUNet_preprocessed=str(root / "preprocessed"),
               nnUNet_results=str(root / "results"))
    return env


def nnunet_dataset() -> pathlib.Path:
    """The root holding raw/, preprocessed/ and results/ of Dataset901_Tiny."""
    pytest.importorskip("nnunetv2", reason="nnunetv2 is not installed (tools/install_deps.sh "
                                           "--with-tests installs it)")
    root = _cache_root()
    done = root / "done"
    if done.exists():
        return root
    if root.exists():
        shutil.rmtree(root)
    _write_raw(root / "raw")
    _write_raw(root / "raw", REGIONS_DATASET)
    env = nnunet_env(root)
    for dataset_id, configurations in (("901", ["3d_fullres", "2d"]), ("902", ["3d_fullres"])):
        cmd = [sys.executable, "-c",
               "from nnunetv2.experiment_planning.plan_and_preprocess_entrypoints import "
               "plan_and_preprocess_entry; plan_and_preprocess_entry()",
               "-d", dataset_id, "-c", *configurations, "-np", "2", "--verify_dataset_integrity"]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"nnUNetv2_plan_and_preprocess failed:\n{proc.stdout[-3000:]}\n"
                               f"{proc.stderr[-3000:]}")
    done.write_text("ok")
    return root


def preprocessed(root: pathlib.Path, configuration: str = "3d_fullres",
                 dataset: str = DATASET) -> pathlib.Path:
    return root / "preprocessed" / dataset / f"nnUNetPlans_{configuration}"


def listing(folder: pathlib.Path) -> dict[str, int]:
    """Every file below `folder` with its size."""
    return {str(p.relative_to(folder)): p.stat().st_size
            for p in sorted(folder.rglob("*")) if p.is_file()}


def make_trainer(root: pathlib.Path, configuration: str, dataset: str = DATASET,
                 trainer_class: type | None = None):
    """A trainer for `dataset` as nnUNetv2_train builds it (fold 0, CPU), nnUNetTrainerPatchfeed
    unless `trainer_class` is given."""
    import torch

    if trainer_class is None:
        from patchfeed.nnunet import nnUNetTrainerPatchfeed as trainer_class

    base = root / "preprocessed" / dataset
    plans = json.loads((base / "nnUNetPlans.json").read_text())
    dataset_json = json.loads((base / "dataset.json").read_text())
    plans["continue_training"] = False  # as nnUNetv2_train's get_trainer_from_args sets it
    trainer = trainer_class(plans, configuration, 0, dataset_json, device=torch.device("cpu"))
    trainer._set_batch_size_and_oversample()
    return trainer


def use_nnunet_dataset(nnunet_root: pathlib.Path, tmp_path: pathlib.Path, monkeypatch
                       ) -> pathlib.Path:
    """nnU-Net's environment for a test on the cached datasets (results below tmp_path), with
    the fold split nnU-Net's first training writes; returns `nnunet_root`."""
    monkeypatch.setenv("nnUNet_raw", str(nnunet_root / "raw"))
    monkeypatch.setenv("nnUNet_preprocessed", str(nnunet_root / "preprocessed"))
    monkeypatch.setenv("nnUNet_results", str(tmp_path / "results"))
    monkeypatch.setenv("PATCHFEED_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("nnUNet_n_proc_DA", "2")
    for dataset in (DATASET, REGIONS_DATASET):
        base = nnunet_root / "preprocessed" / dataset
        splits = base / "splits_final.json"
        if not splits.exists():  # what nnU-Net's first training writes; made once for all tests
            from nnunetv2.utilities.crossval_split import generate_crossval_split

            ids = sorted(p.name[: -len(".pkl")]
                         for p in preprocessed(nnunet_root, dataset=dataset).glob("*.pkl"))
            splits.write_text(json.dumps(generate_crossval_split(ids, seed=12345, n_splits=5)))
    return nnunet_root


def nnunet_sample(trainer, case_id, box_start, patch, transforms):
    """nnUNetDataLoader.generate_train_batch for one sample at a given box."""
    import torch
    from acvl_utils.cropping_and_padding.bounding_boxes import crop_and_pad_nd
    from nnunetv2.training.dataloading.nnunet_dataset import nnUNetDatasetBlosc2

    ds = nnUNetDatasetBlosc2(trainer.preprocessed_dataset_folder, [case_id])
    data, seg, _, _ = ds.load_case(case_id)
    bbox = [[lo, lo + p] for lo, p in zip(box_start, patch)]
    data_cropped = torch.from_numpy(crop_and_pad_nd(data, bbox, 0)).float()
    seg_cropped = torch.from_numpy(crop_and_pad_nd(seg, bbox, -1, cast_cropped_to=np.int16))
    seg_cropped = seg_cropped.to(torch.int16)
    if len(trainer.configuration_manager.patch_size) == 2:
        data_cropped, seg_cropped = data_cropped[:, 0], seg_cropped[:, 0]
    out = transforms(**{"image": data_cropped, "segmentation": seg_cropped})
    return out["image"], out["segmentation"]


# Fixtures for the tests on these datasets (a test module imports them by name).
@pytest.fixture(scope="module")
def nnunet_root():
    return nnunet_dataset()


@pytest.fixture
def env(nnunet_root, tmp_path, monkeypatch):
    """nnU-Net's environment on the cached datasets (use_nnunet_dataset)."""
    return use_nnunet_dataset(nnunet_root, tmp_path, monkeypatch)
