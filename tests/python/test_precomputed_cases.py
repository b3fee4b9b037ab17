# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Precomputed volumes the way a connectomics user names them: a scale by its folder
(`<layer>/<key>`), key or resolution in Python and the CLI, boxes in the scale's own voxel
coordinates (as cloud-volume and tensorstore take them), chunks never written refused on
request, and `Dataset.from_precomputed` pairing image and segmentation layers by name and
resolution. Layers are written by cloud-volume; tensorstore reads the same voxels."""

from __future__ import annotations

import json
import pathlib
import subprocess

import numpy as np
import patchfeed
import pytest
from storage_servers import fault_proxy, http_server, s3_bucket, seaweed  # noqa: F401
from test_precomputed import CHUNK, OFFSET, SIZE, _padded, _view, _write_layer

cloudvolume = pytest.importorskip("cloudvolume")
CloudVolume = cloudvolume.CloudVolume

PATCH = (4, 8, 6)  # z, y, x


def _add_half_scale(layer: pathlib.Path, data: np.ndarray, compress="gzip") -> CloudVolume:
    """Scale 1 of `layer` at (8, 8, 40): `data` (x, y, z, c at scale 0) halved in x and y.
    (tensorstore reads no `.gz` chunk files: compress=False for a layer it reads.)"""
    vol = CloudVolume(f"file://{layer}")
    vol.add_scale([2, 2, 1], chunk_size=[8, 8, 4])
    vol.commit_info()
    mip1 = CloudVolume(f"file://{layer}", mip=1, compress=compress)
    mip1[mip1.bounds] = data[::2, ::2][:mip1.shape[0], :mip1.shape[1]]
    return mip1


def _write_labels(layer: pathlib.Path, like: CloudVolume, seed: int) -> np.ndarray:
    """A uint32 segmentation layer with one scale covering exactly `like`'s voxels."""
    info = CloudVolume.create_new_info(
        num_channels=1, layer_type="segmentation", data_type="uint32", encoding="raw",
        resolution=list(like.resolution), voxel_offset=list(like.voxel_offset),
        chunk_size=[8, 8, 4], volume_size=list(like.shape[:3]))
    vol = CloudVolume(f"file://{layer}", info=info, compress="gzip")
    vol.commit_info()
    labels = np.random.default_rng(seed).integers(0, 4, size=vol.shape, dtype=np.uint32)
    vol[vol.bounds] = labels
    return labels


def test_a_scale_by_its_folder_key_or_resolution_and_boxes_in_its_coordinates(tmp_path,
                                                                              cli_path):
    layer = tmp_path / "layer"
    data = _write_layer(layer, "uint16", 1, "gzip")
    mip1 = _add_half_scale(layer, data, compress=False)
    key = mip1.info["scales"][1]["key"]
    by_level = patchfeed.open_array(str(layer), level=1)
    by_folder = patchfeed.open_array(f"{layer}/{key}")
    assert by_folder.shape == by_level.shape and np.array_equal(by_folder[...], by_level[...])
    offset = tuple(int(v) for v in mip1.voxel_offset)
    assert by_folder.origin == (0,) + offset[::-1]
    assert patchfeed.open_array(str(layer)).origin == (0,) + OFFSET[::-1]
    with pytest.raises(Exception, match=r"no scale with key or resolution 'nope'.*4_4_40"):
        patchfeed.open_array(f"{layer}/nope")

    # Boxes in the scale's voxel coordinates: tensorstore's domain is those coordinates.
    ts = pytest.importorskip("tensorstore")
    store = ts.open({"driver": "neuroglancer_precomputed", "kvstore": f"file://{layer}",
                     "scale_index": 1}).result()
    ox, oy, oz = offset
    x0, y0, z0 = ox + 3, oy + 2, oz + 1
    want = np.asarray(store[x0:x0 + 9, y0:y0 + 5, z0:z0 + 4].read().result())
    got = by_folder.read_box([0, z0, y0, x0], [1, z0 + 4, y0 + 5, x0 + 9], absolute=True)
    assert np.array_equal(got, _view(want))
    # Partly outside the volume: padding, as for boxes from 0.
    whole = by_folder[...]
    start, stop = [0, oz - 2, oy + 1, ox - 3], [1, oz + 3, oy + 6, ox + 4]
    got = by_folder.read_box(start, stop, absolute=True)
    assert np.array_equal(got, _padded(whole, [a - o for a, o in zip(start, by_folder.origin)],
                                       [b - o for b, o in zip(stop, by_folder.origin)]))

    # The CLI: --scale by key or resolution, LAYER/KEY, --absolute, the origin in `info`.
    for args in (["--scale", key], ["--scale", "8,8,40"], []):
        path = str(layer) if args else f"{layer}/{key}"
        meta = json.loads(subprocess.run([str(cli_path), "info", path, *args], check=True,
                                         capture_output=True, text=True).stdout)
        assert meta["shape"] == list(by_level.shape) and meta["scale_key"] == key
        assert meta["origin"] == list(by_folder.origin)
    out = tmp_path / "box.npy"
    subprocess.run([str(cli_path), "read", str(layer), "--scale", key, "--absolute", "--box",
                    f"0:1,{oz - 2}:{oz + 3},{oy + 1}:{oy + 6},{ox - 3}:{ox + 4}", "--out",
                    str(out), "--npy"], check=True)
    assert np.array_equal(np.load(out), got)
    refused = subprocess.run([str(cli_path), "info", str(layer), "--level", "1", "--scale", key],
                             capture_output=True, text=True)
    assert refused.returncode != 0 and "not both" in refused.stderr


def test_chunks_never_written_can_be_refused(tmp_path, cli_path):
    layer = tmp_path / "layer"
    data = _write_layer(layer, "uint8", 1, "gzip", missing=True)
    first = f"{OFFSET[0]}-{OFFSET[0] + CHUNK[0]}_{OFFSET[1]}-{OFFSET[1] + CHUNK[1]}_" \
            f"{OFFSET[2]}-{OFFSET[2] + CHUNK[2]}"
    strict = patchfeed.open_array(str(layer), fill_missing=False)
    with pytest.raises(FileNotFoundError, match=f"{first}: this chunk was never written"):
        strict[...]
    # Boxes over written chunks alone read as before.
    box = ([0, 0, 0, CHUNK[0]], [1, SIZE[2], SIZE[1], SIZE[0]])
    assert np.array_equal(strict.read_box(*box), _view(data)[:, :, :, CHUNK[0]:])
    # The same through the CLI and a loader over a dataset that refuses them.
    failed = subprocess.run([str(cli_path), "read", str(layer), "--no-fill-missing", "--out",
                             str(tmp_path / "x.raw")], capture_output=True, text=True)
    assert failed.returncode != 0 and first in failed.stderr
    ds = patchfeed.Dataset.from_precomputed(layer, fill_missing=False)
    assert ds.paths(0) == [f"{layer}/4_4_40"]
    with patchfeed.Loader(ds, (SIZE[2], SIZE[1], SIZE[0]), batch_size=1, num_threads=1,
                          foreground="off", as_numpy=True) as loader:
        with pytest.raises(FileNotFoundError, match="never written"):
            next(iter(loader))
    # By default they are zeros, as cloud-volume's fill_missing=True reads them.
    filled = patchfeed.Dataset.from_precomputed(layer).open_array(0, "image")
    assert np.array_equal(filled[...], _view(data))


def _volumes(root: pathlib.Path, n: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """`n` volumes, each an image layer (scales at 4,4,40 and 8,8,40) and a segmentation layer
    at 8,8,40 only; returns (image, labels) at 8,8,40 as (c, z, y, x)."""
    out = {}
    for i in range(n):
        vol = root / f"vol{i}"
        data = _write_layer(vol / "image", "uint8", 1, "gzip", seed=i)
        mip1 = _add_half_scale(vol / "image", data)
        labels = _write_labels(vol / "segmentation", mip1, seed=10 + i)
        out[f"vol{i}"] = (_view(np.asarray(mip1[mip1.bounds])), _view(labels))
    return out


def test_from_precomputed_pairs_image_and_segmentation_layers(tmp_path):
    volumes = _volumes(tmp_path, 2)
    (tmp_path / "notes").mkdir()  # a folder without the image layer is not a case
    ds = patchfeed.Dataset.from_precomputed(tmp_path, scale=(8, 8, 40))
    assert ds.case_ids == ["vol0", "vol1"] and ds.array_names == ["image", "seg"]
    assert ds.paths(1) == [f"{tmp_path}/vol1/image/8_8_40", f"{tmp_path}/vol1/segmentation/8_8_40"]
    # The same scale by index or key; one volume alone as its own folder.
    assert patchfeed.Dataset.from_precomputed(tmp_path, scale=1).paths(0) == ds.paths(0)
    assert patchfeed.Dataset.from_precomputed(tmp_path, scale="8_8_40").paths(0) == ds.paths(0)
    one = patchfeed.Dataset.from_precomputed(tmp_path / "vol1", scale=(8, 8, 40))
    assert one.case_ids == ["vol1"] and one.paths(0) == ds.paths(1)

    with patchfeed.Loader(ds, PATCH, batch_size=3, seed=4, num_threads=2, as_numpy=True,
                          foreground_cache_dir=str(tmp_path / "fg"),
                          pad_values={"seg": 0}) as loader:
        for _, batch in zip(range(4), loader):
            for i, s in enumerate(loader.last_batch.samples):
                image, labels = volumes[ds.case_ids[s.case_index]]
                start = [0, *s.box_start]
                stop = [1] + [a + p for a, p in zip(s.box_start, PATCH)]
                assert np.array_equal(batch["image"][i], _padded(image, start, stop))
                assert np.array_equal(batch["seg"][i], _padded(labels, start, stop))


def test_from_precomputed_refuses_layers_that_do_not_pair(tmp_path):
    _volumes(tmp_path, 2)
    # Scale 0 of the image (4,4,40) has no segmentation scale at its resolution.
    with pytest.raises(ValueError, match=r"segmentation: no scale of resolution \(4.0, 4.0, 40.0\)"):
        patchfeed.Dataset.from_precomputed(tmp_path)
    with pytest.raises(ValueError, match="no scale with key '2_2_2'"):
        patchfeed.Dataset.from_precomputed(tmp_path, scale="2_2_2")
    # Images alone need no segmentation.
    alone = patchfeed.Dataset.from_precomputed(tmp_path, label=())
    assert alone.array_names == ["image"] and alone.paths(0) == [f"{tmp_path}/vol0/image/4_4_40"]
    # A segmentation covering other voxels than the image.
    info_path = tmp_path / "vol1" / "segmentation" / "info"
    info = json.loads(info_path.read_text())
    info["scales"][0]["size"][0] -= 1
    info_path.write_text(json.dumps(info))
    with pytest.raises(ValueError, match="vol1/segmentation/8_8_40: covers .* must cover the same"):
        patchfeed.Dataset.from_precomputed(tmp_path, scale=(8, 8, 40))
    # One volume without a segmentation among volumes with one.
    (tmp_path / "vol1" / "segmentation" / "info").rename(tmp_path / "vol1" / "seg_info")
    with pytest.raises(ValueError, match=r"1 cases have a segmentation layer and 1 do not"):
        patchfeed.Dataset.from_precomputed(tmp_path, scale=(8, 8, 40))
    with pytest.raises(ValueError, match="no precomputed layer 'img'"):
        patchfeed.Dataset.from_precomputed(tmp_path, image="img")
    # A segmentation layer named by the caller is never silently left out.
    with pytest.raises(ValueError, match="vol0: no precomputed layer 'labels' .*label="):
        patchfeed.Dataset.from_precomputed(tmp_path, label="labels", scale=(8, 8, 40))


def test_a_cutout_over_http_requests_its_chunks_all_at_once(tmp_path, http_server, fault_proxy):
    """`read_box` of a remote layer asks for every chunk it needs before waiting for any: the
    proxy sees many requests in flight, and the box costs a few round trips, not one per
    chunk. The voxels equal the local layer's."""
    data = _write_layer(tmp_path / "layer", "uint16", 1, False)  # no `.gz` files over HTTP
    proxy = fault_proxy(http_server.url)
    proxy.delay_s = 0.05
    remote = patchfeed.open_array(f"{proxy.url}/layer")
    proxy.reset_stats()
    got = remote.read_box([0, 0, 0, 0], [1, SIZE[2], SIZE[1], SIZE[0]])
    stats = proxy.stats()
    assert np.array_equal(got, _view(data))
    chunks = np.prod([-(-s // c) for s, c in zip(SIZE, CHUNK)])  # 3 x 4 x 4 = 48
    assert stats["total_requests"] == chunks, stats  # one GET per chunk, no HEAD
    assert stats["max_in_flight"] >= chunks // 2, stats
    # A chunk larger than an open's usual first read (512 KiB) still comes in one request.
    info = CloudVolume.create_new_info(
        num_channels=1, layer_type="image", data_type="uint8", encoding="raw",
        resolution=[4, 4, 40], voxel_offset=[0, 0, 0], chunk_size=[128, 128, 64],
        volume_size=[128, 128, 64])
    big = CloudVolume(f"file://{tmp_path / 'big'}", info=info, compress=False)
    big.commit_info()
    voxels = np.random.default_rng(5).integers(0, 255, (128, 128, 64, 1), dtype=np.uint8)
    big[:, :, :] = voxels
    opened = patchfeed.open_array(f"{proxy.url}/big")
    proxy.reset_stats()
    assert np.array_equal(opened[...], _view(voxels))
    assert proxy.stats()["requests"] == {"GET": 1}
    # Absolute boxes and missing chunks refused go the same way.
    box = ([0, OFFSET[2], OFFSET[1], OFFSET[0]], [1, OFFSET[2] + 4, OFFSET[1] + 8, OFFSET[0] + 16])
    assert np.array_equal(remote.read_box(*box, absolute=True), _view(data)[:, :4, :8, :16])


def test_cli_read_of_a_remote_cutout_is_the_local_one(tmp_path, http_server, cli_path):
    _write_layer(tmp_path / "layer", "uint8", 1, False)
    for where, name in ((f"{http_server.url}/layer", "remote.npy"), (str(tmp_path / "layer"),
                                                                     "local.npy")):
        subprocess.run([str(cli_path), "read", where, "--box", "0:1,2:11,-3:20,5:38", "--npy",
                        "--out", str(tmp_path / name)], check=True)
    assert np.array_equal(np.load(tmp_path / "remote.npy"), np.load(tmp_path / "local.npy"))


def test_from_precomputed_over_s3_reads_the_local_batches(tmp_path, seaweed, s3_bucket):
    _volumes(tmp_path / "vols", 2)
    seaweed.put_tree(s3_bucket, "vols", tmp_path / "vols")
    options = {"endpoint_url": seaweed.endpoint, "key": seaweed.admin_key,
               "secret": seaweed.admin_secret, "region": seaweed.region}
    local = patchfeed.Dataset.from_precomputed(tmp_path / "vols", scale=(8, 8, 40))
    remote = patchfeed.Dataset.from_precomputed(f"s3://{s3_bucket}/vols", scale=(8, 8, 40),
                                                storage_options=options)
    assert remote.case_ids == local.case_ids
    assert remote.paths(0) == [f"s3://{s3_bucket}/vols/vol0/image/8_8_40",
                               f"s3://{s3_bucket}/vols/vol0/segmentation/8_8_40"]
    batches = []
    for ds in (local, remote):
        with patchfeed.Loader(ds, PATCH, batch_size=2, seed=8, num_threads=2, as_numpy=True,
                              foreground="off", pad_values={"seg": 0}) as loader:
            batches.append([(b["image"].copy(), b["seg"].copy())
                            for _, b in zip(range(3), loader)])
            metrics = loader.metrics()
    for (li, ls), (ri, rs) in zip(*batches):
        assert np.array_equal(li, ri) and np.array_equal(ls, rs)
    assert metrics["io_fallback_reads"] == 0, metrics


def test_convert_takes_a_scale_by_its_folder(tmp_path):
    from patchfeed.convert import convert

    volumes = _volumes(tmp_path / "vols", 1)
    image, labels = volumes["vol0"]
    vol = tmp_path / "vols" / "vol0"
    report = convert([{"image": str(vol / "image" / "8_8_40"),
                       "label": str(vol / "segmentation" / "8_8_40")}], tmp_path / "out",
                     image_dtype="float32", progress=False)
    assert report.converted == ["segmentation"]  # named by the label's layer
    got = patchfeed.open_array(str(tmp_path / "out" / "segmentation.b2nd"))[...]
    assert np.array_equal(got, image.astype(np.float32))
    seg = patchfeed.open_array(str(tmp_path / "out" / "segmentation_seg.b2nd"))[...]
    assert np.array_equal(seg, labels.astype(np.int16))
