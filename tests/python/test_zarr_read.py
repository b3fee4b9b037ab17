# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""patchfeed reads zarr arrays exactly as zarr-python does.

zarr-python 3 writes a matrix of arrays (v2 and v3; sharded and not, index at the start and the
end; every compressor and filter patchfeed reads; dtypes of both byte orders; 1-5 dimensions;
uneven edge chunks; chunks never written; fill values), and patchfeed reads seeded random boxes
inside, across and outside the border through `open_array`, the `patchfeed read` CLI and the
loader, compared with zarr's own reads padded the way patchfeed pads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import patchfeed
from loader_testlib import env_with_package

zarr = pytest.importorskip("zarr")
numcodecs = pytest.importorskip("numcodecs")
from zarr.codecs import (  # noqa: E402
    BloscCodec,
    BytesCodec,
    Crc32cCodec,
    GzipCodec,
    ShardingCodec,
    TransposeCodec,
    ZstdCodec,
)

SHAPES = [(37,), (13, 29), (9, 14, 11), (5, 6, 7, 4), (3, 4, 5, 3, 2)]


def _chunks_for(shape, rng):
    # Uneven: most chunk extents do not divide the shape.
    return tuple(int(rng.integers(1, max(2, s // 2 + 2))) for s in shape)


def _data(shape, dtype, rng):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, size=shape).astype(dt)
    if dt.kind == "f":
        return (rng.standard_normal(shape) * 100).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(max(info.min, -(2**40)), min(info.max, 2**40), size=shape,
                        dtype=np.int64).astype(dt)


def _write(path, data, written, **kwargs):
    """zarr writes `data` where `written` is true (block by block), leaving chunks elsewhere
    unwritten: they read as the fill value."""
    arr = zarr.create_array(str(path), shape=data.shape, dtype=data.dtype, **kwargs)
    if written is None:
        arr[...] = data
    else:
        # Only the first half along axis 0: the other chunks are never stored.
        h = max(1, data.shape[0] // 2)
        arr[:h] = data[:h]
    return arr


V2_COMPRESSORS = {
    "blosc_lz4_shuffle": lambda: numcodecs.Blosc("lz4", 5, numcodecs.Blosc.SHUFFLE),
    "blosc_zstd_bitshuffle": lambda: numcodecs.Blosc("zstd", 3, numcodecs.Blosc.BITSHUFFLE),
    "blosc_blosclz_noshuffle": lambda: numcodecs.Blosc("blosclz", 9, numcodecs.Blosc.NOSHUFFLE),
    "blosc_zlib_small_blocks": lambda: numcodecs.Blosc("zlib", 5, numcodecs.Blosc.SHUFFLE,
                                                       blocksize=64),
    "zstd": lambda: numcodecs.Zstd(level=3),
    "lz4": lambda: numcodecs.LZ4(),
    "gzip": lambda: numcodecs.GZip(level=5),
    "zlib": lambda: numcodecs.Zlib(level=5),
    "none": lambda: None,
}

DTYPES = ["<f4", "<i2", "|u1", "|b1", "<i8", "<f2", ">i4", ">f8", "<u2"]


def _v2_cases():
    cases = []
    i = 0
    for comp in V2_COMPRESSORS:
        for dtype in DTYPES:
            cases.append((comp, dtype, SHAPES[i % len(SHAPES)], "./"[i % 2], i % 3 == 0))
            i += 1
    return cases


def _v3_cases():
    def bytes_codec(endian):
        return BytesCodec(endian=endian)

    chains = {
        "bytes": lambda e: dict(serializer=bytes_codec(e), compressors=None),
        "blosc": lambda e: dict(serializer=bytes_codec(e),
                                compressors=BloscCodec(cname="lz4", shuffle="shuffle")),
        "blosc_bitshuffle_zstd": lambda e: dict(
            serializer=bytes_codec(e), compressors=BloscCodec(cname="zstd", shuffle="bitshuffle")),
        "zstd_crc32c": lambda e: dict(serializer=bytes_codec(e),
                                      compressors=[ZstdCodec(level=1, checksum=True),
                                                   Crc32cCodec()]),
        "gzip": lambda e: dict(serializer=bytes_codec(e), compressors=GzipCodec(level=4)),
        "crc32c": lambda e: dict(serializer=bytes_codec(e), compressors=Crc32cCodec()),
    }
    cases = []
    i = 0
    for name in chains:
        for dtype in ["float32", "int16", "uint8", "bool", "int64", "float16", "float64"]:
            endian = "big" if i % 3 == 1 else "little"
            cases.append((name, chains[name], dtype, endian, SHAPES[i % len(SHAPES)], i))
            i += 1
    return cases


def _padded_reference(data, start, stop, pad):
    out = np.full([b - a for a, b in zip(start, stop)], pad, dtype=data.dtype.newbyteorder("="))
    src, dst = [], []
    for a, b, n in zip(start, stop, data.shape):
        lo, hi = max(a, 0), min(b, n)
        if lo >= hi:
            return out
        src.append(slice(lo, hi))
        dst.append(slice(lo - a, hi - a))
    out[tuple(dst)] = data[tuple(src)]
    return out


def _random_boxes(shape, rng, count=12):
    boxes = [([0] * len(shape), list(shape))]  # the whole array
    for _ in range(count):
        start, stop = [], []
        for n in shape:
            kind = rng.integers(0, 3)
            if kind == 0:  # inside
                a = int(rng.integers(0, n))
                b = int(rng.integers(a + 1, n + 1))
            elif kind == 1:  # across the border
                a = int(rng.integers(-3, n))
                b = int(rng.integers(max(a + 1, n - 1), n + 4))
            else:  # anywhere, possibly wholly outside
                a = int(rng.integers(-6, n + 3))
                b = a + int(rng.integers(1, 5))
            start.append(a)
            stop.append(b)
        boxes.append((start, stop))
    return boxes


def _check_reads(path, expected, rng, pad=0):
    if expected.dtype.kind == "b":
        pad = 1 if pad else 0
    elif expected.dtype.kind == "u":
        pad = abs(pad)
    arr = patchfeed.open_array(str(path))
    assert arr.shape == expected.shape
    assert arr.dtype == expected.dtype.newbyteorder("<") or expected.dtype.itemsize == 1
    for start, stop in _random_boxes(expected.shape, rng):
        got = arr.read_box(start, stop, pad=pad)
        want = _padded_reference(expected, start, stop, pad)
        np.testing.assert_array_equal(got, want, err_msg=f"{path} box {start}:{stop}")
        # Same values and same bits (NaN payloads, -0.0).
        assert got.tobytes() == want.astype(got.dtype).tobytes(), f"{path} box {start}:{stop}"


@pytest.mark.parametrize("comp,dtype,shape,sep,partial", _v2_cases())
def test_zarr_v2_matrix(tmp_path, comp, dtype, shape, sep, partial):
    rng = np.random.default_rng(abs(hash((comp, dtype))) % 2**32)
    data = _data(shape, dtype, rng)
    fill = True if np.dtype(dtype).kind == "b" else 7
    path = tmp_path / "a.zarr"
    _write(path, data, None if not partial else True, chunks=_chunks_for(shape, rng),
           zarr_format=2, compressors=V2_COMPRESSORS[comp](), fill_value=fill,
           chunk_key_encoding={"name": "v2", "separator": sep})
    meta = json.loads((path / ".zarray").read_text())
    assert meta["dtype"] == np.dtype(dtype).str
    expected = zarr.open_array(str(path), mode="r")[...]
    _check_reads(path, expected, rng, pad=3)


@pytest.mark.parametrize("name,chain,dtype,endian,shape,i", _v3_cases())
def test_zarr_v3_matrix(tmp_path, name, chain, dtype, endian, shape, i):
    rng = np.random.default_rng(1000 + i)
    data = _data(shape, dtype, rng)
    path = tmp_path / "a.zarr"
    fill = False if dtype == "bool" else 5
    kwargs = chain(endian)
    if i % 2 == 0 and len(shape) <= 3:
        # Transposed chunks (the reverse of the axes).
        kwargs["filters"] = [TransposeCodec(order=tuple(reversed(range(len(shape)))))]
    sep = "/" if i % 4 else "."
    _write(path, data, None if i % 3 else True, chunks=_chunks_for(shape, rng), fill_value=fill,
           chunk_key_encoding={"name": "default", "separator": sep}, **kwargs)
    expected = zarr.open_array(str(path), mode="r")[...]
    _check_reads(path, expected, rng, pad=-1)


@pytest.mark.parametrize("index_location", ["start", "end"])
@pytest.mark.parametrize("dtype", ["float32", "int16", "uint8"])
@pytest.mark.parametrize("ndim", [2, 3])
def test_zarr_v3_sharded(tmp_path, index_location, dtype, ndim):
    rng = np.random.default_rng(ndim * 10 + len(dtype))
    shape = (23, 30, 17)[:ndim]
    inner = (4, 5, 3)[:ndim]
    shard = (8, 15, 6)[:ndim]  # inner chunks divide the shards; shards do not divide the shape
    data = _data(shape, dtype, rng)
    path = tmp_path / "s.zarr"
    arr = zarr.create_array(
        str(path), shape=shape, dtype=dtype, chunks=shard, fill_value=9,
        serializer=ShardingCodec(chunk_shape=inner,
                                 codecs=[BytesCodec(), BloscCodec(cname="zstd")],
                                 index_location=index_location),
        compressors=None)
    # Some inner chunks never written (absent from the index), one shard never written at all.
    arr[: shape[0] // 2] = data[: shape[0] // 2]
    arr[-3:] = data[-3:]
    expected = zarr.open_array(str(path), mode="r")[...]
    _check_reads(path, expected, rng, pad=0)


def test_zarr_v3_sharded_with_create_array_shards(tmp_path):
    """zarr-python's own `shards=` spelling (index at the end, crc32c on the index)."""
    rng = np.random.default_rng(5)
    data = _data((40, 33), "<f4", rng)
    path = tmp_path / "s.zarr"
    arr = zarr.create_array(str(path), shape=data.shape, dtype=data.dtype, chunks=(5, 4),
                            shards=(20, 12), compressors=BloscCodec(cname="lz4"))
    arr[...] = data
    _check_reads(path, data, rng)
    info = json.loads(_cli("info", path))
    assert info["format"] == "zarr v3" and info["sharded"] is True
    assert info["chunks"] == [20, 12] and info["inner_chunks"] == [5, 4]


def _cli(*args) -> str:
    """Runs `python -m patchfeed ARGS` on the package under test; its stdout."""
    proc = subprocess.run([sys.executable, "-m", "patchfeed", *map(str, args)],
                          env=env_with_package(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"patchfeed {args} exited {proc.returncode}: {proc.stderr}"
    return proc.stdout


def test_cli_reads_zarr(tmp_path):
    rng = np.random.default_rng(2)
    data = _data((12, 9, 10), "<i2", rng)
    path = tmp_path / "a.zarr"
    _write(path, data, None, chunks=(5, 4, 3), zarr_format=2,
           compressors=numcodecs.Blosc("lz4", 5, numcodecs.Blosc.SHUFFLE), fill_value=0)
    out = tmp_path / "box.npy"
    _cli("read", path, "--box", "-2:5,3:9,8:12", "--pad", "-4", "--out", out, "--npy")
    got = np.load(out)
    np.testing.assert_array_equal(got, _padded_reference(data, [-2, 3, 8], [5, 9, 12], -4))
    info = json.loads(_cli("info", path))
    assert info["format"] == "zarr v2" and info["shape"] == [12, 9, 10]
    assert info["dtype"] == "<i2" and info["chunks"] == [5, 4, 3]


def test_ome_zarr_levels(tmp_path):
    """An OME-Zarr image group: level by index (open_array(level=), the CLI's --level) or by
    path; v0.4 (zarr v2, .zattrs) and v0.5 (zarr v3, attributes.ome)."""
    rng = np.random.default_rng(3)
    full = _data((2, 16, 20, 18), "<u2", rng)
    levels = [full, full[:, ::2, ::2, ::2].copy()]
    for version in (2, 3):
        group_path = tmp_path / f"img_v{version}.ome.zarr"
        group = zarr.open_group(str(group_path), mode="w", zarr_format=version)
        datasets = []
        for i, level in enumerate(levels):
            group.create_array(str(i), shape=level.shape, dtype=level.dtype,
                               chunks=(1, 8, 8, 8))[...] = level
            datasets.append({"path": str(i)})
        multiscales = [{"axes": [{"name": a} for a in "czyx"], "datasets": datasets}]
        if version == 2:
            group.attrs["multiscales"] = [dict(multiscales[0], version="0.4")]
        else:
            group.attrs["ome"] = {"version": "0.5", "multiscales": multiscales}
        for i, level in enumerate(levels):
            arr = patchfeed.open_array(str(group_path), level=i)
            assert arr.shape == level.shape
            np.testing.assert_array_equal(arr[...], level)
            np.testing.assert_array_equal(patchfeed.open_array(str(group_path / str(i)))[...],
                                          level)
        with pytest.raises(Exception, match="level 2 of 2"):
            patchfeed.open_array(str(group_path), level=2)
        info = json.loads(_cli("info", group_path, "--level", "1"))
        assert info["shape"] == list(levels[1].shape)


def test_loader_samples_zarr_like_b2nd(tmp_path):
    """The loader reads patches from zarr cases exactly as from the same data in `.b2nd`."""
    rng = np.random.default_rng(4)
    zarr_dir, b2nd_dir = tmp_path / "z", tmp_path / "b"
    zarr_dir.mkdir()
    b2nd_dir.mkdir()
    for c in range(3):
        image = _data((2, 20, 24, 22), "<f4", rng)
        seg = rng.integers(0, 3, size=(1, 20, 24, 22)).astype(np.int16)
        case = zarr.open_group(str(zarr_dir / f"case{c}"), mode="w")
        case.create_array("image", shape=image.shape, dtype=image.dtype, chunks=(1, 8, 8, 8),
                          shards=(2, 16, 16, 16))[...] = image
        case.create_array("seg", shape=seg.shape, dtype=seg.dtype, chunks=(1, 10, 12, 11),
                          compressors=BloscCodec(cname="zstd"))[...] = seg
        patchfeed.write_b2nd(str(b2nd_dir / f"case{c}.b2nd"), image, chunks=(1, 10, 12, 11),
                             blocks=(1, 5, 6, 11))
        patchfeed.write_b2nd(str(b2nd_dir / f"case{c}_seg.b2nd"), seg, chunks=(1, 10, 12, 11),
                             blocks=(1, 5, 6, 11))
    zds = patchfeed.Dataset.from_zarr_group(zarr_dir, ["image", "seg"])
    assert zds.case_ids == ["case0", "case1", "case2"]
    assert zds.array_names == ["image", "seg"]
    bds = patchfeed.Dataset.from_folder(b2nd_dir, {"image": ".b2nd", "seg": "_seg.b2nd"})
    batches = []
    for ds in (zds, bds):
        loader = patchfeed.Loader(ds, patch_size=(12, 16, 14), batch_size=2, num_threads=2,
                                  seed=11, as_numpy=True)
        got = []
        for batch, _ in zip(loader, range(4)):
            got.append({k: np.array(v) for k, v in batch.items()})  # copies out of the ring
        loader.close()
        batches.append(got)
    assert len(batches[0]) == 4
    for bz, bb in zip(*batches):
        assert bz.keys() == bb.keys()
        for k in bz:
            np.testing.assert_array_equal(bz[k], bb[k], err_msg=k)


def test_zarr_errors_name_the_file(tmp_path):
    rng = np.random.default_rng(6)
    data = _data((10, 10), "<f4", rng)
    path = tmp_path / "a.zarr"
    _write(path, data, None, chunks=(5, 5), zarr_format=2, compressors=numcodecs.Zstd(),
           fill_value=0)
    # A damaged chunk: the error names its file.
    chunk = path / "1.0"
    chunk.write_bytes(chunk.read_bytes()[:-7])
    arr = patchfeed.open_array(str(path))
    with pytest.raises(patchfeed.CorruptDataError, match=r"1\.0"):
        arr.read_box([5, 0], [10, 5])
    np.testing.assert_array_equal(arr.read_box([0, 0], [5, 10]), data[:5])
    # Unsupported: F order, an unknown codec.
    meta = json.loads((path / ".zarray").read_text())
    meta["order"] = "F"
    (path / ".zarray").write_text(json.dumps(meta))
    with pytest.raises(Exception, match="order"):
        patchfeed.open_array(str(path))
    v3 = tmp_path / "b.zarr"
    zarr.create_array(str(v3), shape=(4,), dtype="<i4", chunks=(2,))[...] = 1
    meta = json.loads((v3 / "zarr.json").read_text())
    meta["codecs"].append({"name": "made_up_codec"})
    (v3 / "zarr.json").write_text(json.dumps(meta))
    with pytest.raises(Exception, match="made_up_codec"):
        patchfeed.open_array(str(v3))
    # A checksum that no longer matches.
    v3c = tmp_path / "c.zarr"
    zarr.create_array(str(v3c), shape=(4,), dtype="<i4", chunks=(4,),
                      compressors=Crc32cCodec())[...] = 1
    f = v3c / "c" / "0"
    raw = bytearray(f.read_bytes())
    raw[0] ^= 1
    f.write_bytes(bytes(raw))
    with pytest.raises(patchfeed.CorruptDataError, match="crc32c"):
        patchfeed.open_array(str(v3c))[...]


def test_zarr_v2_blosc_incompressible_chunks(tmp_path):
    """Chunks c-blosc stores raw (memcpyed: random bytes) are read straight from the file."""
    rng = np.random.default_rng(8)
    data = rng.integers(0, 256, size=(40, 50), dtype=np.uint8)
    path = tmp_path / "raw.zarr"
    _write(path, data, None, chunks=(16, 16), zarr_format=2, fill_value=0,
           compressors=numcodecs.Blosc("lz4", 5, numcodecs.Blosc.SHUFFLE))
    chunk = (path / "0.0").read_bytes()
    assert chunk[2] & 0x02, "expected c-blosc to store this chunk memcpyed"
    _check_reads(path, data, rng)
