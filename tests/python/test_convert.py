# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""`patchfeed convert` (patchfeed/convert.py, convert_inputs.py): NIfTI, .npy, zarr and
OME-Zarr inputs -> .b2nd cases.

Sources are written with nibabel, NumPy and zarr-python (zarr v2, v3 sharded, OME-Zarr 0.4 and
0.5, zarr groups of cases); convert reads zarr with patchfeed's own reader, checked with
zarr-python made unimportable. Outputs are read back with patchfeed and
compared exactly (after the documented casts), opened as a Dataset and drawn from by a Loader
(whose samples python-blosc2 checks). Resuming is tested by interrupting a run in-process
(KeyboardInterrupt inside the writer) and by killing a CLI process mid-file.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import patchfeed
import pytest
from loader_testlib import check_batch
from patchfeed import convert as pconvert
from patchfeed.convert import ConvertError, convert, find_cases

nib = pytest.importorskip("nibabel")

SHAPES = [(23, 17, 11), (19, 21, 13), (16, 16, 9)]


def write_raw(root: pathlib.Path, shapes=SHAPES, seed: int = 0) -> dict:
    """An nnU-Net raw folder: two channels (float64 noise, int16 'CT') and uint8 labels per case;
    returns {case id: (channel arrays, label)}."""
    rng = np.random.default_rng(seed)
    (root / "imagesTr").mkdir(parents=True)
    (root / "labelsTr").mkdir()
    (root / "dataset.json").write_text(json.dumps(
        {"channel_names": {"0": "T1", "1": "CT"}, "labels": {"background": 0, "a": 1, "b": 2},
         "file_ending": ".nii.gz"}))
    sources = {}
    for i, shape in enumerate(shapes):
        cid = f"case_{i:03d}"
        chans = [rng.standard_normal(shape) * 100, rng.integers(-1024, 3000, shape, dtype=np.int16)]
        label = rng.integers(0, 3, shape, dtype=np.uint8)
        for c, a in enumerate(chans):
            save_nifti(root / "imagesTr" / f"{cid}_{c:04d}.nii.gz", a)
        save_nifti(root / "labelsTr" / f"{cid}.nii.gz", label)
        sources[cid] = (chans, label)
    return sources


def save_nifti(path: pathlib.Path, a: np.ndarray) -> None:
    nib.save(nib.Nifti1Image(a, np.diag([0.8, 0.8, 2.5, 1.0])), str(path))


def check_outputs(out: pathlib.Path, sources: dict) -> None:
    """Every case equals its sources: channels stacked as float32, labels as int16."""
    for cid, (chans, label) in sources.items():
        image = patchfeed.open_array(out / f"{cid}.b2nd")
        assert image.dtype == np.float32 and image.shape == (len(chans), *label.shape)
        np.testing.assert_array_equal(image[...], np.stack(chans).astype(np.float32))
        seg = patchfeed.open_array(out / f"{cid}_seg.b2nd")
        assert seg.dtype == np.int16 and seg.shape == (1, *label.shape)
        np.testing.assert_array_equal(seg[...], label[None])


def names(folder: pathlib.Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.fixture
def raw(tmp_path):
    return tmp_path / "raw", write_raw(tmp_path / "raw")


def test_nnunet_raw_nifti_reads_back_exactly(raw, tmp_path):
    root, sources = raw
    report = convert(root, tmp_path / "out", progress=False)
    assert report.converted == sorted(sources) and report.skipped == [] and report.has_labels
    check_outputs(tmp_path / "out", sources)
    expected = sorted([f"{c}.b2nd" for c in sources] + [f"{c}_seg.b2nd" for c in sources] +
                      [".patchfeed_convert.json"])
    assert names(tmp_path / "out") == expected
    assert names(root / "imagesTr") == sorted(  # nothing written next to the inputs
        f"{c}_{k:04d}.nii.gz" for c in sources for k in range(2))


def test_output_opens_as_nnunet_folder_and_loads(raw, tmp_path):
    root, sources = raw
    report = convert(root, tmp_path / "out", progress=False)
    ds = patchfeed.Dataset.from_nnunet_folder(tmp_path / "out")
    assert ds.case_ids == sorted(sources) and ds.array_names == ["image", "seg"]
    assert report.dataset().case_ids == ds.case_ids
    with patchfeed.Loader(ds, (8, 8, 8), 2, num_threads=1, as_numpy=True, seed=3,
                          foreground_cache_dir="") as loader:
        batch = loader.next_batch()
        assert batch["image"].shape == (2, 2, 8, 8, 8) and batch["seg"].dtype == np.int16
        check_batch(loader, batch)  # each sample equals python-blosc2's read of its box


def test_chunk_rule_is_nnunets(raw, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nnunet = pytest.importorskip("nnunetv2.training.dataloading.nnunet_dataset")
    for shape, patch, itemsize in [((1, 40, 36, 30), (8, 8, 8), 4), ((2, 512, 512, 300),
                                   (128, 128, 128), 4), ((1, 1, 700, 650), (320, 256), 2),
                                   ((3, 91, 300, 17), (64, 160, 16), 2), ((1, 5, 6, 7),
                                   (128, 128, 128), 8)]:
        blocks, chunks = nnunet.comp_blosc2_params(shape, patch, itemsize)
        assert pconvert.nnunet_chunks_blocks(shape, patch, itemsize) == (list(chunks),
                                                                         list(blocks))
    # The files: per case and per item size (float32 image, int16 seg), as nnU-Net preprocesses.
    root, sources = raw
    convert(root, tmp_path / "out", patch_size=(8, 8, 4), progress=False)
    for cid, (chans, label) in sources.items():
        for suffix, c, itemsize in ((".b2nd", 2, 4), ("_seg.b2nd", 1, 2)):
            arr = patchfeed.open_array(tmp_path / "out" / f"{cid}{suffix}")
            blocks, chunks = nnunet.comp_blosc2_params((c, *label.shape), (8, 8, 4), itemsize)
            assert (arr.chunks, arr.blocks) == (tuple(chunks), tuple(blocks))
            assert arr.chunks != arr.shape  # the rule did split these cases


def test_given_chunks_and_blocks_are_clipped_to_each_case(raw, tmp_path):
    root, sources = raw
    convert(root, tmp_path / "out", chunks=(16, 32, 8), blocks=(8, 8, 8), progress=False)
    arr = patchfeed.open_array(tmp_path / "out" / "case_002.b2nd")  # (2, 16, 16, 9)
    assert arr.chunks == (1, 16, 16, 8) and arr.blocks == (1, 8, 8, 8)
    check_outputs(tmp_path / "out", sources)
    with pytest.raises(ConvertError, match="chunks and blocks together"):
        convert(root, tmp_path / "o2", chunks=(16, 16, 16), progress=False)
    with pytest.raises(ConvertError, match="patch_size sets"):
        convert(root, tmp_path / "o2", chunks=(8, 8, 8), blocks=(8, 8, 8), patch_size=(8, 8, 8),
                progress=False)
    with pytest.raises(ConvertError, match="must not exceed"):
        convert(root, tmp_path / "o2", chunks=(8, 8, 8), blocks=(16, 8, 8), progress=False)


def test_interrupted_convert_resumes(raw, tmp_path, monkeypatch):
    root, sources = raw
    out = tmp_path / "out"
    real_write = pconvert.write_b2nd
    calls = []

    def write_then_interrupt(path, *args, **kwargs):
        calls.append(os.path.basename(path))
        real_write(path, *args, **kwargs)
        if len(calls) == 3:  # case_001's image: written to its .partial, not yet renamed
            assert path.endswith(".b2nd.partial") and os.path.exists(path)
            raise KeyboardInterrupt

    monkeypatch.setattr(pconvert, "write_b2nd", write_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        convert(root, out, progress=False)
    assert calls == ["case_000.b2nd.partial", "case_000_seg.b2nd.partial",
                     "case_001.b2nd.partial"]
    assert names(out) == [".patchfeed_convert.json", "case_000.b2nd", "case_000_seg.b2nd"]

    monkeypatch.setattr(pconvert, "write_b2nd", real_write)
    report = convert(root, out, progress=False)
    assert report.skipped == ["case_000"] and report.converted == ["case_001", "case_002"]
    check_outputs(out, sources)
    assert not [n for n in names(out) if n.endswith(".partial")]


def test_killed_cli_leaves_no_final_partial_file_and_resumes(raw, tmp_path):
    root, sources = raw
    out = tmp_path / "out"
    # A process killed while case_001's image is half written (os._exit: no cleanup runs).
    killer = textwrap.dedent(f"""
        import os, sys
        from patchfeed import cli, convert
        real = convert.write_b2nd
        def write(path, array, *a, **k):
            if os.path.basename(path).startswith("case_001"):
                with open(path, "wb") as f:
                    f.write(b"half a frame")
                os._exit(9)
            real(path, array, *a, **k)
        convert.write_b2nd = write
        sys.exit(cli.main(["convert", {str(root)!r}, {str(out)!r}, "--no-progress"]))
    """)
    proc = subprocess.run([sys.executable, "-c", killer], env=package_env(), capture_output=True,
                          timeout=60)
    assert proc.returncode == 9, proc.stderr
    assert names(out) == [".patchfeed_convert.json", "case_000.b2nd", "case_000_seg.b2nd",
                          "case_001.b2nd.partial"]

    proc = run_cli("convert", root, out, "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "2 converted, 1 skipped" in proc.stdout
    check_outputs(out, sources)
    assert not [n for n in names(out) if n.endswith(".partial")]


def test_changed_input_or_damaged_output_is_converted_again(raw, tmp_path):
    root, sources = raw
    out = tmp_path / "out"
    convert(root, out, progress=False)
    new = np.full(SHAPES[1], 7, dtype=np.int16)
    save_nifti(root / "imagesTr" / "case_001_0001.nii.gz", new)
    sources["case_001"] = (sources["case_001"][0][:1] + [new], sources["case_001"][1])
    with open(out / "case_002_seg.b2nd", "r+b") as f:
        f.truncate(100)
    report = convert(root, out, progress=False)
    assert report.converted == ["case_001", "case_002"] and report.skipped == ["case_000"]
    check_outputs(out, sources)


def test_refuses_foreign_b2nd_files_without_force(raw, tmp_path):
    root, sources = raw
    out = tmp_path / "out"
    out.mkdir()
    (out / "case_000.b2nd").write_bytes(b"someone else's")
    (out / "other.b2nd").write_bytes(b"keep me")
    with pytest.raises(ConvertError, match="did not write.*case_000.b2nd"):
        convert(root, out, progress=False)
    assert (out / "case_000.b2nd").read_bytes() == b"someone else's"
    assert names(out) == ["case_000.b2nd", "other.b2nd"]

    convert(root, out, force=True, progress=False)
    check_outputs(out, sources)
    assert (out / "other.b2nd").read_bytes() == b"keep me"  # force overwrites clashes only


def test_changed_settings_are_refused_unless_forced(raw, tmp_path):
    root, sources = raw
    out = tmp_path / "out"
    convert(root, out, progress=False)
    before = {n: (out / n).stat().st_mtime_ns for n in names(out)}
    with pytest.raises(ConvertError, match=r"clevel=5.*now clevel=9"):
        convert(root, out, clevel=9, progress=False)
    with pytest.raises(ConvertError, match=r"patch_size"):
        convert(root, out, patch_size=(64, 64, 64), progress=False)
    assert {n: (out / n).stat().st_mtime_ns for n in names(out)} == before

    # Forced with one case fewer: the folder is one dataset again, the dropped case's files gone.
    (root / "labelsTr" / "case_002.nii.gz").unlink()
    for k in range(2):
        (root / "imagesTr" / f"case_002_{k:04d}.nii.gz").unlink()
    report = convert(root, out, clevel=9, force=True, progress=False)
    assert report.converted == ["case_000", "case_001"]
    assert report.removed == ["case_002.b2nd", "case_002_seg.b2nd"]
    assert not (out / "case_002.b2nd").exists()
    del sources["case_002"]
    check_outputs(out, sources)
    assert convert(root, out, clevel=9, progress=False).skipped == ["case_000", "case_001"]


def test_npy_folder_with_labels_and_source_dtype(tmp_path):
    rng = np.random.default_rng(1)
    images, labels = tmp_path / "images", tmp_path / "labels"
    images.mkdir()
    labels.mkdir()
    a = rng.integers(0, 4000, (9, 10, 11), dtype=np.uint16)   # 3-D: one channel
    b = rng.integers(0, 4000, (1, 7, 8, 5), dtype=np.uint16)  # 4-D: channels first
    np.save(images / "a.npy", a)
    np.save(images / "b.npy", b)
    np.save(labels / "a.npy", rng.integers(0, 2, (9, 10, 11)).astype(np.float32))  # integral
    np.save(labels / "b.npy", rng.integers(0, 5, (1, 7, 8, 5), dtype=np.int64))
    report = convert(images, tmp_path / "out", labels=labels, image_dtype=None, progress=False)
    assert report.converted == ["a", "b"]
    for cid, src in (("a", a[None]), ("b", b)):
        arr = patchfeed.open_array(tmp_path / "out" / f"{cid}.b2nd")
        assert arr.dtype == np.uint16
        np.testing.assert_array_equal(arr[...], src)
        np.testing.assert_array_equal(patchfeed.open_array(tmp_path / "out" / f"{cid}_seg.b2nd")
                                      [...], np.load(labels / f"{cid}.npy").reshape(src[:1].shape))


def test_image_only_folder_and_channel_grouping(tmp_path):
    images = tmp_path / "images"
    images.mkdir()
    arrays = {}
    for name in ("patient_0001", "patient_0002"):  # not channels: no _0000, so two cases
        arrays[name] = np.arange(6 * 5 * 4, dtype=np.float32).reshape(6, 5, 4) + len(arrays)
        np.save(images / f"{name}.npy", arrays[name])
    (images / "._patient_0001.npy").write_bytes(b"macOS junk")  # dot files are skipped
    (images / "notes.txt").write_text("not an input")
    report = convert(images, tmp_path / "out", progress=False)
    assert report.converted == ["patient_0001", "patient_0002"] and not report.has_labels
    assert names(tmp_path / "out") == [".patchfeed_convert.json", "patient_0001.b2nd",
                                       "patient_0002.b2nd"]
    ds = patchfeed.Dataset.from_folder(tmp_path / "out", {"image": ".b2nd"})
    assert ds.case_ids == report.dataset().case_ids == sorted(arrays)
    np.testing.assert_array_equal(
        patchfeed.open_array(tmp_path / "out" / "patient_0002.b2nd")[0], arrays["patient_0002"])

    (images / "._patient_0001.npy").unlink()
    (images / "notes.txt").unlink()
    for name in ("x_0000", "x_0001", "y_0000", "y_0001"):
        np.save(images / f"{name}.npy", np.zeros((2, 2, 2)))
    for name in ("patient_0001", "patient_0002"):
        (images / f"{name}.npy").unlink()
    assert [(c.case_id, len(c.images)) for c in find_cases(images)] == [("x", 2), ("y", 2)]


def test_datalist_json_4d_nifti_and_zarr(tmp_path):
    zarr = pytest.importorskip("zarr")
    rng = np.random.default_rng(2)
    (tmp_path / "imagesTr").mkdir()
    (tmp_path / "labelsTr").mkdir()
    # A Decathlon-style 4-D NIfTI: modalities on the last axis.
    four = rng.standard_normal((12, 10, 6, 3)).astype(np.float32)
    save_nifti(tmp_path / "imagesTr" / "brain_001.nii.gz", four)
    lab = rng.integers(0, 4, (12, 10, 6), dtype=np.uint8)
    save_nifti(tmp_path / "labelsTr" / "brain_001.nii.gz", lab)
    # A zarr array, channels first, with a label as .npy.
    z = zarr.open_array(str(tmp_path / "vol.zarr"), mode="w", shape=(3, 8, 9, 7),
                        chunks=(1, 4, 4, 4), dtype="float32")
    zdata = rng.standard_normal((3, 8, 9, 7)).astype(np.float32)
    z[...] = zdata
    np.save(tmp_path / "vol_label.npy", np.ones((8, 9, 7), dtype=np.uint8))
    datalist = {"training": [
        {"image": "./imagesTr/brain_001.nii.gz", "label": "./labelsTr/brain_001.nii.gz"},
        {"image": "vol.zarr", "label": "vol_label.npy", "id": "vol"}]}
    (tmp_path / "dataset.json").write_text(json.dumps(datalist))

    report = convert(tmp_path / "dataset.json", tmp_path / "out", progress=False)
    assert report.converted == ["brain_001", "vol"]
    out = tmp_path / "out"
    np.testing.assert_array_equal(patchfeed.open_array(out / "brain_001.b2nd")[...],
                                  np.moveaxis(four, -1, 0))
    np.testing.assert_array_equal(patchfeed.open_array(out / "brain_001_seg.b2nd")[0], lab)
    np.testing.assert_array_equal(patchfeed.open_array(out / "vol.b2nd")[...], zdata)


def write_ome(path: pathlib.Path, levels: list, zarr_format: int) -> None:
    """An OME-Zarr image group: 0.4 (zarr v2, multiscales in .zattrs) or 0.5 (zarr v3,
    attributes.ome.multiscales), level i in the array "s<i>"."""
    zarr = pytest.importorskip("zarr")
    group = zarr.open_group(str(path), mode="w", zarr_format=zarr_format)
    for i, a in enumerate(levels):
        group.create_array(f"s{i}", shape=a.shape, chunks=(1,) * (a.ndim - 3) + (4, 4, 4),
                           dtype=a.dtype)[...] = a
    axes = [{"name": n} for n in "tczyx"[5 - levels[0].ndim:]]
    multiscales = [{"version": "0.4", "axes": axes,
                    "datasets": [{"path": f"s{i}"} for i in range(len(levels))]}]
    if zarr_format == 2:
        group.attrs["multiscales"] = multiscales
    else:
        group.attrs["ome"] = {"version": "0.5", "multiscales": multiscales}


def test_zarr_v2_v3_sharded_and_ome_zarr_need_no_zarr_python(tmp_path, monkeypatch):
    zarr = pytest.importorskip("zarr")  # writes the inputs; convert reads them with patchfeed
    rng = np.random.default_rng(4)
    images = tmp_path / "images"
    images.mkdir()
    v2 = rng.standard_normal((2, 8, 9, 7)).astype(">f4")  # big-endian, channels first
    zarr.create_array(str(images / "a.zarr"), shape=v2.shape, chunks=(1, 4, 4, 4),
                      dtype=v2.dtype, zarr_format=2)[...] = v2
    v3 = rng.integers(0, 4000, (2, 9, 10, 11), dtype=np.uint16)
    zarr.create_array(str(images / "b.zarr"), shape=v3.shape, chunks=(1, 3, 4, 4),
                      shards=(1, 6, 8, 8), dtype=v3.dtype)[...] = v3
    full = rng.integers(-1000, 1000, (1, 2, 8, 10, 12), dtype=np.int16)  # (t, c, z, y, x)
    half = full[:, :, ::2, ::2, ::2].copy()
    write_ome(images / "c.zarr", [full, half], zarr_format=2)
    sharded = patchfeed.open_array(images / "b.zarr")
    assert (sharded.format, sharded.chunks, sharded.blocks) == ("zarr v3", (1, 6, 8, 8),
                                                                (1, 3, 4, 4))
    assert patchfeed.open_array(images / "a.zarr").format == "zarr v2"

    monkeypatch.setitem(sys.modules, "zarr", None)  # no zarr-python from here on
    out = tmp_path / "out"
    report = convert(images, out, progress=False)
    assert report.converted == ["a", "b", "c"]
    for cid, expected in (("a", v2), ("b", v3), ("c", full[0])):
        arr = patchfeed.open_array(out / f"{cid}.b2nd")
        assert arr.dtype == np.float32 and arr.shape == expected.shape
        np.testing.assert_array_equal(arr[...], expected.astype(np.float32))
    convert([images / "a.zarr"], tmp_path / "keep", image_dtype=None, progress=False)
    kept = patchfeed.open_array(tmp_path / "keep" / "a.b2nd")
    assert kept.dtype == np.dtype("<f4")
    np.testing.assert_array_equal(kept[...], v2)

    # --level picks an OME-Zarr level; another level later is another setting.
    proc = run_cli("convert", images / "c.zarr", tmp_path / "half", "--level", "1",
                   "--no-progress")
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(patchfeed.open_array(tmp_path / "half" / "c.b2nd")[...],
                                  half[0].astype(np.float32))
    with pytest.raises(ConvertError, match=r"level=1; now level=0"):
        convert(images / "c.zarr", tmp_path / "half", progress=False)
    with pytest.raises(ConvertError, match=r"c.zarr: .*OME-Zarr level 2 of 2"):
        convert(images / "c.zarr", tmp_path / "o2", level=2, progress=False)
    with pytest.raises(ConvertError, match="no input is either"):
        convert(images / "a.zarr", tmp_path / "o2", level=1, progress=False)


def test_zarr_group_of_cases(tmp_path):
    zarr = pytest.importorskip("zarr")
    rng = np.random.default_rng(5)
    root = tmp_path / "cases.zarr"
    group = zarr.open_group(str(root), mode="w")  # zarr v3
    # p1: a group with an "image" array and a "label" array.
    p1_image = rng.standard_normal((2, 6, 7, 8)).astype(np.float32)
    p1_label = rng.integers(0, 3, (6, 7, 8), dtype=np.uint8)
    p1 = group.create_group("p1")
    p1.create_array("image", shape=p1_image.shape, chunks=(1, 4, 4, 4),
                    dtype=p1_image.dtype)[...] = p1_image
    p1.create_array("label", shape=p1_label.shape, chunks=(4, 4, 4),
                    dtype=p1_label.dtype)[...] = p1_label
    # p2: an OME-Zarr 0.5 image and a "seg" array.
    p2_full = rng.integers(0, 500, (1, 2, 6, 7, 8), dtype=np.uint16)
    group.create_group("p2")
    write_ome(root / "p2" / "image", [p2_full, p2_full[:, :, ::2, ::2, ::2].copy()], 3)
    p2_seg = rng.integers(0, 2, (6, 7, 8)).astype(np.int32)
    zarr.open_group(str(root / "p2")).create_array(
        "seg", shape=p2_seg.shape, chunks=(4, 4, 4), dtype=p2_seg.dtype)[...] = p2_seg
    group.create_group("metadata")  # no image: not a case
    (root / "README").write_text("not a case")

    cases = find_cases(root)
    assert [(c.case_id, c.images, c.label) for c in cases] == [
        ("p1", (str(root / "p1" / "image"),), str(root / "p1" / "label")),
        ("p2", (str(root / "p2" / "image"),), str(root / "p2" / "seg"))]
    report = convert(root, tmp_path / "out", progress=False)
    assert report.converted == ["p1", "p2"] and report.has_labels
    out = tmp_path / "out"
    for cid, image, label in (("p1", p1_image, p1_label), ("p2", p2_full[0], p2_seg)):
        np.testing.assert_array_equal(patchfeed.open_array(out / f"{cid}.b2nd")[...],
                                      image.astype(np.float32))
        seg = patchfeed.open_array(out / f"{cid}_seg.b2nd")
        assert seg.dtype == np.int16
        np.testing.assert_array_equal(seg[...], label[None])
    # The same arrays named in a list: zarr paths need no .zarr extension.
    listed = find_cases([{"image": root / "p1" / "image", "label": root / "p1" / "label"}])
    assert [(c.case_id, c.label) for c in listed] == [("label", str(root / "p1" / "label"))]

    with pytest.raises(ConvertError, match="labels= goes with a folder"):
        find_cases(root, labels=tmp_path)
    p1.create_array("labels", shape=(6, 7, 8), chunks=(4, 4, 4), dtype="uint8")
    with pytest.raises(ConvertError, match=r"p1: holds 'label' and 'labels'"):
        find_cases(root)

    # A group of arrays (zarr v2 here): one image-only case per array.
    flat = zarr.open_group(str(tmp_path / "flat.zarr"), mode="w", zarr_format=2)
    x, y = np.arange(60, dtype=np.int16).reshape(3, 4, 5), np.ones((1, 5, 4, 3), np.uint8)
    flat.create_array("x", shape=x.shape, chunks=x.shape, dtype=x.dtype)[...] = x
    flat.create_array("y", shape=y.shape, chunks=y.shape, dtype=y.dtype)[...] = y
    report = convert(tmp_path / "flat.zarr", tmp_path / "flat_out", progress=False)
    assert report.converted == ["x", "y"] and not report.has_labels
    np.testing.assert_array_equal(patchfeed.open_array(tmp_path / "flat_out" / "x.b2nd")[...],
                                  x[None].astype(np.float32))
    np.testing.assert_array_equal(patchfeed.open_array(tmp_path / "flat_out" / "y.b2nd")[...],
                                  y.astype(np.float32))


def test_zarr_input_changes_are_detected_on_resume(tmp_path):
    zarr = pytest.importorskip("zarr")
    path, out = tmp_path / "vol.zarr", tmp_path / "out"
    z = zarr.create_array(str(path), shape=(8, 8, 8), chunks=(4, 4, 4), dtype="int16")
    data = np.zeros((8, 8, 8), np.int16)
    data[:4] = np.arange(4 * 8 * 8, dtype=np.int16).reshape(4, 8, 8)
    z[:4] = data[:4]  # chunks of fill values (zeros) are not stored
    assert convert(path, out, progress=False).converted == ["vol"]
    assert convert(path, out, progress=False).skipped == ["vol"]

    data[4:] = 5  # new chunk files
    z[4:] = data[4:]
    assert convert(path, out, progress=False).converted == ["vol"]
    np.testing.assert_array_equal(patchfeed.open_array(out / "vol.b2nd")[0], data)

    chunk = next(p for p in path.rglob("*") if p.is_file() and p.name != "zarr.json")
    st = chunk.stat()  # same bytes, an older mtime (a backup restored with cp -p, say)
    os.utime(chunk, ns=(st.st_atime_ns, st.st_mtime_ns - 10**9))
    assert convert(path, out, progress=False).converted == ["vol"]
    assert convert(path, out, progress=False).skipped == ["vol"]


def test_missing_nibabel_says_what_to_install(tmp_path, monkeypatch):
    save_nifti(tmp_path / "a.nii.gz", np.zeros((4, 4, 4), np.float32))
    monkeypatch.setitem(sys.modules, "nibabel", None)
    with pytest.raises(ImportError, match=r"pip install 'patchfeed\[nifti\]'"):
        convert(tmp_path / "a.nii.gz", tmp_path / "out", progress=False)


def test_bad_inputs_name_the_file(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    save_nifti(d / "a_0000.nii.gz", np.zeros((8, 8, 8), np.float32))
    save_nifti(d / "a_0001.nii.gz", np.zeros((8, 8, 7), np.float32))
    with pytest.raises(ConvertError, match=r"a_0000.nii.gz \(8, 8, 8\), a_0001.nii.gz "
                                           r"\(8, 8, 7\)"):
        convert(d, tmp_path / "out", progress=False)
    assert not (tmp_path / "out" / "a.b2nd").exists()

    save_nifti(d / "a_0001.nii.gz", np.zeros((8, 8, 8), np.float32))
    labels = tmp_path / "labels"
    labels.mkdir()
    save_nifti(labels / "a.nii.gz", np.full((8, 8, 8), 0.5, np.float32))
    with pytest.raises(ConvertError, match=r"a.nii.gz: a label map needs integer values"):
        convert(d, tmp_path / "out", labels=labels, progress=False)
    assert names(tmp_path / "out") == [".patchfeed_convert.json"]  # no image without its label

    big = np.zeros((8, 8, 8), np.int32)
    big[0, 0, 0] = 40000
    save_nifti(labels / "a.nii.gz", big)
    with pytest.raises(ConvertError, match=r"values 0\.\.40000 do not fit int16.*int32"):
        convert(d, tmp_path / "out", labels=labels, progress=False)
    convert(d, tmp_path / "o32", labels=labels, label_dtype="int32", progress=False)
    seg = patchfeed.open_array(tmp_path / "o32" / "a_seg.b2nd")
    assert seg.dtype == np.int32 and seg[0, 0, 0, 0] == 40000

    np.save(tmp_path / "six.npy", np.zeros((1, 1, 2, 2, 2, 2)))
    with pytest.raises(ConvertError, match=r"six.npy: shape \(1, 1, 2, 2, 2, 2\) is not"):
        convert(tmp_path / "six.npy", tmp_path / "o3", progress=False)
    (tmp_path / "x.mha").write_bytes(b"")
    with pytest.raises(ConvertError, match=r"x.mha: unsupported file type"):
        convert([{"image": tmp_path / "x.mha"}], tmp_path / "o3", progress=False)
    (tmp_path / "bad.nii.gz").write_bytes(b"not gzip")
    with pytest.raises(ConvertError, match=r"bad.nii.gz: cannot read"):
        convert(tmp_path / "bad.nii.gz", tmp_path / "o3", progress=False)
    with pytest.raises(ConvertError, match=r"no label file for 1 cases.*'b'"):
        save_nifti(d / "b_0000.nii.gz", np.zeros((8, 8, 8), np.float32))
        save_nifti(d / "b_0001.nii.gz", np.zeros((8, 8, 8), np.float32))
        convert(d, tmp_path / "o4", labels=labels, progress=False)
    with pytest.raises(ConvertError, match="holds the input"):
        convert(d, d, progress=False)


def test_progress_line_without_tqdm(tmp_path, monkeypatch, capsys):
    np.save(tmp_path / "a.npy", np.zeros((4, 4, 4)))
    np.save(tmp_path / "b.npy", np.zeros((4, 4, 4)))
    monkeypatch.setitem(sys.modules, "tqdm", None)
    convert([tmp_path / "a.npy", tmp_path / "b.npy"], tmp_path / "out")
    assert capsys.readouterr().err.splitlines() == ["patchfeed convert: 1/2 a",
                                                    "patchfeed convert: 2/2 b"]
    convert([tmp_path / "a.npy", tmp_path / "b.npy"], tmp_path / "out", progress=False)
    assert capsys.readouterr().err == ""


def package_env() -> dict:
    """The environment for a subprocess importing this patchfeed (the path as imported, not
    resolved: a symlinked package overlay stays in front)."""
    env = dict(os.environ)
    parent = str(pathlib.Path(patchfeed.__file__).parent.parent)
    env["PYTHONPATH"] = parent + os.pathsep + env.get("PYTHONPATH", "")
    return env


def run_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "patchfeed", *map(str, args)],
                          env=package_env(), capture_output=True, text=True, timeout=60)


def test_cli(raw, tmp_path):
    root, sources = raw
    out = tmp_path / "out"
    proc = run_cli("convert", root, out, "--patch", "8,8,4", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "3 converted, 0 skipped" in proc.stdout and "from_nnunet_folder" in proc.stdout
    check_outputs(out, sources)
    assert patchfeed.open_array(out / "case_000.b2nd").blocks == (1, 8, 8, 4)

    proc = run_cli("convert", root, out, "--clevel", "3", "--no-progress")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("patchfeed convert: error: ") and "clevel=3" in proc.stderr
    proc = run_cli("convert", tmp_path / "missing.nii.gz", tmp_path / "o2")
    assert proc.returncode == 1
    assert f"no such file or folder: {tmp_path / 'missing.nii.gz'}" in proc.stderr
    assert run_cli("convert", root).returncode == 2  # usage error, as argparse exits
    assert "  convert INPUT OUT_DIR" in run_cli("--help").stdout
