# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""`patchfeed convert`: the values it writes. NaN and Inf are refused (or written and reported
with allow_nonfinite), and `normalize` gives what nnU-Net's own normalisation classes give for
the same arrays (nnunetv2 imported); the CT statistics are compared with nnU-Net's
DatasetFingerprintExtractor run on a raw dataset. Also the header checks that refuse a case
before any data: missing paths, a patch with fewer axes than the data, channel counts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import numpy as np
import patchfeed
import pytest
from patchfeed import convert_normalize
from patchfeed.convert import MANIFEST_NAME, ConvertError, convert
from patchfeed.convert_inputs import Nonfinite
from test_convert import names, package_env, run_cli, save_nifti, write_raw

with warnings.catch_warnings():  # nnU-Net warns about unset nnUNet_* folders on import
    warnings.simplefilter("ignore")
    norm = pytest.importorskip("nnunetv2.preprocessing.normalization.default_normalization_schemes")
    cropping = pytest.importorskip("nnunetv2.preprocessing.cropping.cropping")


def read(path) -> np.ndarray:
    return patchfeed.open_array(path)[...]


def manifest(out) -> dict:
    return json.loads((out / MANIFEST_NAME).read_text())


# ---- NaN and Inf ----------------------------------------------------------------------------


def nan_raw(root, sources):
    """case_001's first channel with 2 NaN, 1 -Inf and a float64 value beyond float32 (Inf
    once cast): 2 NaN and 2 Inf as written."""
    chans, label = sources["case_001"]
    bad = chans[0].copy()
    bad[0, 0, 0] = bad[1, 2, 3] = np.nan
    bad[2, 2, 2] = -np.inf
    bad[3, 3, 3] = 1e300
    save_nifti(root / "imagesTr" / "case_001_0000.nii.gz", bad)
    return bad


def test_nonfinite_values_are_refused_naming_case_file_and_counts(tmp_path):
    root = tmp_path / "raw"
    sources = write_raw(root)
    nan_raw(root, sources)
    out = tmp_path / "out"
    bad_file = root / "imagesTr" / "case_001_0000.nii.gz"
    with pytest.raises(ConvertError, match=rf"case 'case_001': {bad_file} holds 2 NaN and 2 Inf "
                                           rf"values.*--allow-nonfinite"):
        convert(root, out, progress=False)
    # case_000 is done; nothing of case_001 was written, and a rerun retries it.
    assert names(out) == [MANIFEST_NAME, "case_000.b2nd", "case_000_seg.b2nd"]
    assert manifest(out)["cases"]["case_001"]["state"] == "started"

    proc = run_cli("convert", root, out, "--no-progress")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "case 'case_001'" in proc.stderr and "2 NaN and 2 Inf" in proc.stderr


def test_allow_nonfinite_writes_and_reports_them(tmp_path):
    root = tmp_path / "raw"
    sources = write_raw(root)
    bad = nan_raw(root, sources)
    out = tmp_path / "out"
    proc = run_cli("convert", root, out, "--allow-nonfinite")  # with progress: the case's line
    assert proc.returncode == 0, proc.stderr
    assert "case 'case_001':" in proc.stderr and "2 NaN and 2 Inf values, written" in proc.stderr
    assert ("1 cases hold NaN or Inf, written as they are (--allow-nonfinite): case_001 "
            "(case_001_0000.nii.gz: 2 NaN, 2 Inf)") in proc.stdout
    image = read(out / "case_001.b2nd")
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(image[0], bad.astype(np.float32))  # NaN where they were
    entry = manifest(out)["cases"]["case_001"]
    assert entry["nonfinite"] == {str(root / "imagesTr" / "case_001_0000.nii.gz"): [2, 2]}
    assert "nonfinite" not in manifest(out)["cases"]["case_000"]

    # A rerun skips every case and still reports the one holding NaN and Inf.
    report = convert(root, out, allow_nonfinite=True, progress=False)
    assert report.skipped == ["case_000", "case_001", "case_002"]
    assert report.nonfinite == {"case_001": [Nonfinite(
        str(root / "imagesTr" / "case_001_0000.nii.gz"), 2, 2)]}


def test_nonfinite_label_values_are_refused(tmp_path):
    np.save(tmp_path / "a.npy", np.zeros((4, 4, 4), np.float32))
    label = np.zeros((4, 4, 4), np.float32)
    label[0, 0, 0] = np.inf  # an integer as far as rint is concerned
    np.save(tmp_path / "a_label.npy", label)
    with pytest.raises(ConvertError, match=r"a_label.npy: a label map needs integer values, "
                                           r"found 0 NaN and 1 Inf"):
        convert([{"image": tmp_path / "a.npy", "label": tmp_path / "a_label.npy"}],
                tmp_path / "out", allow_nonfinite=True, progress=False)


def test_float_to_integer_image_dtype_is_checked(tmp_path):
    a = np.zeros((4, 4, 4), np.float32)
    a[1, 1, 1] = np.nan
    np.save(tmp_path / "a.npy", a)
    with pytest.raises(ConvertError, match=r"a.npy: 1 NaN and 0 Inf values cannot be stored as "
                                           r"int16"):
        convert(tmp_path / "a.npy", tmp_path / "out", image_dtype="int16",
                allow_nonfinite=True, progress=False)
    a[1, 1, 1] = 40000
    np.save(tmp_path / "a.npy", a)
    with pytest.raises(ConvertError, match=r"values 0.0..40000.0 do not fit the image dtype"):
        convert(tmp_path / "a.npy", tmp_path / "out", image_dtype="int16", progress=False)


# ---- header checks --------------------------------------------------------------------------


def test_missing_inputs_say_no_such_file_or_folder(tmp_path):
    for missing in (tmp_path / "no_folder", tmp_path / "gone.nii.gz"):
        with pytest.raises(ConvertError, match=f"^no such file or folder: {missing}$"):
            convert(missing, tmp_path / "out", progress=False)
        with pytest.raises(ConvertError, match=f"^no such file or folder: {missing}$"):
            convert([{"image": missing}], tmp_path / "out", progress=False)
    proc = run_cli("convert", tmp_path / "no_folder", tmp_path / "out")
    assert proc.returncode == 1
    assert proc.stderr.strip() == (f"patchfeed convert: error: no such file or folder: "
                                   f"{tmp_path / 'no_folder'}")


def test_patch_axes_must_match_the_data(tmp_path):
    np.save(tmp_path / "vol.npy", np.ones((10, 12, 14), np.float32))
    with pytest.raises(ConvertError, match=r"case 'vol' .*vol.npy\): the patch 8,8 has 2 axes and "
                                           r"the data has 3 spatial axes \(10, 12, 14\); give 3 "
                                           r"values .*or 1,Y,X"):
        convert(tmp_path / "vol.npy", tmp_path / "out", patch_size=(8, 8), progress=False)
    assert not (tmp_path / "out" / "vol.b2nd").exists()
    proc = run_cli("convert", tmp_path / "vol.npy", tmp_path / "o2", "--patch", "32,32")
    assert proc.returncode == 1 and "the patch 32,32 has 2 axes" in proc.stderr
    # nnU-Net's 2d configuration on 3-D cases: (1, Y, X), the chunks of its 2-value patch.
    convert(tmp_path / "vol.npy", tmp_path / "o3", patch_size=(1, 8, 8), progress=False)
    assert patchfeed.open_array(tmp_path / "o3" / "vol.b2nd").blocks[1] == 1
    # A 2-D image takes a 2-value patch.
    np.save(tmp_path / "flat.npy", np.ones((12, 14), np.float32))
    convert(tmp_path / "flat.npy", tmp_path / "o4", patch_size=(8, 8), progress=False)
    assert patchfeed.open_array(tmp_path / "o4" / "flat.b2nd").shape == (1, 1, 12, 14)


def test_cases_must_share_their_channel_count(tmp_path):
    images = tmp_path / "images"
    images.mkdir()
    np.save(images / "a.npy", np.ones((1, 4, 4, 4), np.float32))
    np.save(images / "b.npy", np.ones((2, 4, 4, 4), np.float32))
    with pytest.raises(ConvertError, match=r"case 'b' .*has 2 channels and case 'a' has 1"):
        convert(images, tmp_path / "out", progress=False)
    assert names(tmp_path / "out") == []  # refused from the headers
    # ... also against cases converted before.
    (images / "b.npy").unlink()
    convert(images, tmp_path / "out", progress=False)
    np.save(images / "c.npy", np.ones((3, 4, 4, 4), np.float32))
    with pytest.raises(ConvertError, match=r"case 'c' .*has 3 channels and case 'a' has 1"):
        convert(images, tmp_path / "out", progress=False)


# ---- normalisation --------------------------------------------------------------------------


def cases_with_background(tmp_path, n=3, seed=7):
    """.npy cases, 2 channels (float64 'MR', int16 'CT') with a zero background in both, the
    nonzero region's bounding box the whole case; labels with a labelled voxel in the
    background."""
    rng = np.random.default_rng(seed)
    images, labels = tmp_path / "images", tmp_path / "labels"
    images.mkdir()
    labels.mkdir()
    data = {}
    for i in range(n):
        shape = (14 + i, 12, 10)
        mr = rng.gamma(2.0, 300.0, shape) + 1
        mr[:, :3] = 0  # background slab
        mr[0, 0, 0] = mr[-1, 0, -1] = 5.0  # corners: the nonzero bounding box is the case
        ct = rng.integers(-1024, 2000, shape, dtype=np.int16)
        ct[:, :3] = 0  # every channel: the mask is where any channel is nonzero
        label = rng.integers(0, 3, shape).astype(np.uint8)
        label[:, :3] = 0
        label[4, 1, 4] = 2  # labelled, in the zero background
        mr[7, 7, 5] = ct[7, 7, 5] = label[7, 7, 5] = 0  # a hole: filled, so normalised
        np.save(images / f"c{i}_0000.npy", mr[None])
        np.save(images / f"c{i}_0001.npy", ct[None])
        np.save(labels / f"c{i}.npy", label)
        data[f"c{i}"] = (np.stack([mr, ct]).astype(np.float32), label[None])
    return images, labels, data


@pytest.mark.parametrize("scheme,nnunet_class", [("none", "NoNormalization"),
                                                 ("zscore", "ZScoreNormalization"),
                                                 ("rescale", "RescaleTo01Normalization")])
def test_per_case_schemes_equal_nnunets(tmp_path, scheme, nnunet_class):
    images, labels, data = cases_with_background(tmp_path)
    report = convert(images, tmp_path / "out", labels=labels, normalize=scheme, progress=False)
    assert report.normalization == {"scheme": scheme}
    cls = getattr(norm, nnunet_class)
    for cid, (image, _) in data.items():
        got = read(tmp_path / "out" / f"{cid}.b2nd")
        for c in range(len(image)):
            expected = cls(use_mask_for_norm=False, intensityproperties={}).run(image[c].copy())
            np.testing.assert_array_equal(got[c], expected)
        entry = manifest(tmp_path / "out")["cases"][cid]
        if scheme == "none":
            assert "normalization" not in entry
            continue
        key = "mean" if scheme == "zscore" else "min"
        assert entry["normalization"][1][key] == float(getattr(image[1], key)())
    # Labels are never normalised.
    np.testing.assert_array_equal(read(tmp_path / "out" / "c0_seg.b2nd"), data["c0"][1])


def test_zscore_nonzero_equals_nnunets_masked_zscore(tmp_path):
    images, labels, data = cases_with_background(tmp_path)
    convert(images, tmp_path / "out", labels=labels, normalize="zscore-nonzero", progress=False)
    zscore = norm.ZScoreNormalization(use_mask_for_norm=True, intensityproperties={})
    for cid, (image, label) in data.items():
        # nnU-Net's preprocessing: crop to the nonzero region (here the whole case), which sets
        # the label-0 voxels outside that region to -1; then the mask is seg >= 0.
        cropped, seg, bbox = cropping.crop_to_nonzero(image.copy(), label.astype(np.int16))
        assert cropped.shape == image.shape
        got = read(tmp_path / "out" / f"{cid}.b2nd")
        for c in range(len(image)):
            np.testing.assert_array_equal(got[c], zscore.run(cropped[c].copy(), seg[0]))
        # Background kept, the hole filled (normalised), the labelled background voxel too.
        assert got[0, 2, 2, 2] == 0 and got[0, 7, 7, 5] != 0 and got[0, 4, 1, 4] != 0
    # Without labels the mask is the nonzero region alone.
    convert(images, tmp_path / "nolabels", normalize="zscore-nonzero", progress=False)
    image = data["c1"][0]
    _, seg, _ = cropping.crop_to_nonzero(image.copy())
    np.testing.assert_array_equal(read(tmp_path / "nolabels" / "c1.b2nd")[0],
                                  zscore.run(image[0].copy(), seg[0]))


NNUNET_FINGERPRINT = """
import json, sys
from nnunetv2.experiment_planning.dataset_fingerprint.fingerprint_extractor import \\
    DatasetFingerprintExtractor
extractor = DatasetFingerprintExtractor("Dataset001_Values", num_processes=1)
extractor.num_foreground_voxels_for_intensitystats = int(sys.argv[1])
fingerprint = extractor.run()
json.dump(fingerprint["foreground_intensity_properties_per_channel"], sys.stdout)
"""


def nnunet_ct_statistics(tmp_path, data, total: int) -> list[dict]:
    """nnU-Net's own DatasetFingerprintExtractor on a raw dataset of `data`. Its reader gives
    SimpleITK's axis order, the reverse of ours, so the NIfTI files hold the transposed arrays:
    nnU-Net then sees `data`'s arrays in our order."""
    raw = tmp_path / "nnUNet_raw" / "Dataset001_Values"
    (raw / "imagesTr").mkdir(parents=True)
    (raw / "labelsTr").mkdir()
    for cid, (image, label) in data.items():
        for c, channel in enumerate(image):
            save_nifti(raw / "imagesTr" / f"{cid}_{c:04d}.nii.gz", channel.T)
        save_nifti(raw / "labelsTr" / f"{cid}.nii.gz", label[0].T.astype(np.uint8))
    (raw / "dataset.json").write_text(json.dumps({
        "channel_names": {"0": "MR", "1": "CT"}, "labels": {"background": 0, "a": 1, "b": 2},
        "numTraining": len(data), "file_ending": ".nii.gz"}))
    env = dict(package_env(), nnUNet_raw=str(tmp_path / "nnUNet_raw"),
               nnUNet_preprocessed=str(tmp_path / "pre"), nnUNet_results=str(tmp_path / "res"))
    proc = subprocess.run([sys.executable, "-c", NNUNET_FINGERPRINT, str(total)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    stats = json.loads(proc.stdout.strip().splitlines()[-1])
    return [stats[str(c)] for c in range(len(stats))]


def test_ct_statistics_and_values_equal_nnunets(tmp_path, monkeypatch):
    images, labels, data = cases_with_background(tmp_path)
    total = 3000  # nnU-Net draws 10e7 in all; fewer keep the test fast
    monkeypatch.setattr(convert_normalize, "CT_FOREGROUND_SAMPLES", total)
    out = tmp_path / "out"
    report = convert(images, out, labels=labels, normalize="ct", progress=False)
    expected = nnunet_ct_statistics(tmp_path, data, total)
    assert report.normalization["channels"] == expected
    saved = manifest(out)["ct_statistics"]
    assert saved["channels"] == expected and saved["foreground_samples_per_case"] == 1000
    ct = norm.CTNormalization(use_mask_for_norm=False, intensityproperties={})
    for cid, (image, _) in data.items():
        got = read(out / f"{cid}.b2nd")
        for c in range(len(image)):
            ct.intensityproperties = expected[c]
            np.testing.assert_array_equal(got[c], ct.run(image[c].copy()))


def test_ct_statistics_are_kept_for_resuming_and_redone_for_other_inputs(tmp_path, monkeypatch):
    images, labels, data = cases_with_background(tmp_path)
    monkeypatch.setattr(convert_normalize, "CT_FOREGROUND_SAMPLES", 300)
    out = tmp_path / "out"
    real_add = convert_normalize.CTStatistics.add
    monkeypatch.setattr(convert_normalize.CTStatistics, "add", lambda *a: 1 / 0)
    (images / "c2_0000.npy").rename(tmp_path / "c2_0000.npy")  # c2 comes later
    (images / "c2_0001.npy").rename(tmp_path / "c2_0001.npy")
    with pytest.raises(ZeroDivisionError):
        convert(images, out, labels=labels, normalize="ct", progress=False)
    monkeypatch.setattr(convert_normalize.CTStatistics, "add", real_add)
    first = convert(images, out, labels=labels, normalize="ct", progress=False)
    assert first.converted == ["c0", "c1"]

    # The same inputs again: the manifest's statistics, no pass over the data.
    monkeypatch.setattr(convert_normalize.CTStatistics, "add", lambda *a: 1 / 0)
    again = convert(images, out, labels=labels, normalize="ct", progress=False)
    assert again.skipped == ["c0", "c1"] and again.normalization == first.normalization
    proc = run_cli("convert", images, out, "--labels", labels, "--normalize", "ct")
    assert proc.returncode == 0, proc.stderr
    assert "ct scheme and the dataset's foreground statistics (channel 0: clipped to" in \
        proc.stdout

    # A new case changes the dataset's statistics: refused, or with force every case redone.
    (tmp_path / "c2_0000.npy").rename(images / "c2_0000.npy")
    (tmp_path / "c2_0001.npy").rename(images / "c2_0001.npy")
    before = {n: (out / n).stat().st_mtime_ns for n in names(out)}
    with pytest.raises(ConvertError, match="its 2 cases were normalised with the CT statistics "
                                           "of other inputs.*--force"):
        convert(images, out, labels=labels, normalize="ct", progress=False)
    assert {n: (out / n).stat().st_mtime_ns for n in names(out)} == before
    monkeypatch.setattr(convert_normalize.CTStatistics, "add", real_add)
    forced = convert(images, out, labels=labels, normalize="ct", force=True, progress=False)
    assert forced.converted == ["c0", "c1", "c2"]
    assert forced.normalization != first.normalization
    fresh = convert(images, tmp_path / "fresh", labels=labels, normalize="ct", progress=False)
    assert fresh.normalization == forced.normalization
    for cid in data:
        np.testing.assert_array_equal(read(out / f"{cid}.b2nd"),
                                      read(tmp_path / "fresh" / f"{cid}.b2nd"))


def test_normalize_is_a_setting_and_checked(tmp_path):
    images, labels, _ = cases_with_background(tmp_path, n=1)
    out = tmp_path / "out"
    convert(images, out, labels=labels, progress=False)
    assert manifest(out)["settings"]["normalize"] == "none"
    with pytest.raises(ConvertError, match=r"normalize='none'; now normalize='zscore'"):
        convert(images, out, labels=labels, normalize="zscore", progress=False)
    with pytest.raises(ConvertError, match="normalize must be one of none, zscore"):
        convert(images, out, labels=labels, normalize="minmax", progress=False)
    with pytest.raises(ConvertError, match="needs labels"):
        convert(images, tmp_path / "o2", normalize="ct", progress=False)
    with pytest.raises(ConvertError, match="needs a float image_dtype"):
        convert(images, tmp_path / "o2", normalize="zscore", image_dtype=None, progress=False)
    assert run_cli("convert", images, tmp_path / "o2", "--normalize", "minmax").returncode == 2
    help_text = run_cli("convert", "--help").stdout
    assert "--normalize {none,zscore,zscore-nonzero,ct,rescale}" in help_text
    assert "(default: none, the raw intensities)" in " ".join(help_text.split())


def test_folder_from_before_normalize_existed_resumes(tmp_path):
    images, labels, _ = cases_with_background(tmp_path, n=2)
    out = tmp_path / "out"
    convert(images, out, labels=labels, progress=False)
    data = manifest(out)
    del data["settings"]["normalize"]  # as an older patchfeed wrote it
    (out / MANIFEST_NAME).write_text(json.dumps(data))
    assert convert(images, out, labels=labels, progress=False).skipped == ["c0", "c1"]


def test_nonfinite_values_with_normalisation(tmp_path):
    a = np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6)
    a[0, 0, 0], a[1, 1, 1] = np.nan, np.inf
    np.save(tmp_path / "a.npy", a)
    report = convert(tmp_path / "a.npy", tmp_path / "out", normalize="zscore",
                     allow_nonfinite=True, progress=False)
    assert report.nonfinite["a"] == [Nonfinite(str(tmp_path / "a.npy"), 1, 1)]
    got = read(tmp_path / "out" / "a.b2nd")[0]
    finite = np.isfinite(a)  # the statistics are the finite voxels'
    expected = (a[finite] - a[finite].mean()) / a[finite].std()
    np.testing.assert_allclose(got[finite], expected, rtol=1e-6)
    assert np.isnan(got[0, 0, 0]) and got[1, 1, 1] == np.inf
    # Values that overflow float32 arithmetic: the normalised image holds Inf; refused.
    big = np.full((4, 4, 4), 3e38, np.float32)
    big[0] = -3e38
    np.save(tmp_path / "big.npy", big)
    with pytest.raises(ConvertError, match=r"normalize='rescale' gave NaN or Inf"):
        convert(tmp_path / "big.npy", tmp_path / "o2", normalize="rescale", progress=False)
    assert not os.path.exists(tmp_path / "o2" / "big.b2nd")
