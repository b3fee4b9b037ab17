# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Neuroglancer precomputed layers written by cloud-volume (from PyPI), read by patchfeed:
every box equals cloud-volume's cutout of the same voxels (and tensorstore's
neuroglancer_precomputed driver agrees), whatever the data type, channels, scale, voxel
offset, gzip or not, and with chunks never written; damaged layers give named errors."""

from __future__ import annotations

import gzip
import json
import pathlib
import subprocess

import numpy as np
import patchfeed
import pytest
from storage_servers import fault_proxy, s3_bucket, seaweed  # noqa: F401

cloudvolume = pytest.importorskip("cloudvolume")
CloudVolume = cloudvolume.CloudVolume

SIZE = (40, 27, 13)  # x, y, z: several chunks, the last ones clipped
CHUNK = (16, 8, 4)
OFFSET = (3, -5, 7)


def _write_layer(root: pathlib.Path, dtype: str, channels: int, compress, seed: int = 0,
                 layer_type: str = "image", missing: bool = False) -> np.ndarray:
    """A layer of SIZE voxels at OFFSET, scale 0 only; returns its voxels as (x, y, z, c).
    With `missing`, the first chunk row along x is never written (cloud-volume writes no file)."""
    info = CloudVolume.create_new_info(
        num_channels=channels, layer_type=layer_type, data_type=dtype, encoding="raw",
        resolution=[4, 4, 40], voxel_offset=list(OFFSET), chunk_size=list(CHUNK),
        volume_size=list(SIZE))
    vol = CloudVolume(f"file://{root}", info=info, compress=compress)
    vol.commit_info()
    rng = np.random.default_rng(seed)
    shape = SIZE + (channels,)
    if np.dtype(dtype).kind == "f":
        data = rng.standard_normal(shape).astype(dtype)
    else:
        data = rng.integers(0, np.iinfo(dtype).max, size=shape, dtype=dtype, endpoint=True)
    x0 = OFFSET[0] + (CHUNK[0] if missing else 0)
    if missing:
        data[:CHUNK[0]] = 0
    vol[x0:OFFSET[0] + SIZE[0], OFFSET[1]:OFFSET[1] + SIZE[1], OFFSET[2]:OFFSET[2] + SIZE[2]] = \
        data[x0 - OFFSET[0]:]
    return data


def _write_segmentation(root: pathlib.Path, labels: np.ndarray) -> None:
    """`labels` (x, y, z, 1 uint32, SIZE at OFFSET) as a compressed_segmentation layer."""
    info = CloudVolume.create_new_info(
        num_channels=1, layer_type="segmentation", data_type="uint32",
        encoding="compressed_segmentation", resolution=[4, 4, 40], voxel_offset=list(OFFSET),
        chunk_size=list(CHUNK), volume_size=list(SIZE), compressed_segmentation_block_size=[8, 4, 2])
    vol = CloudVolume(f"file://{root}", info=info)
    vol.commit_info()
    vol[vol.bounds] = labels


def _view(xyzc: np.ndarray) -> np.ndarray:
    """cloud-volume's (x, y, z, c) as patchfeed's (c, z, y, x)."""
    return xyzc.transpose(3, 2, 1, 0)


def _random_boxes(shape, n: int, seed: int):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        start = [int(rng.integers(-3, s)) for s in shape]
        stop = [a + int(rng.integers(1, 2 * c + 3)) for a, c in zip(start, (1,) + CHUNK[::-1])]
        yield start, stop


def _padded(want: np.ndarray, start, stop) -> np.ndarray:
    out = np.zeros([b - a for a, b in zip(start, stop)], want.dtype)
    src = tuple(slice(max(a, 0), min(b, s)) for a, b, s in zip(start, stop, want.shape))
    dst = tuple(slice(s.start - a, s.stop - a) for s, a in zip(src, start))
    if all(s.start < s.stop for s in src):
        out[dst] = want[src]
    return out


def _assert_boxes_equal(arr, want: np.ndarray, seed: int, n: int = 25) -> None:
    assert arr.shape == want.shape and arr.dtype == want.dtype
    assert np.array_equal(arr[...], want)
    for start, stop in _random_boxes(want.shape, n, seed):
        got = arr.read_box(start, stop, pad=0)
        assert np.array_equal(got, _padded(want, start, stop)), (start, stop)


@pytest.mark.parametrize("dtype,channels,compress", [
    ("uint8", 1, "gzip"), ("uint16", 3, "gzip"), ("uint32", 1, False), ("uint64", 1, "gzip"),
    ("float32", 3, False), ("float32", 1, "gzip")])
def test_reads_equal_cloud_volume(tmp_path, dtype, channels, compress):
    data = _write_layer(tmp_path / "layer", dtype, channels, compress, seed=channels)
    vol = CloudVolume(f"file://{tmp_path / 'layer'}")
    cutout = np.asarray(vol[vol.bounds])  # cloud-volume's own read of what it wrote
    assert np.array_equal(cutout, data)
    arr = patchfeed.open_array(str(tmp_path / "layer"))
    assert arr.shape == (channels,) + SIZE[::-1]
    _assert_boxes_equal(arr, _view(cutout), seed=7)


def test_missing_chunks_read_as_zero(tmp_path):
    data = _write_layer(tmp_path / "layer", "uint16", 1, "gzip", missing=True)
    written = {p.name for p in (tmp_path / "layer" / "4_4_40").iterdir()}
    assert not any(name.startswith(f"{OFFSET[0]}-") for name in written)
    vol = CloudVolume(f"file://{tmp_path / 'layer'}", fill_missing=True)
    assert np.array_equal(np.asarray(vol[vol.bounds]), data)
    _assert_boxes_equal(patchfeed.open_array(str(tmp_path / "layer")), _view(data), seed=3)


def test_each_scale_with_its_voxel_offset(tmp_path):
    data = _write_layer(tmp_path / "layer", "uint8", 1, "gzip")
    vol = CloudVolume(f"file://{tmp_path / 'layer'}")
    vol.add_scale([2, 2, 1], chunk_size=[8, 8, 4])
    vol.commit_info()
    mip1 = CloudVolume(f"file://{tmp_path / 'layer'}", mip=1, compress="gzip")
    down = data[::2, ::2][:mip1.shape[0], :mip1.shape[1]]
    mip1[mip1.bounds] = down[:, :, :, :]
    assert tuple(mip1.voxel_offset) != tuple(OFFSET)
    cutout = np.asarray(mip1[mip1.bounds])
    arr = patchfeed.open_array(str(tmp_path / "layer"), level=1)
    assert arr.shape == (1,) + tuple(mip1.shape[:3])[::-1]
    _assert_boxes_equal(arr, _view(cutout), seed=5)
    _assert_boxes_equal(patchfeed.open_array(str(tmp_path / "layer")), _view(data), seed=6)
    # The same scale by its key or its resolution.
    key = mip1.info["scales"][1]["key"]
    by_key = patchfeed.open_array(str(tmp_path / "layer"), scale=key)
    by_resolution = patchfeed.open_array(str(tmp_path / "layer"), scale=(8, 8, 40))
    assert by_key.shape == by_resolution.shape == arr.shape
    assert np.array_equal(by_resolution[...], arr[...])
    with pytest.raises(Exception, match=r"no scale with key or resolution '3,3,3'.*4_4_40"):
        patchfeed.open_array(str(tmp_path / "layer"), scale=(3, 3, 3))


def test_tensorstore_reads_the_same_voxels(tmp_path):
    ts = pytest.importorskip("tensorstore")
    data = _write_layer(tmp_path / "layer", "uint16", 3, False)
    store = ts.open({"driver": "neuroglancer_precomputed",
                     "kvstore": f"file://{tmp_path / 'layer'}"}).result()
    via_ts = np.asarray(store.read().result())  # (x, y, z, c) in the scale's coordinates
    assert np.array_equal(via_ts, data)
    assert np.array_equal(patchfeed.open_array(str(tmp_path / "layer"))[...], _view(via_ts))


def test_damaged_layers_give_named_errors(tmp_path):
    _write_layer(tmp_path / "layer", "uint16", 1, "gzip")
    scale = tmp_path / "layer" / "4_4_40"
    chunk = sorted(scale.iterdir())[0]
    arr = patchfeed.open_array(str(tmp_path / "layer"))
    chunk.write_bytes(chunk.read_bytes()[:30])  # gzip cut short
    with pytest.raises(Exception, match=chunk.name):
        arr[...]
    chunk.write_bytes(gzip.compress(b"\0" * 10))  # gzip of the wrong size
    with pytest.raises(Exception, match=f"{chunk.name}.*"):
        arr[...]
    chunk.write_bytes(b"x" * 100)  # neither raw nor gzip
    with pytest.raises(Exception, match="neither the chunk's"):
        arr[...]

    info = json.loads((tmp_path / "layer" / "info").read_text())
    info["scales"][0]["size"] = [40, -27, 13]
    (tmp_path / "layer" / "info").write_text(json.dumps(info))
    with pytest.raises(Exception, match=r"info.*scale 0.*'size'\[1\]"):
        patchfeed.open_array(str(tmp_path / "layer"))


def test_unsupported_encodings_and_sharding_are_refused_by_name(tmp_path):
    _write_layer(tmp_path / "layer", "uint8", 1, "gzip")
    info = json.loads((tmp_path / "layer" / "info").read_text())
    info["scales"][0]["encoding"] = "fpzip"
    (tmp_path / "layer" / "info").write_text(json.dumps(info))
    with pytest.raises(NotImplementedError, match="encoding 'fpzip'"):
        patchfeed.open_array(str(tmp_path / "layer"))


def _loader_batches(dataset, n: int, **kwargs):
    out = []
    with patchfeed.Loader(dataset, (4, 10, 12), batch_size=2, seed=9, num_threads=2,
                          as_numpy=True, foreground="off", **kwargs) as loader:
        for _, batch in zip(range(n), loader):
            out.append((np.array(batch["image"]),
                        [(s.case_index, tuple(s.box_start)) for s in loader.last_batch.samples]))
        metrics = loader.metrics()
    return out, metrics


def test_loader_reads_precomputed_cases_locally_and_over_s3(tmp_path, seaweed, s3_bucket):
    layers = {f"case{i}": _view(_write_layer(tmp_path / f"case{i}", "uint16", 1, "gzip", seed=i,
                                             missing=i == 1))
              for i in range(2)}
    local = patchfeed.Dataset.from_list(["image"], {k: [str(tmp_path / k)] for k in layers})
    got, _ = _loader_batches(local, 4)
    for image, samples in got:
        for i, (case, start) in enumerate(samples):
            want = _padded(layers[f"case{case}"], [0] + list(start),
                           [1] + [a + p for a, p in zip(start, (4, 10, 12))])
            assert np.array_equal(image[i], want)
    for name in layers:
        seaweed.put_tree(s3_bucket, name, tmp_path / name)
    options = {"endpoint_url": seaweed.endpoint, "key": seaweed.admin_key,
               "secret": seaweed.admin_secret, "region": seaweed.region}
    remote = patchfeed.Dataset.from_list(
        ["image"], {k: [f"s3://{s3_bucket}/{k}"] for k in layers}, options)
    over_s3, metrics = _loader_batches(remote, 4)
    for (g, gs), (w, ws) in zip(over_s3, got):
        assert gs == ws and np.array_equal(g, w)
    # Every chunk file was opened and read ahead by the batch's producer.
    assert metrics["io_requests"] > 0 and metrics["io_fallback_reads"] == 0, metrics


@pytest.mark.parametrize("dtype,channels,compress", [("uint32", 1, None), ("uint64", 1, None),
                                                     ("uint32", 1, False)])
def test_compressed_segmentation_equals_cloud_volume(tmp_path, dtype, channels, compress):
    info = CloudVolume.create_new_info(
        num_channels=channels, layer_type="segmentation", data_type=dtype,
        encoding="compressed_segmentation", resolution=[4, 4, 40], voxel_offset=list(OFFSET),
        chunk_size=[16, 16, 8], volume_size=list(SIZE), compressed_segmentation_block_size=[8, 4, 2])
    vol = CloudVolume(f"file://{tmp_path / 'seg'}", info=info, compress=compress)
    vol.commit_info()
    rng = np.random.default_rng(4)
    # Labels in runs, as segmentations are (tables of 1 to ~20 labels per block), and a few
    # huge ids (uint64 needs both words).
    data = rng.integers(0, 6, size=SIZE + (channels,)).astype(dtype)
    data[::3] += np.array(2**31 + 7 if dtype == "uint32" else 2**40 + 9, dtype)
    data[5:20, 3:9] = rng.integers(0, 1000, size=(15, 6) + SIZE[2:] + (channels,))
    vol[vol.bounds] = data
    cutout = np.asarray(CloudVolume(f"file://{tmp_path / 'seg'}")[vol.bounds])
    assert np.array_equal(cutout, data)
    arr = patchfeed.open_array(str(tmp_path / "seg"))
    _assert_boxes_equal(arr, _view(cutout), seed=11, n=40)


def test_damaged_compressed_segmentation_is_a_named_error(tmp_path):
    info = CloudVolume.create_new_info(
        num_channels=1, layer_type="segmentation", data_type="uint32",
        encoding="compressed_segmentation", resolution=[4, 4, 40], voxel_offset=[0, 0, 0],
        chunk_size=[16, 16, 8], volume_size=[16, 16, 8], compressed_segmentation_block_size=[8, 8, 8])
    vol = CloudVolume(f"file://{tmp_path / 'seg'}", info=info, compress=False)
    vol.commit_info()
    vol[vol.bounds] = np.arange(16 * 16 * 8, dtype=np.uint32).reshape(16, 16, 8, 1)
    chunk = next((tmp_path / "seg" / "4_4_40").iterdir())
    words = bytearray(chunk.read_bytes())
    words[4 + 3] = 3  # block 0's header: 3 bits per index
    chunk.write_bytes(bytes(words))
    with pytest.raises(Exception, match=f"{chunk.name}.*3 bits per index"):
        patchfeed.open_array(str(tmp_path / "seg"))[...]
    chunk.write_bytes(bytes(words[:40]))
    with pytest.raises(Exception, match=f"{chunk.name}.*compressed_segmentation"):
        patchfeed.open_array(str(tmp_path / "seg"))[...]


def test_cli_info_and_read_a_layer(tmp_path, cli_path):
    data = _view(_write_layer(tmp_path / "layer", "uint16", 2, "gzip"))
    info = subprocess.run([str(cli_path), "info", str(tmp_path / "layer")], capture_output=True,
                          text=True, check=True)
    meta = json.loads(info.stdout)
    assert meta["format"] == "precomputed" and meta["shape"] == list(data.shape)
    assert meta["axes"] == ["c", "z", "y", "x"] and meta["voxel_offset_xyz"] == list(OFFSET)
    out = tmp_path / "box.npy"
    subprocess.run([str(cli_path), "read", str(tmp_path / "layer"), "--box", "0:2,1:9,-2:5,30:45",
                    "--out", str(out), "--npy"], check=True)
    assert np.array_equal(np.load(out), _padded(data, [0, 1, -2, 30], [2, 9, 5, 45]))


def _write_sharded(root: pathlib.Path, hash_: str, gzip_: bool, encoding: str = "raw",
                   dtype: str = "uint16") -> np.ndarray:
    """A sharded layer written by tensorstore (cloud-volume reads it back below); some chunks
    are never written. Returns its voxels as (x, y, z, c)."""
    ts = pytest.importorskip("tensorstore")
    enc = "gzip" if gzip_ else "raw"
    scale = {"size": list(SIZE), "voxel_offset": list(OFFSET), "chunk_size": list(CHUNK),
             "resolution": [4, 4, 40], "encoding": encoding,
             "sharding": {"@type": "neuroglancer_uint64_sharded_v1", "preshift_bits": 1,
                          "hash": hash_, "minishard_bits": 2, "shard_bits": 2,
                          "minishard_index_encoding": enc, "data_encoding": enc}}
    if encoding == "compressed_segmentation":
        scale["compressed_segmentation_block_size"] = [8, 4, 2]
    store = ts.open({"driver": "neuroglancer_precomputed", "kvstore": f"file://{root}",
                     "multiscale_metadata": {"type": "image", "data_type": dtype,
                                             "num_channels": 1},
                     "scale_metadata": scale}, create=True).result()
    rng = np.random.default_rng(12)
    data = rng.integers(0, 50, size=SIZE + (1,)).astype(dtype)
    data[:CHUNK[0]] = 0  # the first chunk row along x is never written
    store[OFFSET[0] + CHUNK[0]:, :, :, :] = data[CHUNK[0]:]
    return data


@pytest.mark.parametrize("hash_,gzip_,encoding", [
    ("identity", False, "raw"), ("murmurhash3_x86_128", True, "raw"),
    ("murmurhash3_x86_128", False, "compressed_segmentation")])
def test_sharded_scales_equal_tensorstore_and_cloud_volume(tmp_path, hash_, gzip_, encoding):
    dtype = "uint32" if encoding == "compressed_segmentation" else "uint16"
    data = _write_sharded(tmp_path / "layer", hash_, gzip_, encoding, dtype)
    shards = list((tmp_path / "layer").rglob("*.shard"))
    assert len(shards) > 1
    vol = CloudVolume(f"file://{tmp_path / 'layer'}", fill_missing=True)
    assert np.array_equal(np.asarray(vol[vol.bounds]), data)
    _assert_boxes_equal(patchfeed.open_array(str(tmp_path / "layer")), _view(data), seed=2, n=30)


def test_damaged_shards_give_named_errors(tmp_path):
    _write_sharded(tmp_path / "layer", "identity", False)
    shard = sorted((tmp_path / "layer").rglob("*.shard"))[-1]
    body = bytearray(shard.read_bytes())
    for m in range(4):  # every minishard index runs far past the shard's end
        body[16 * m:16 * m + 16] = (0).to_bytes(8, "little") + (2**40).to_bytes(8, "little")
    shard.write_bytes(bytes(body))
    with pytest.raises(Exception, match=f"{shard.name}.*pass the shard's"):
        patchfeed.open_array(str(tmp_path / "layer"))[...]


def test_sharded_layer_over_s3_keeps_its_minishard_indexes(tmp_path, seaweed, s3_bucket,
                                                            fault_proxy):
    # Shards larger than what opening one brings (its first 512 KiB, which hold the shard
    # index): the minishard indexes past that are requests of their own, made once.
    ts = pytest.importorskip("tensorstore")
    size, chunk = (256, 128, 32), (32, 32, 16)
    store = ts.open({"driver": "neuroglancer_precomputed", "kvstore": f"file://{tmp_path / 'l'}",
                     "multiscale_metadata": {"type": "image", "data_type": "uint16",
                                             "num_channels": 1},
                     "scale_metadata": {
                         "size": list(size), "chunk_size": list(chunk), "encoding": "raw",
                         "resolution": [4, 4, 40],
                         "sharding": {"@type": "neuroglancer_uint64_sharded_v1",
                                      "preshift_bits": 0, "hash": "identity",
                                      "minishard_bits": 3, "shard_bits": 1,
                                      "minishard_index_encoding": "gzip",
                                      "data_encoding": "raw"}}}, create=True).result()
    data = np.random.default_rng(3).integers(0, 60000, size=size + (1,), dtype=np.uint16)
    store[...] = data
    shards = list((tmp_path / "l").rglob("*.shard"))
    assert len(shards) == 2 and all(p.stat().st_size > 600 << 10 for p in shards)
    seaweed.put_tree(s3_bucket, "sharded", tmp_path / "l")
    proxy = fault_proxy(seaweed.endpoint)
    options = {"endpoint_url": proxy.url, "key": seaweed.admin_key,
               "secret": seaweed.admin_secret, "region": seaweed.region}
    arr = patchfeed.open_array(f"s3://{s3_bucket}/sharded", storage_options=options)
    proxy.reset_stats()
    assert np.array_equal(arr[...], _view(data))
    first = proxy.stats()["requests"]["GET"]
    proxy.reset_stats()
    assert np.array_equal(arr[...], _view(data))
    again = proxy.stats()["requests"]["GET"]
    # The second read asks for no minishard index again (each was kept).
    assert again < first and first - again >= 4, (first, again)


def test_convert_writes_precomputed_cases_as_b2nd(tmp_path):
    from patchfeed.convert import convert

    image = _view(_write_layer(tmp_path / "image", "uint16", 1, "gzip", seed=3))
    labels = np.random.default_rng(5).integers(0, 3, size=SIZE + (1,)).astype(np.uint32)
    _write_segmentation(tmp_path / "seg", labels)
    report = convert([{"image": str(tmp_path / "image"), "label": str(tmp_path / "seg"),
                       "id": "vol1"}], tmp_path / "out", image_dtype="float32", progress=False)
    assert report.converted == ["vol1"]
    got = patchfeed.open_array(str(tmp_path / "out" / "vol1.b2nd"))[...]
    assert np.array_equal(got, image.astype(np.float32))
    seg = patchfeed.open_array(str(tmp_path / "out" / "vol1_seg.b2nd"))[...]
    assert np.array_equal(seg, _view(labels).astype(np.int16))


def smooth_written(smooth: np.ndarray, channels: int) -> np.ndarray:
    return np.broadcast_to(smooth, SIZE + (channels,)).astype(int)


@pytest.mark.parametrize("channels", [1, 3])
def test_jpeg_chunks_equal_a_libjpeg_decode(tmp_path, channels):
    info = CloudVolume.create_new_info(
        num_channels=channels, layer_type="image", data_type="uint8", encoding="jpeg",
        resolution=[4, 4, 40], voxel_offset=list(OFFSET), chunk_size=list(CHUNK),
        volume_size=list(SIZE))
    vol = CloudVolume(f"file://{tmp_path / 'jpeg'}", info=info, compress=False)
    vol.commit_info()
    x = np.arange(SIZE[0])[:, None, None, None]
    smooth = (120 + 60 * np.sin(x / 5.0) * np.cos(np.arange(SIZE[1])[None, :, None, None] / 4.0)
              + 10 * np.arange(channels)).astype(np.uint8)
    vol[vol.bounds] = np.broadcast_to(smooth, SIZE + (channels,)).copy()
    # JPEG is lossy, so the reference is a decoder's output, not the voxels written: cloud-volume's
    # (libjpeg-turbo through simplejpeg) for one channel; for three, tensorstore's, because
    # cloud-volume 12.15 reads the interleaved pixels back in the wrong order (its encoder writes
    # Neuroglancer's layout, pixel (z * y_size + y, x) holding the channels; its decoder
    # reshapes the interleaved bytes as if channel-major: every channel comes back a mix).
    if channels == 1:
        reference = np.asarray(CloudVolume(f"file://{tmp_path / 'jpeg'}")[vol.bounds])
    else:
        ts = pytest.importorskip("tensorstore")
        reference = np.asarray(ts.open({"driver": "neuroglancer_precomputed",
                                        "kvstore": f"file://{tmp_path / 'jpeg'}"}).result()
                               .read().result())
    arr = patchfeed.open_array(str(tmp_path / "jpeg"))
    _assert_boxes_equal(arr, _view(reference), seed=8)
    # The decode is close to what was written (JPEG at cloud-volume's quality 85).
    assert np.abs(arr[...].astype(int) - _view(smooth_written(smooth, channels))).max() < 12


def test_a_damaged_jpeg_chunk_is_a_named_error(tmp_path):
    info = CloudVolume.create_new_info(
        num_channels=1, layer_type="image", data_type="uint8", encoding="jpeg",
        resolution=[4, 4, 40], voxel_offset=[0, 0, 0], chunk_size=[16, 16, 4],
        volume_size=[16, 16, 4])
    vol = CloudVolume(f"file://{tmp_path / 'jpeg'}", info=info, compress=False)
    vol.commit_info()
    vol[vol.bounds] = np.full((16, 16, 4, 1), 77, np.uint8)
    chunk = next((tmp_path / "jpeg" / "4_4_40").iterdir())
    chunk.write_bytes(chunk.read_bytes()[:40])
    with pytest.raises(Exception, match=f"{chunk.name}.*jpeg"):
        patchfeed.open_array(str(tmp_path / "jpeg"))[...]


def test_loader_oversamples_the_foreground_of_a_segmentation_layer(tmp_path):
    _write_layer(tmp_path / "image", "uint8", 1, "gzip", seed=1)
    labels = np.zeros(SIZE + (1,), np.uint32)
    labels[30:36, 20:25, 9:12] = 2**31 + 5  # one small object in a large volume
    _write_segmentation(tmp_path / "seg", labels)
    ds = patchfeed.Dataset.from_list(["image", "seg"],
                                     {"vol": [str(tmp_path / "image"), str(tmp_path / "seg")]})
    # Unsigned labels cannot hold nnU-Net's -1 padding: pad with 0.
    with patchfeed.Loader(ds, (4, 8, 8), batch_size=4, seed=1, num_threads=2, as_numpy=True,
                          foreground_cache_dir=str(tmp_path / "fg"), oversample_foreground=1.0,
                          pad_values={"seg": 0}) as loader:
        for _, batch in zip(range(3), loader):
            assert batch["seg"].dtype == np.uint32
            # Every sample is centred on the object (0.6 % of the volume).
            assert all((s == 2**31 + 5).any() for s in batch["seg"])


@pytest.mark.parametrize("dtype,channels", [("uint8", 1), ("uint8", 3)])
def test_png_chunks_read_back_exactly(tmp_path, dtype, channels):
    info = CloudVolume.create_new_info(
        num_channels=channels, layer_type="image", data_type=dtype, encoding="png",
        resolution=[4, 4, 40], voxel_offset=list(OFFSET), chunk_size=list(CHUNK),
        volume_size=list(SIZE))
    vol = CloudVolume(f"file://{tmp_path / 'png'}", info=info, compress=False)
    vol.commit_info()
    data = np.random.default_rng(6).integers(0, np.iinfo(dtype).max, size=SIZE + (channels,),
                                             dtype=dtype, endpoint=True)
    vol[vol.bounds] = data
    # PNG is lossless: the voxels written are the reference (cloud-volume's own decode agrees
    # for one channel; for three it mixes them, as for JPEG).
    if channels == 1:
        assert np.array_equal(np.asarray(CloudVolume(f"file://{tmp_path / 'png'}")[vol.bounds]),
                              data)
    _assert_boxes_equal(patchfeed.open_array(str(tmp_path / "png")), _view(data), seed=9)
    ts = pytest.importorskip("tensorstore")
    via_ts = ts.open({"driver": "neuroglancer_precomputed",
                      "kvstore": f"file://{tmp_path / 'png'}"}).result().read().result()
    assert np.array_equal(np.asarray(via_ts), data)


def test_16_bit_png_chunks_written_by_tensorstore_read_back_exactly(tmp_path):
    # cloud-volume's PNG codec (libspng) neither writes nor reads 16-bit grayscale.
    ts = pytest.importorskip("tensorstore")
    store = ts.open({"driver": "neuroglancer_precomputed", "kvstore": f"file://{tmp_path / 'png'}",
                     "multiscale_metadata": {"type": "image", "data_type": "uint16",
                                             "num_channels": 1},
                     "scale_metadata": {"size": list(SIZE), "voxel_offset": list(OFFSET),
                                        "chunk_size": list(CHUNK), "resolution": [4, 4, 40],
                                        "encoding": "png"}}, create=True).result()
    data = np.random.default_rng(7).integers(0, 65535, size=SIZE + (1,), dtype=np.uint16)
    store[...] = data
    _assert_boxes_equal(patchfeed.open_array(str(tmp_path / "png")), _view(data), seed=10)
