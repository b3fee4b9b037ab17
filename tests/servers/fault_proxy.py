# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""An HTTP reverse proxy that adds latency, caps bandwidth and injects faults, for testing how a
client copes with a slow or failing object store (the kernel here has no netem).

`FaultProxy(upstream_url)` listens on a free port of 127.0.0.1 (HTTP/1.1 with keep-alive) from an
asyncio loop in a background thread and forwards every request to the upstream unchanged: method,
raw path and query, headers (Host and Authorization / x-amz-* included, so an AWS SigV4 signature
made for the proxy's address still verifies upstream) and body. Only hop-by-hop headers are
dropped. Settable at run time from any thread:

* `delay_s`: a pause before each response starts;
* `bandwidth_bps`: a cap on each response body's rate (None: no cap);
* `add_fault(kind, count=1, method=None, path_prefix=None, ...)`: the next `count` requests that
  match (method, path prefix) get the fault; faults queue in the order added, one per request:
  - "status": answer `status` (503 by default) with an S3-style XML error body (503 SlowDown,
    429 TooManyRequests, 500 InternalError), without asking the upstream;
  - "reset_mid_body": the upstream's headers and the first `fraction` of its body, then a TCP
    reset (the client reads ECONNRESET);
  - "short_body": the same but closed cleanly (the body ends before its Content-Length);
  - "slow_start": `seconds` more pause before the response starts.

`stats()` counts requests by method, response body bytes sent, faults applied by kind, the
requests held by a delay, and the requests in flight (from arrival to just after their last byte
is written) now and at most at once; `reset_stats()` zeroes them. An upstream that cannot be
reached gets the client a 502.

    with FaultProxy(server.endpoint) as proxy:
        proxy.add_fault("status", status=503)   # the next request gets 503 SlowDown
        ...  # point the client at proxy.url
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import socket
import struct
import threading
from typing import Any

FAULT_KINDS = ("status", "reset_mid_body", "short_body", "slow_start")

# RFC 9110 section 7.6.1, plus Expect: the proxy answers 100-continue itself and sends the body
# whole. None of these is ever part of a SigV4 signature.
_HOP_BY_HOP = frozenset(h.lower() for h in (
    "Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Proxy-Connection",
    "TE", "Trailer", "Transfer-Encoding", "Upgrade", "Expect", "Content-Length"))

_S3_ERRORS = {
    503: ("SlowDown", "Please reduce your request rate."),
    429: ("TooManyRequests", "Too many requests, please slow down."),
    500: ("InternalError", "We encountered an internal error. Please try again."),
}
_CHUNK = 1 << 16


@dataclasses.dataclass
class Fault:
    kind: str
    count: int = 1
    method: str | None = None
    path_prefix: str | None = None
    status: int = 503
    fraction: float = 0.5
    seconds: float = 0.0

    def matches(self, method: str, path: str) -> bool:
        return ((self.method is None or self.method.upper() == method)
                and (self.path_prefix is None or path.startswith(self.path_prefix)))


def _end_to_end(raw_headers) -> list[tuple[str, str]]:
    """The headers a proxy passes on, in their order and spelling (a multidict would recase)."""
    out = []
    for k, v in raw_headers:
        name = k.decode("latin-1")
        if name.lower() not in _HOP_BY_HOP:
            out.append((name, v.decode("latin-1")))
    return out


def s3_error_body(status: int, resource: str, request_id: str) -> bytes:
    code, message = _S3_ERRORS.get(status, ("InternalError", "Injected by the fault proxy."))
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
            f"<Message>{message}</Message><Resource>{resource}</Resource>"
            f"<RequestId>{request_id}</RequestId></Error>").encode()


class FaultProxy:
    """See the module docstring. Start with `start()` or `with`."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.delay_s = 0.0
        self.bandwidth_bps: float | None = None
        self.url = ""
        self._lock = threading.Lock()
        self._faults: collections.deque[Fault] = collections.deque()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner = None
        self._session = None
        self._request_id = 0
        self._in_flight = 0
        self.reset_stats()

    # -- run-time settings and statistics (any thread) ------------------------------------------

    def add_fault(self, kind: str, count: int = 1, *, method: str | None = None,
                  path_prefix: str | None = None, status: int = 503, fraction: float = 0.5,
                  seconds: float = 0.0) -> None:
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; one of {', '.join(FAULT_KINDS)}")
        if count < 1 or not 0.0 <= fraction < 1.0:
            raise ValueError("a fault needs count >= 1 and 0 <= fraction < 1")
        with self._lock:
            self._faults.append(Fault(kind, count, method, path_prefix, status, fraction, seconds))

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def pending_faults(self) -> int:
        """How many requests the queued faults will still hit."""
        with self._lock:
            return sum(f.count for f in self._faults)

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {
                "requests": dict(self._requests),
                "total_requests": sum(self._requests.values()),
                "response_bytes": self._response_bytes,
                "faults": dict(self._faults_applied),
                "delayed": self._delayed,
                "in_flight": self._in_flight,
                "max_in_flight": self._max_in_flight,
            }

    def reset_stats(self) -> None:
        """Zeroes the counters; `max_in_flight` restarts from the requests in flight now."""
        with self._lock:
            self._requests: collections.Counter[str] = collections.Counter()
            self._faults_applied: collections.Counter[str] = collections.Counter()
            self._response_bytes = 0
            self._delayed = 0
            self._max_in_flight = self._in_flight

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> FaultProxy:
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self._serve())
            except BaseException as e:  # noqa: BLE001 (reported to the starting thread)
                failure.append(e)
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._shutdown())
            loop.close()

        self._thread = threading.Thread(target=run, name="fault-proxy", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            self._thread.join()
            self._thread = None
            raise RuntimeError(f"the fault proxy could not start: {failure[0]}") from failure[0]
        return self

    def stop(self) -> None:
        if self._thread is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._thread = None

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    async def _serve(self) -> None:
        import aiohttp
        from aiohttp import web

        app = web.Application(client_max_size=1 << 30)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0), auto_decompress=False,
            cookie_jar=aiohttp.DummyCookieJar(), timeout=aiohttp.ClientTimeout(total=300))

    async def _shutdown(self) -> None:
        await self._session.close()
        await self._runner.cleanup()

    # -- the proxy -------------------------------------------------------------------------------

    def _begin(self, method: str, path: str) -> tuple[Fault | None, int]:
        with self._lock:
            self._requests[method] += 1
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
            self._request_id += 1
            for fault in self._faults:
                if fault.matches(method, path):
                    fault.count -= 1
                    if fault.count == 0:
                        self._faults.remove(fault)
                    self._faults_applied[fault.kind] += 1
                    return fault, self._request_id
            return None, self._request_id

    async def _handle(self, request):
        import aiohttp
        import yarl

        fault, request_id = self._begin(request.method, request.path)
        try:
            delay = self.delay_s + (fault.seconds if fault and fault.kind == "slow_start" else 0.0)
            if delay > 0:
                with self._lock:
                    self._delayed += 1
                await asyncio.sleep(delay)
            body = await request.read()
            if fault is not None and fault.kind == "status":
                payload = s3_error_body(fault.status, request.path, f"fault-proxy-{request_id}")
                return await self._respond(request, fault.status,
                                           [("Content-Type", "application/xml")], payload, None)
            headers = _end_to_end(request.raw_headers)
            try:
                async with self._session.request(
                        request.method, yarl.URL(self.upstream + request.raw_path, encoded=True),
                        headers=headers, data=body if body else None, allow_redirects=False,
                        skip_auto_headers=("Accept", "Accept-Encoding", "User-Agent",
                                           "Content-Type")) as up:
                    payload = await up.read()
                    up_headers = _end_to_end(up.raw_headers)
                    up_length = up.headers.get("Content-Length")
            except aiohttp.ClientError as e:
                message = f"fault proxy: upstream {self.upstream} failed: {e}".encode()
                return await self._respond(request, 502, [("Content-Type", "text/plain")],
                                           message, None)
            if request.method == "HEAD" and up_length is not None:
                up_headers.append(("Content-Length", up_length))
            cut = fault if fault is not None and fault.kind in ("reset_mid_body",
                                                                "short_body") else None
            return await self._respond(request, up.status, up_headers, payload, cut)
        finally:
            with self._lock:
                self._in_flight -= 1

    async def _respond(self, request, status, headers, payload: bytes, cut: Fault | None):
        from aiohttp import web

        resp = web.StreamResponse(status=status)
        for k, v in headers:
            resp.headers.add(k, v)
        if request.method != "HEAD" and status not in (204, 304):
            resp.content_length = len(payload)
        await resp.prepare(request)
        send = payload if cut is None else payload[:int(len(payload) * cut.fraction)]
        try:
            await self._write_paced(resp, send)
        except ConnectionResetError:
            return resp  # the client hung up; aiohttp drops the connection quietly
        if cut is None:
            await resp.write_eof()
        else:
            await self._cut(request.transport, reset=cut.kind == "reset_mid_body")
        return resp

    async def _write_paced(self, resp, data: bytes) -> None:
        bps = self.bandwidth_bps
        loop = asyncio.get_running_loop()
        start = loop.time()
        chunk = _CHUNK if not bps else max(1, min(_CHUNK, int(bps / 20)))
        sent = 0
        for i in range(0, len(data), chunk):
            piece = data[i:i + chunk]
            sent += len(piece)
            if bps:  # wait first, so that no byte arrives before the cap allows it
                wait = start + sent / bps - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
            await resp.write(piece)
            with self._lock:
                self._response_bytes += len(piece)

    @staticmethod
    async def _cut(transport, reset: bool) -> None:
        # Let what was written reach the kernel first, so the client does get the partial body.
        while transport is not None and not transport.is_closing() \
                and transport.get_write_buffer_size() > 0:
            await asyncio.sleep(0.001)
        if transport is None or transport.is_closing():
            return
        if reset:
            sock = transport.get_extra_info("socket")
            # Linger 0: close() sends RST instead of FIN.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            transport.abort()
        else:
            transport.close()
