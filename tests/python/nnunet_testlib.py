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
        _run_nnunet("plan_and_preprocess_entry", ["-d", dataset_id, "-c", *configurations, "-np",
                                                  "2", "--verify_dataset_integrity"], env)
    done.write_text("ok")
    return root


def _run_nnunet(entry: str, args: list[str], env: dict[str, str]) -> None:
    """One of nnU-Net's console scripts (entry: its function in
    nnunetv2.experiment_planning.plan_and_preprocess_entrypoints) in a fresh interpreter."""
    cmd = [sys.executable, "-c",
           f"from nnunetv2.experiment_planning.plan_and_preprocess_entrypoints import {entry}; "
           f"{entry}()", *args]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"nnU-Net's {entry} {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n"
                           f"{proc.stderr[-3000:]}")


def torchvision_breaks_nnunets_trainers() -> str | None:
    """Why nnU-Net's Primus trainers (and with them nnU-Net's search through its own trainers)
    cannot be imported: they import timm, which imports torchvision, and a torchvision built for
    another torch fails ("operator torchvision::nms does not exist"). None when they import; any
    other failure is raised."""
    try:
        import nnunetv2.training.nnUNetTrainer.primus.primus_trainers  # noqa: F401
    except (ImportError, RuntimeError) as e:
        if "torchvision" not in str(e) and getattr(e, "name", None) not in ("timm", "torchvision"):
            raise
        return f"{type(e).__name__}: {str(e).splitlines()[0]}"
    return None


RESENC_M_PLANS = "nnUNetResEncUNetMPlans"


def resenc_m_dataset() -> pathlib.Path:
    """nnunet_dataset() with nnU-Net's ResEnc M preset for Dataset901_Tiny beside its default
    plans (`nnUNetv2_plan_experiment -pl nnUNetPlannerResEncM`), cached on its own. The preset's
    3d_fullres and 2d use the default plans' preprocessed data (its data_identifier), so only a
    configuration with data of its own would be preprocessed, and none here is."""
    root = nnunet_dataset()
    done = root / "done_resenc_m"
    if not done.exists():
        env = nnunet_env(root)
        _run_nnunet("plan_experiment_entry", ["-d", "901", "-pl", "nnUNetPlannerResEncM"], env)
        base = root / "preprocessed" / DATASET
        plans = json.loads((base / f"{RESENC_M_PLANS}.json").read_text())
        identifier = plans["configurations"]["3d_fullres"]["data_identifier"]
        if not (base / identifier).is_dir():
            _run_nnunet("preprocess_entry", ["-d", "901", "-plans_name", RESENC_M_PLANS,
                                             "-c", "3d_fullres", "-np", "2"], env)
        done.write_text("ok")
    return root


def narrow_plans(root: pathlib.Path, plans: str = "nnUNetPlans", dataset: str = DATASET,
                 widest: int = 32) -> str:
    """A copy of nnU-Net's plans `plans` whose networks have at most `widest` features per stage
    (halving the planner's widths, at least 4), so that a few training iterations on the CPU take
    seconds. Everything else (patch and batch size, strides, blocks, the architecture class, the
    preprocessed data it points at) is the planner's. Returns the new plans identifier."""
    name = f"{plans}_narrow{widest}"
    target = root / "preprocessed" / dataset / f"{name}.json"
    if not target.exists():
        data = json.loads((root / "preprocessed" / dataset / f"{plans}.json").read_text())
        data["plans_name"] = name
        for configuration in data["configurations"].values():
            kwargs = configuration.get("architecture", {}).get("arch_kwargs", {})
            widths = kwargs.get("features_per_stage")
            if widths:
                scale = max(1, -(-max(widths) // widest))
                kwargs["features_per_stage"] = [max(4, w // scale) for w in widths]
        tmp = target.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2))
        tmp.replace(target)
    return name


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
    """nnUNetDataLoader.generate_train_batch for one sample at a given box (for the cascade
    with the previous stage's segmentation as the segmentation's channel 1, as it stacks it)."""
    import torch
    from acvl_utils.cropping_and_padding.bounding_boxes import crop_and_pad_nd
    from nnunetv2.training.dataloading.nnunet_dataset import nnUNetDatasetBlosc2

    ds = nnUNetDatasetBlosc2(trainer.preprocessed_dataset_folder, [case_id],
                             trainer.folder_with_segs_from_previous_stage)
    data, seg, seg_prev, _ = ds.load_case(case_id)
    bbox = [[lo, lo + p] for lo, p in zip(box_start, patch)]
    data_cropped = torch.from_numpy(crop_and_pad_nd(data, bbox, 0)).float()
    seg_cropped = torch.from_numpy(crop_and_pad_nd(seg, bbox, -1, cast_cropped_to=np.int16))
    seg_cropped = seg_cropped.to(torch.int16)
    if seg_prev is not None:
        prev = torch.from_numpy(crop_and_pad_nd(seg_prev, bbox, -1, cast_cropped_to=np.int16))
        seg_cropped = torch.cat((seg_cropped, prev.to(torch.int16)[None]), dim=0)
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
