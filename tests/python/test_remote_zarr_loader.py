# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""The Loader over zarr cases in an S3 bucket (SeaweedFS, tests/servers/) and on a local disk
read with pread: every batch equals the one read from the local files with mmap, and every
chunk file was opened and fetched ahead by the batch's producer (no read task waited on a
request, io_fallback_reads == 0), with more requests in flight than read threads."""

from __future__ import annotations

import pathlib

import numpy as np
import patchfeed
import pytest
from storage_servers import fault_proxy, s3_bucket, seaweed  # noqa: F401

zarr = pytest.importorskip("zarr")
from numcodecs import Blosc  # noqa: E402

SHAPE = (1, 40, 36, 30)
PATCH = (16, 20, 12)


def _compressors(flavour: str):
    if flavour == "zstd":
        return zarr.codecs.ZstdCodec(level=3)
    if flavour.startswith("v2"):
        return Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE, blocksize=1024)
    return zarr.codecs.BloscCodec(cname="lz4", clevel=5, shuffle="shuffle", blocksize=1024)


def _write_cases(root: pathlib.Path, flavour: str, n: int = 3) -> None:
    """`n` cases (image float32, seg int16 as nnU-Net writes it), each a zarr group; part of every label is
    background, and the last case's image has a region of fill value (no chunk file)."""
    rng = np.random.default_rng(7)
    fmt = 2 if flavour.startswith("v2") else 3
    chunks = (1, 10, 12, 10)
    shards = (1, 20, 36, 30) if flavour in ("sharded", "zstd") else None
    for i in range(n):
        group = zarr.open_group(str(root / f"case{i}"), mode="w", zarr_format=fmt)
        image = rng.standard_normal(SHAPE).astype(np.float32)
        if i == n - 1:
            image[:, :10, :12, :10] = 0  # one chunk of fill value: no file for it
        seg = np.zeros(SHAPE, np.int16)
        seg[:, 5:25, 8:20, 4:16] = rng.integers(1, 3, size=(1, 20, 12, 12))
        for name, data in (("image", image), ("seg", seg)):
            kwargs = dict(shape=SHAPE, dtype=data.dtype, chunks=chunks,
                          compressors=_compressors(flavour), fill_value=0)
            if shards is not None:
                kwargs["shards"] = shards
            group.create_array(name, **kwargs)[...] = data


def _batches(loader, n: int) -> list[dict[str, np.ndarray]]:
    return [{k: np.array(v) for k, v in batch.items() if k in ("image", "seg")}
            for _, batch in zip(range(n), loader)]


def _assert_same(got, want) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        for name in w:
            assert np.array_equal(g[name], w[name]), name


KWARGS = dict(batch_size=3, seed=11, num_threads=2, as_numpy=True)


@pytest.mark.parametrize("flavour,augmented", [("v2", False), ("v2", True), ("sharded", False),
                                               ("sharded", True), ("zstd", False)])
def test_zarr_loader_over_s3_fetches_every_chunk_ahead(seaweed, s3_bucket, tmp_path, flavour,
                                                       augmented):
    local = tmp_path / "group"
    _write_cases(local, flavour)
    seaweed.put_tree(s3_bucket, flavour, local)
    kwargs = dict(KWARGS, foreground_cache_dir=str(tmp_path / "fg"))
    if augmented:
        kwargs["augmentation"] = {}  # nnU-Net's default pipeline
    with patchfeed.Loader(patchfeed.Dataset.from_zarr_group(local), PATCH, **kwargs) as loader:
        want = _batches(loader, 4)
    options = {"endpoint_url": seaweed.endpoint, "key": seaweed.admin_key,
               "secret": seaweed.admin_secret, "region": seaweed.region}
    remote = patchfeed.Dataset.from_zarr_group(f"s3://{s3_bucket}/{flavour}",
                                               storage_options=options)
    with patchfeed.Loader(remote, PATCH, **kwargs) as loader:
        got = _batches(loader, 4)
        metrics = loader.metrics()
    _assert_same(got, want)
    assert metrics["io_backend"] == "libcurl", metrics
    assert metrics["io_requests"] > 0 and metrics["io_fallback_reads"] == 0, metrics
    # A batch's chunk files were opened and read together, not one per read thread.
    assert metrics["io_max_in_flight"] > KWARGS["num_threads"], metrics


@pytest.mark.parametrize("flavour", ["v2", "sharded", "zstd"])
def test_local_zarr_read_with_pread_is_fetched_ahead(tmp_path, flavour):
    _write_cases(tmp_path / "group", flavour)
    ds = patchfeed.Dataset.from_zarr_group(tmp_path / "group")
    kwargs = dict(KWARGS, foreground_cache_dir=str(tmp_path / "fg"))
    with patchfeed.Loader(ds, PATCH, **kwargs) as loader:
        want = _batches(loader, 4)
    with patchfeed.Loader(ds, PATCH, io_mode="pread", **kwargs) as loader:
        got = _batches(loader, 4)
        metrics = loader.metrics()
    _assert_same(got, want)
    assert metrics["io_requests"] > 0 and metrics["io_fallback_reads"] == 0, metrics


def test_a_damaged_chunk_in_the_bucket_is_an_error_naming_its_url(seaweed, s3_bucket, tmp_path):
    local = tmp_path / "group"
    _write_cases(local, "v2", n=1)
    image = local / "case0" / "image"
    for chunk in (p for p in image.iterdir() if not p.name.startswith(".")):  # every image chunk cut short: any patch meets one
        chunk.write_bytes(chunk.read_bytes()[:20])
    seaweed.put_tree(s3_bucket, "damaged", local)
    options = {"endpoint_url": seaweed.endpoint, "key": seaweed.admin_key,
               "secret": seaweed.admin_secret, "region": seaweed.region}
    remote = patchfeed.Dataset.from_zarr_group(f"s3://{s3_bucket}/damaged",
                                               storage_options=options)
    with patchfeed.Loader(remote, PATCH, **KWARGS) as loader:
        with pytest.raises(Exception) as error:
            loader.next_batch()
    message = str(error.value)
    assert f"s3://{s3_bucket}/damaged/case0/image/" in message, message
    assert "case 'case0'" in message and "patch box" in message, message
    assert "truncated" in message, message


def test_zarr_loader_with_the_range_cache_reads_a_second_run_without_gets(
        seaweed, s3_bucket, tmp_path, fault_proxy):
    local = tmp_path / "group"
    _write_cases(local, "v2")
    seaweed.put_tree(s3_bucket, "cached", local)
    proxy = fault_proxy(seaweed.endpoint)
    options = {"endpoint_url": proxy.url, "key": seaweed.admin_key,
               "secret": seaweed.admin_secret, "region": seaweed.region,
               "cache_dir": str(tmp_path / "range_cache")}
    kwargs = dict(KWARGS, foreground_cache_dir=str(tmp_path / "fg"))
    with patchfeed.Loader(patchfeed.Dataset.from_zarr_group(local), PATCH, **kwargs) as loader:
        want = _batches(loader, 4)
    requests = []
    # The first run takes more batches than the second can read ahead (4 taken plus a ring of
    # 3), so every chunk the second run reads was fetched by the first.
    for n in (8, 4):
        remote = patchfeed.Dataset.from_zarr_group(f"s3://{s3_bucket}/cached",
                                                   storage_options=options)
        proxy.reset_stats()
        with patchfeed.Loader(remote, PATCH, **kwargs) as loader:
            _assert_same(_batches(loader, n)[:4], want)
            assert loader.metrics()["io_fallback_reads"] == 0
        requests.append(proxy.stats())
    # The second run asks what each object is (HEAD) and reads the group's listing and
    # metadata documents again; no chunk byte.
    first, second = requests
    assert first["requests"]["GET"] > second["requests"]["GET"] + 50, requests
    assert second["response_bytes"] < 16 << 10 < first["response_bytes"], requests
