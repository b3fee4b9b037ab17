# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""s3:// and http(s):// reads against real servers (tests/servers/: SeaweedFS's S3 gateway, a
Range file server, a fault proxy): every read equals the local read of the same files, faults
are retried without a wrong byte, and refusals are one clear error."""

from __future__ import annotations

import pathlib

import numpy as np
import patchfeed
import pytest
from loader_testlib import PATCH, write_dataset
from storage_servers import PUBLIC_BUCKET, fault_proxy, http_server, s3_bucket, seaweed  # noqa: F401

zarr = pytest.importorskip("zarr")

RNG_BOXES = 12


def _options(server, endpoint: str | None = None, **extra) -> dict:
    return {"endpoint_url": endpoint or server.endpoint, "key": server.admin_key,
            "secret": server.admin_secret, "region": server.region, **extra}


def _random_boxes(shape, n: int, seed: int):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        start = [int(rng.integers(-4, s)) for s in shape]
        stop = [a + int(rng.integers(1, 20)) for a in start]
        yield start, stop


def _write_zarr_v2(path: pathlib.Path) -> np.ndarray:
    from numcodecs import Blosc

    data = np.random.default_rng(1).integers(0, 2000, (2, 40, 36, 30), dtype=np.uint16)
    z = zarr.create_array(str(path), shape=data.shape, chunks=(1, 16, 16, 16), dtype=data.dtype,
                          zarr_format=2, compressors=Blosc(cname="lz4", clevel=5, blocksize=2048))
    z[...] = data
    return data


def _write_zarr_v3_sharded(path: pathlib.Path) -> np.ndarray:
    data = np.random.default_rng(2).standard_normal((1, 40, 36, 30)).astype(np.float32)
    z = zarr.create_array(str(path), shape=data.shape, chunks=(1, 8, 8, 8),
                          shards=(1, 16, 16, 16), dtype=data.dtype, zarr_format=3,
                          compressors=zarr.codecs.ZstdCodec(level=3))
    z[...] = data
    return data


@pytest.fixture
def arrays(tmp_path) -> dict[str, np.ndarray]:
    """Local arrays of each format: {relative path: the values written}."""
    local = tmp_path / "local"
    write_dataset(local / "nnunet")
    out = {"v2.zarr": _write_zarr_v2(local / "v2.zarr"),
           "v3.zarr": _write_zarr_v3_sharded(local / "v3.zarr")}
    for b2nd in sorted((local / "nnunet").glob("*.b2nd")):
        out[f"nnunet/{b2nd.name}"] = patchfeed.open_array(str(b2nd))[...]
    return out


def _assert_reads_equal(remote, local: np.ndarray, seed: int) -> None:
    assert remote.shape == local.shape and remote.dtype == local.dtype
    assert np.array_equal(remote[...], local)
    for start, stop in _random_boxes(local.shape, RNG_BOXES, seed):
        got = remote.read_box(start, stop, pad=0)
        want = np.zeros([b - a for a, b in zip(start, stop)], local.dtype)
        src = tuple(slice(max(a, 0), min(b, s)) for a, b, s in zip(start, stop, local.shape))
        dst = tuple(slice(s.start - a, s.stop - a) for s, a in zip(src, start))
        if all(s.start < s.stop for s in src):
            want[dst] = local[src]
        assert np.array_equal(got, want), (start, stop)


def test_open_array_over_s3_equals_local(seaweed, s3_bucket, arrays, tmp_path):
    seaweed.put_tree(s3_bucket, "", tmp_path / "local")
    for k, (rel, local) in enumerate(sorted(arrays.items())):
        remote = patchfeed.open_array(f"s3://{s3_bucket}/{rel}",
                                      storage_options=_options(seaweed))
        _assert_reads_equal(remote, local, seed=k)


def test_open_array_over_http_equals_local(http_server, arrays, tmp_path):
    for k, (rel, local) in enumerate(sorted(arrays.items())):
        # The Range server serves tmp_path: the arrays are under local/.
        remote = patchfeed.open_array(f"{http_server.url}/local/{rel}")
        _assert_reads_equal(remote, local, seed=10 + k)


def _batches(loader, n: int) -> list[dict[str, np.ndarray]]:
    out = []
    for _, batch in zip(range(n), loader):
        out.append({k: np.array(v) for k, v in batch.items() if k in ("image", "seg")})
    return out


def test_loader_counts_the_retries_it_made(seaweed, s3_bucket, tmp_path, fault_proxy):
    local = write_dataset(tmp_path / "cases")
    seaweed.put_tree(s3_bucket, "cases", local)
    proxy = fault_proxy(seaweed.endpoint)
    kwargs = dict(patch_size=PATCH, batch_size=3, seed=5, num_threads=2, as_numpy=True,
                  foreground_cache_dir=str(tmp_path / "cache"))
    with patchfeed.Loader(str(local), **kwargs) as want_loader:
        want = _batches(want_loader, 3)
    proxy.add_fault("status", count=3, status=503, method="GET")  # met while opening the cases
    with patchfeed.Loader(f"s3://{s3_bucket}/cases",
                          storage_options=_options(seaweed, proxy.url), **kwargs) as loader:
        got = _batches(loader, 3)
        metrics = loader.metrics()
    for g, w in zip(got, want):
        assert all(np.array_equal(g[k], w[k]) for k in w)
    assert proxy.pending_faults() == 0
    assert metrics["io_backend"] == "libcurl" and metrics["io_retries"] >= 3, metrics
    assert metrics["io_errors"] == 0, metrics


@pytest.mark.parametrize("augmented", [False, True])
def test_loader_over_s3_equals_local(seaweed, s3_bucket, tmp_path, augmented):
    local = write_dataset(tmp_path / "cases")
    seaweed.put_tree(s3_bucket, "cases", local)
    kwargs = dict(patch_size=PATCH, batch_size=3, seed=5, num_threads=2, as_numpy=True,
                  foreground_cache_dir=str(tmp_path / "cache"))
    if augmented:
        kwargs["augmentation"] = {}  # nnU-Net's default pipeline, its crop derived
    with patchfeed.Loader(str(local), **kwargs) as want_loader:
        want = _batches(want_loader, 4)
    with patchfeed.Loader(f"s3://{s3_bucket}/cases", storage_options=_options(seaweed),
                          **kwargs) as got_loader:
        got = _batches(got_loader, 4)
        metrics = got_loader.metrics()
    # The batches' chunks were fetched ahead, all of a batch at once; no task waited on a read.
    assert metrics["io_requests"] > 0 and metrics["io_fallback_reads"] == 0, metrics
    for g, w in zip(got, want):
        for name in w:
            assert np.array_equal(g[name], w[name]), name


def test_retries_recover_from_injected_faults(seaweed, s3_bucket, arrays, tmp_path,
                                              fault_proxy):
    seaweed.put_tree(s3_bucket, "", tmp_path / "local")
    proxy = fault_proxy(seaweed.endpoint)
    remote = patchfeed.open_array(f"s3://{s3_bucket}/v2.zarr",
                                  storage_options=_options(seaweed, proxy.url))
    proxy.add_fault("status", count=2, status=503, method="GET")
    proxy.add_fault("reset_mid_body", count=1, method="GET")
    proxy.add_fault("short_body", count=1, method="GET")
    proxy.add_fault("status", count=1, status=429, method="GET")
    _assert_reads_equal(remote, arrays["v2.zarr"], seed=3)
    assert proxy.pending_faults() == 0  # every fault met a request, and was retried past


def test_wrong_secret_is_one_clear_error(seaweed, s3_bucket, arrays, tmp_path):
    seaweed.put_tree(s3_bucket, "", tmp_path / "local")
    url = f"s3://{s3_bucket}/nnunet/case_000.b2nd"
    with pytest.raises(Exception) as info:
        patchfeed.open_array(url, storage_options=_options(seaweed, secret="not-the-secret"))
    message = str(info.value)
    assert url in message and "credentials" in message and "storage options" in message
    assert "SignatureDoesNotMatch" in message


def test_anonymous_reads_a_public_bucket_not_a_private_one(seaweed, s3_bucket, arrays,
                                                           tmp_path):
    seaweed.put_tree(PUBLIC_BUCKET, "anon-test", tmp_path / "local")
    seaweed.put_tree(s3_bucket, "", tmp_path / "local")
    anon = {"endpoint_url": seaweed.endpoint, "anon": True, "region": seaweed.region}
    public = patchfeed.open_array(f"s3://{PUBLIC_BUCKET}/anon-test/v3.zarr",
                                  storage_options=anon)
    assert np.array_equal(public[...], arrays["v3.zarr"])
    with pytest.raises(Exception, match="AccessDenied"):
        patchfeed.open_array(f"s3://{s3_bucket}/v3.zarr", storage_options=anon)


def test_missing_object_names_the_url(seaweed, s3_bucket):
    url = f"s3://{s3_bucket}/nothing/here.b2nd"
    with pytest.raises(FileNotFoundError, match=url):
        patchfeed.open_array(url, storage_options=_options(seaweed))


def test_a_dataset_folder_is_listed_once(seaweed, s3_bucket, tmp_path, fault_proxy):
    local = write_dataset(tmp_path / "cases", shapes=[(1, 20, 20, 20)] * 12)
    seaweed.put_tree(s3_bucket, "cases", local)
    proxy = fault_proxy(seaweed.endpoint)
    ds = patchfeed.Dataset.from_nnunet_folder(f"s3://{s3_bucket}/cases",
                                              storage_options=_options(seaweed, proxy.url))
    assert len(ds) == 12 and ds.case_ids == sorted(ds.case_ids)
    assert ds.paths(0) == [f"s3://{s3_bucket}/cases/case_000.b2nd",
                           f"s3://{s3_bucket}/cases/case_000_seg.b2nd"]
    # One ListObjectsV2 page, no request per case.
    assert proxy.stats()["requests"] == {"GET": 1}


def test_unknown_storage_option_is_refused():
    with pytest.raises(TypeError, match="unknown key 'endpoint'"):
        patchfeed.open_array("s3://bucket/a.b2nd", storage_options={"endpoint": "http://x"})


def test_cli_info_and_read_take_urls_with_credentials_from_the_environment(
        seaweed, s3_bucket, arrays, tmp_path, cli_path):
    import json
    import os
    import subprocess

    seaweed.put_tree(s3_bucket, "", tmp_path / "local")
    env = {**os.environ, "AWS_ENDPOINT_URL": seaweed.endpoint, "AWS_REGION": seaweed.region,
           "AWS_ACCESS_KEY_ID": seaweed.admin_key, "AWS_SECRET_ACCESS_KEY": seaweed.admin_secret}
    env.pop("AWS_PROFILE", None)
    url = f"s3://{s3_bucket}/v3.zarr"
    info = subprocess.run([str(cli_path), "info", url], capture_output=True, text=True,
                          env=env, timeout=120, check=False)
    assert info.returncode == 0, info.stderr
    assert json.loads(info.stdout)["shape"] == list(arrays["v3.zarr"].shape)
    out = tmp_path / "box.npy"
    read = subprocess.run([str(cli_path), "read", url, "--box", "0:1,3:9,0:5,2:30", "--npy",
                           "--out", str(out)], capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    assert read.returncode == 0, read.stderr
    assert np.array_equal(np.load(out), arrays["v3.zarr"][0:1, 3:9, 0:5, 2:30])
    env["AWS_SECRET_ACCESS_KEY"] = "wrong"
    refused = subprocess.run([str(cli_path), "info", url], capture_output=True, text=True,
                             env=env, timeout=120, check=False)
    assert refused.returncode != 0 and "AWS_ACCESS_KEY_ID" in refused.stderr, refused.stderr


def test_a_read_box_costs_one_get_per_chunk_and_no_head(seaweed, s3_bucket, arrays, tmp_path,
                                                        fault_proxy):
    seaweed.put_tree(s3_bucket, "", tmp_path / "local")
    chunks = [p for p in (tmp_path / "local" / "v2.zarr").iterdir() if not p.name.startswith(".")]
    proxy = fault_proxy(seaweed.endpoint)
    remote = patchfeed.open_array(f"s3://{s3_bucket}/v2.zarr",
                                  storage_options=_options(seaweed, proxy.url))
    for _ in range(2):
        proxy.reset_stats()
        assert np.array_equal(remote[...], arrays["v2.zarr"])
        stats = proxy.stats()
        # Every chunk object is opened by a GET of its first bytes, which brings it whole: no
        # HEAD, one request per chunk, all of them sent before the first answer came.
        assert stats["requests"] == {"GET": len(chunks)}, (stats, len(chunks))
        assert stats["max_in_flight"] > 1, stats


def test_shard_indexes_read_again_cost_no_second_request(seaweed, s3_bucket, arrays, tmp_path,
                                                         fault_proxy):
    seaweed.put_tree(s3_bucket, "", tmp_path / "local")
    shards = [p for p in (tmp_path / "local" / "v3.zarr").rglob("*")
              if p.is_file() and p.name != "zarr.json"]
    proxy = fault_proxy(seaweed.endpoint)
    remote = patchfeed.open_array(f"s3://{s3_bucket}/v3.zarr",
                                  storage_options=_options(seaweed, proxy.url))
    proxy.reset_stats()
    assert np.array_equal(remote[...], arrays["v3.zarr"])
    first = proxy.stats()["requests"]["GET"]
    proxy.reset_stats()
    assert np.array_equal(remote[...], arrays["v3.zarr"])
    again = proxy.stats()["requests"]["GET"]
    # The second read asks for the inner chunks alone: each shard's index was kept.
    assert len(shards) >= 4 and first - again == len(shards), (first, again, len(shards))


def test_cache_serves_a_second_epoch_without_the_store(seaweed, s3_bucket, tmp_path,
                                                       fault_proxy):
    local = write_dataset(tmp_path / "cases")
    seaweed.put_tree(s3_bucket, "cases", local)
    proxy = fault_proxy(seaweed.endpoint)
    cache = tmp_path / "range_cache"
    options = _options(seaweed, proxy.url, cache_dir=str(cache))
    kwargs = dict(patch_size=PATCH, batch_size=2, seed=3, num_threads=2, as_numpy=True,
                  epoch_mode="without_replacement", foreground_cache_dir=str(tmp_path / "fg"))
    with patchfeed.Loader(str(local), **kwargs) as want_loader:
        want = _batches(want_loader, 100)
    runs = []
    for _ in range(2):
        proxy.reset_stats()
        with patchfeed.Loader(f"s3://{s3_bucket}/cases", storage_options=options,
                              **kwargs) as loader:
            runs.append(_batches(loader, 100))
        runs[-1].append(proxy.stats()["requests"])
    for got in runs:
        assert len(got) - 1 == len(want) > 0
        for g, w in zip(got, want):
            assert all(np.array_equal(g[k], w[k]) for k in w)
    first, second = runs[0][-1], runs[1][-1]
    # The same epoch again asks the store only what each object is (its HEAD, which notices a
    # changed one) and for the folder's listing (one GET): no object byte.
    assert first["GET"] > 1 and second["GET"] == 1, (first, second)
    assert any(cache.rglob("*"))

    # A changed object is fetched anew (its ETag is another key), never mixed with old pages.
    changed = patchfeed.open_array(str(local / "case_001.b2nd"))[...] + 1
    patchfeed.write_b2nd(str(tmp_path / "changed.b2nd"), changed, chunks=(1, 16, 16, 16),
                         blocks=(1, 8, 8, 8))
    seaweed.put_object(s3_bucket, "cases/case_001.b2nd",
                       (tmp_path / "changed.b2nd").read_bytes())
    proxy.reset_stats()
    again = patchfeed.open_array(f"s3://{s3_bucket}/cases/case_001.b2nd", storage_options=options)
    assert np.array_equal(again[...], changed)
    assert proxy.stats()["requests"].get("GET", 0) > 0


def test_cache_stays_within_its_bound(seaweed, s3_bucket, arrays, tmp_path):
    seaweed.put_tree(s3_bucket, "", tmp_path / "local")
    cache = tmp_path / "small_cache"
    bound = 1 << 20
    options = _options(seaweed, cache_dir=str(cache), cache_max_bytes=bound)
    for rel in ("v2.zarr", "v3.zarr"):
        remote = patchfeed.open_array(f"s3://{s3_bucket}/{rel}", storage_options=options)
        assert np.array_equal(remote[...], arrays[rel])
    held = sum(f.stat().st_size for f in cache.rglob("*") if f.is_file())
    assert 0 < held <= bound


def test_settings_that_would_change_nothing_are_refused(seaweed, s3_bucket, tmp_path):
    local = write_dataset(tmp_path / "cases")
    with pytest.raises(ValueError, match="storage_options apply to s3://"):
        patchfeed.open_array(str(local / "case_000.b2nd"), storage_options={"anon": True})
    seaweed.put_tree(s3_bucket, "cases", local)
    with pytest.raises(ValueError, match="storage_options=\\{'io_depth': N\\}"):
        patchfeed.Loader(f"s3://{s3_bucket}/cases", PATCH, storage_options=_options(seaweed),
                         io_depth=8)
