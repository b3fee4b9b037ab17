# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""pytest fixtures with real servers for the s3://, gs:// and http(s):// tests (tests/servers/).

* `seaweed`: one SeaweedFS S3 gateway for the whole session (`SeaweedS3`: `endpoint`, admin and
  read-only keys, `region`, `create_bucket` / `put_object` / `put_tree` / `delete_object`; the
  bucket `public` is readable without signing). Skips, saying why, where `weed` or boto3 is
  missing or SeaweedFS does not start.
* `s3_bucket`: a fresh, empty private bucket on it for one test (its name).
* `http_server`: a Range-capable static file server over the test's `tmp_path` (`.url`).
* `fault_proxy`: a factory, `fault_proxy(upstream_url) -> FaultProxy`, of latency / bandwidth /
  fault proxies, stopped after the test.

Use them by importing the fixtures into a test module:

    from storage_servers import fault_proxy, http_server, s3_bucket, seaweed  # noqa: F401

    def test_retry(seaweed, s3_bucket, fault_proxy):
        seaweed.put_object(s3_bucket, "x.b2nd", data)
        proxy = fault_proxy(seaweed.endpoint)
        proxy.add_fault("status", status=503)
        ...  # read s3://<s3_bucket>/x.b2nd with endpoint proxy.url
"""

from __future__ import annotations

import atexit
import itertools
import pathlib
import re
import sys

import pytest

_SERVERS = pathlib.Path(__file__).resolve().parents[1] / "servers"
if str(_SERVERS) not in sys.path:
    sys.path.insert(0, str(_SERVERS))

from fault_proxy import FaultProxy  # noqa: E402
from range_http import RangeHTTPServer  # noqa: E402
from seaweed import PUBLIC_BUCKET, SeaweedS3, SeaweedStartError  # noqa: E402

__all__ = ["PUBLIC_BUCKET", "FaultProxy", "RangeHTTPServer", "SeaweedS3", "SeaweedStartError",
           "fault_proxy", "http_server", "s3_bucket", "seaweed"]

# Each test module that imports `seaweed` gets its own fixture definition, so "session scope"
# alone would start one server per module: the server itself is kept here, started once.
_shared: dict[str, object] = {}
_bucket_numbers = itertools.count()


def _stop_shared() -> None:
    server = _shared.pop("server", None)
    if server is not None:
        server.stop()


atexit.register(_stop_shared)  # also when pytest is interrupted before the finalizers run


@pytest.fixture(scope="session")
def seaweed():
    pytest.importorskip("boto3", reason="boto3 is not installed (pip install boto3)")
    if "error" in _shared:
        pytest.skip(str(_shared["error"]))
    if "server" not in _shared:
        try:
            _shared["server"] = SeaweedS3().start()
        except SeaweedStartError as e:
            _shared["error"] = f"SeaweedFS S3 server unavailable: {e}"
            pytest.skip(_shared["error"])
    yield _shared["server"]
    # All session finalizers run at the session's end, so the first one can stop it for all.
    _stop_shared()


@pytest.fixture
def s3_bucket(seaweed, request) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")
    name = f"t{next(_bucket_numbers)}-{slug}"[:63].rstrip("-")
    seaweed.create_bucket(name)
    return name


@pytest.fixture
def http_server(tmp_path):
    with RangeHTTPServer(tmp_path) as server:
        yield server


@pytest.fixture
def fault_proxy():
    pytest.importorskip("aiohttp", reason="aiohttp is not installed (pip install aiohttp)")
    proxies: list[FaultProxy] = []

    def make(upstream: str) -> FaultProxy:
        proxy = FaultProxy(upstream).start()
        proxies.append(proxy)
        return proxy

    yield make
    for proxy in proxies:
        proxy.stop()
