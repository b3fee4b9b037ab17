# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Pictures (patchfeed/show.py): `patchfeed show` and `patchfeed bench --plot` write PNGs of
the expected size that are not blank, the label outlines in their colours; the augmentation
`show` asks the Loader for is nnU-Net's trainer's (compared with the trainer's own method)."""

from __future__ import annotations

import json
import struct
import types
import warnings

import numpy as np
import pytest
from patchfeed import cli
from patchfeed.convert import convert
from patchfeed.show import BENCH_PLOT_PX, PANEL_PX, nnunet_augmentation

image_io = pytest.importorskip("matplotlib.image")


def png(path) -> np.ndarray:
    """The RGB pixels of a PNG, checked to be one: signature and header size agree."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    pixels = image_io.imread(path)[..., :3]
    assert pixels.shape[:2] == (height, width)
    return pixels


def has_colour(pixels: np.ndarray, rgb: tuple[float, float, float]) -> bool:
    return bool((np.abs(pixels - np.array(rgb)).max(axis=-1) < 0.2).any())


RED, GREEN = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)


@pytest.fixture
def dataset(tmp_path, monkeypatch):
    """A converted folder: 2 cases, noise images, a label 1 box holding a label 2 box."""
    monkeypatch.setenv("PATCHFEED_CACHE_DIR", str(tmp_path / "cache"))
    rng = np.random.default_rng(0)
    cases = []
    for i in range(2):
        np.save(tmp_path / f"c{i}.npy", rng.standard_normal((30, 40, 44)).astype(np.float32))
        label = np.zeros((30, 40, 44), np.uint8)
        label[8:22, 10:30, 10:34] = 1
        label[12:18, 16:24, 18:26] = 2
        np.save(tmp_path / f"c{i}_seg.npy", label)
        cases.append({"image": tmp_path / f"c{i}.npy", "label": tmp_path / f"c{i}_seg.npy",
                      "id": f"c{i}"})
    convert(cases, tmp_path / "cases", progress=False)
    return tmp_path / "cases"


def test_augmentation_settings_are_nnunets():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer = pytest.importorskip("nnunetv2.training.nnUNetTrainer.nnUNetTrainer")
    configure = trainer.nnUNetTrainer.configure_rotation_dummyDA_mirroring_and_inital_patch_size
    for patch in [(128, 128, 128), (40, 56, 40), (64, 160, 112), (16, 160, 160), (1, 256, 256),
                  (1, 512, 128)]:
        nnunet_patch = patch[1:] if patch[0] == 1 else patch  # its 2d configuration
        fake = types.SimpleNamespace(
            configuration_manager=types.SimpleNamespace(patch_size=list(nnunet_patch)),
            print_to_log_file=lambda *a, **k: None)
        rotation, dummy_2d, initial, mirror_axes = configure(fake)
        crop, need_to_pad, aug = nnunet_augmentation(patch)
        expected_crop = [int(v) for v in initial]
        if patch[0] == 1:
            expected_crop = [1, *expected_crop]
        assert crop == expected_crop, patch
        assert need_to_pad == [c - p for c, p in zip(crop, patch)]
        assert aug == {"patch_size": list(nnunet_patch), "dummy_2d": bool(dummy_2d),
                       "max_angle": pytest.approx(max(abs(r) for r in rotation)),
                       "mirror_axes": list(mirror_axes)}, patch


def test_show_draws_augmented_patches_with_outlines(dataset, tmp_path, capsys):
    out = tmp_path / "patches.png"
    assert cli.main(["show", str(dataset), "--augmented", "3", "--out", str(out),
                     "--patch", "24,32,32", "--seed", "1"]) == 0
    assert f"3 augmented samples -> {out} (750x750)" in capsys.readouterr().out
    pixels = png(out)
    assert pixels.shape == (3 * PANEL_PX, 3 * PANEL_PX, 3)  # 3 samples x 3 axes
    assert pixels.std() > 0.1  # not blank
    assert has_colour(pixels, RED) and has_colour(pixels, GREEN)  # labels 1 and 2 outlined
    # The same seed draws the same picture; another seed another one.
    again = tmp_path / "again.png"
    cli.main(["show", str(dataset), "--augmented", "3", "--out", str(again), "--patch",
              "24,32,32", "--seed", "1"])
    np.testing.assert_array_equal(png(again), pixels)
    cli.main(["show", str(dataset), "--augmented", "3", "--out", str(again), "--patch",
              "24,32,32", "--seed", "2"])
    assert not np.array_equal(png(again), pixels)


def test_show_plain_2d_patches_and_image_only_folders(dataset, tmp_path, capsys):
    out = tmp_path / "plain.png"
    assert cli.main(["show", str(dataset), "--augmented", "2", "--plain", "--out", str(out),
                     "--patch", "1,40,44"]) == 0
    pixels = png(out)
    assert pixels.shape == (2 * PANEL_PX, PANEL_PX, 3)  # one panel per 2-D patch
    assert pixels.std() > 0.1 and has_colour(pixels, RED)

    convert(tmp_path / "c0.npy", tmp_path / "images_only", progress=False)
    out = tmp_path / "images_only.png"
    assert cli.main(["show", str(tmp_path / "images_only"), "--augmented", "1", "--plain",
                     "--out", str(out)]) == 0
    pixels = png(out)
    assert pixels.shape == (PANEL_PX, 3 * PANEL_PX, 3) and pixels.std() > 0.1
    assert not has_colour(pixels, RED)  # no labels, no outlines
    capsys.readouterr()

    assert cli.main(["show", str(tmp_path / "missing"), "--out", str(out)]) == 1
    assert "patchfeed show: error: no such folder" in capsys.readouterr().err
    assert cli.main(["show", str(dataset), "--channel", "3", "--out", str(out)]) == 1
    assert "channel 3: the images have 1 channels" in capsys.readouterr().err


def test_bench_plot_of_a_threads_sweep(tmp_path, capsys):
    matplotlib = pytest.importorskip("matplotlib")
    out = tmp_path / "bench.png"
    # A style of the process's own (as seaborn.set() leaves) does not change the lines' colours.
    with matplotlib.rc_context({"axes.prop_cycle": matplotlib.cycler(color=["k", "g"])}):
        assert cli.main(["bench", "--patch", "16,16,16", "--cases", "2", "--steps", "6",
                         "--warmup", "1", "--numpy", "--threads", "1,2", "--json",
                         "--plot", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    runs = [json.loads(line) for line in lines if line.startswith("{")]
    assert [r["threads"] for r in runs] == [1, 2] and "step_s" not in runs[0]
    assert lines[-1] == f"patchfeed bench: plot -> {out}"
    pixels = png(out)
    assert pixels.shape == (BENCH_PLOT_PX[1], BENCH_PLOT_PX[0], 3) and pixels.std() > 0.05
    # tab10's first two colours: one line per thread count, whatever style the process set
    # (nnU-Net's progress plot, run by other tests here, calls seaborn.set()).
    assert has_colour(pixels, (0x1f / 255, 0x77 / 255, 0xb4 / 255))
    assert has_colour(pixels, (0xff / 255, 0x7f / 255, 0x0e / 255))
