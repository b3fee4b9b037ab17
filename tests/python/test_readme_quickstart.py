# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""README.md's "Quick start: from a NIfTI folder" runs as written: its shell block (with
`patchfeed` being this interpreter's `python -m patchfeed`) and then its Python block, in a
folder holding a small NIfTI dataset made here, and the model it trains finds the labels."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest
from loader_testlib import env_with_package

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def quickstart_blocks() -> tuple[str, str]:
    text = README.read_text()
    section = text.split("## Quick start: from a NIfTI folder", 1)[1].split("\n## ", 1)[0]
    shell = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    python = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    return shell, python


def write_nifti_folder(folder: pathlib.Path) -> None:
    nib = pytest.importorskip("nibabel")
    (folder / "images").mkdir()
    (folder / "labels").mkdir()
    rng = np.random.default_rng(0)
    shape = (56, 48, 52)
    z, y, x = np.indices(shape)
    for i in range(3):
        centre = [s // 2 + int(rng.integers(-5, 6)) for s in shape]
        r = np.sqrt((z - centre[0]) ** 2 + (y - centre[1]) ** 2 + (x - centre[2]) ** 2)
        label = (r < 10).astype(np.uint8)
        image = (100 + 400 * label.astype(np.float32) + 30 * rng.standard_normal(shape))
        nib.save(nib.Nifti1Image(image.astype(np.float32), np.eye(4)),
                 str(folder / f"images/case{i}.nii.gz"))
        nib.save(nib.Nifti1Image(label, np.eye(4)), str(folder / f"labels/case{i}.nii.gz"))


def test_readme_quickstart_runs_as_written(tmp_path):
    pytest.importorskip("matplotlib")
    write_nifti_folder(tmp_path)
    shell, python = quickstart_blocks()
    env = env_with_package()
    for line in shell.splitlines():
        command = line.split("#", 1)[0].strip()
        if not command:
            continue
        assert command.startswith("patchfeed "), command
        argv = [sys.executable, "-m", "patchfeed", *command.split()[1:]]
        proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, command + "\n" + proc.stdout + proc.stderr
    assert (tmp_path / "cases" / "case0_seg.b2nd").is_file()
    assert (tmp_path / "patches.png").stat().st_size > 10_000
    proc = subprocess.run([sys.executable, "-c", python], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    dice = [float(d) for d in re.findall(r"Dice (\d\.\d+)", proc.stdout)]
    assert len(dice) == 3, proc.stdout
    # 20 steps of a two-layer network on bright spheres: far above chance (~0.05) if the
    # patches, labels, augmentation, tiles and stitching line up; a misaligned label gives ~0.
    assert min(dice) > 0.5, proc.stdout
    assert "Warning" not in proc.stderr, proc.stderr
    assert (tmp_path / "checkpoint.pt").is_file()
