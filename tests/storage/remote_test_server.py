# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""The servers the C++ remote tests start, as child processes they stop with SIGTERM.

remote_test_server.py seaweed
    SeaweedFS's S3 gateway through tests/servers/seaweed.py (SeaweedS3: its flags, identities
    and clean-up live there); prints "ENDPOINT ADMIN_KEY ADMIN_SECRET READONLY_KEY
    READONLY_SECRET" once it answers, stops it on SIGTERM.
remote_test_server.py files ROOT_DIR
    Serves ROOT_DIR under /files/ on a free port of 127.0.0.1 and prints the port. GET and HEAD
    answer Range as tests/servers/range_http.py parses it (206 and Content-Range, 416 past the
    end) with ETag and Last-Modified, and 412 to an If-Match that no longer matches. Faults the
    fault proxy cannot make (it forwards the upstream's bytes) are made here, each used by one
    later GET of a file:
      POST /_control/faults  {"faults": ["503", "429", "500", "reset", "short", "long",
                                         "wrong_range", "ignore_range", "delay:SECONDS"]}
      POST /_control/delay   {"seconds": S}   delays every GET of a file by S from now on
      GET  /_control/stats   {"requests", "in_flight", "max_in_flight"} for GETs of files
"""

import asyncio
import hashlib
import os
import pathlib
import signal
import socket
import struct
import sys

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "servers")
)
from range_http import parse_range  # tests/servers, found through the path above

SLOW_DOWN = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message></Error>"
)


class State:
    def __init__(self, root):
        self.root = os.path.realpath(root)
        self.faults = []
        self.delay = 0.0
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0


def abort(request, reset):
    sock = request.transport.get_extra_info("socket")
    if reset and sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    request.transport.abort() if reset else request.transport.close()


async def serve_file(request):
    state = request.app["state"]
    path = os.path.realpath(os.path.join(state.root, request.match_info["path"]))
    if not path.startswith(state.root + os.sep) or not os.path.isfile(path):
        return web.Response(status=404, text="not found")
    data = await asyncio.to_thread(pathlib.Path(path).read_bytes)
    etag = f'"{hashlib.md5(data).hexdigest()}"'
    headers = {
        "ETag": etag,
        "Accept-Ranges": "bytes",
        "Last-Modified": "Thu, 01 Jan 2026 00:00:00 GMT",
    }
    if_match = request.headers.get("If-Match")
    if if_match is not None and if_match != etag:
        return web.Response(status=412, headers=headers, text="precondition failed")
    rng = parse_range(request.headers.get("Range"), len(data))
    if rng == "unsatisfiable":
        headers["Content-Range"] = f"bytes */{len(data)}"
        return web.Response(status=416, headers=headers)
    if request.method == "HEAD":
        headers["Content-Length"] = str(len(data))
        return web.Response(status=200, headers=headers)

    state.requests += 1
    state.in_flight += 1
    state.max_in_flight = max(state.max_in_flight, state.in_flight)
    try:
        fault = state.faults.pop(0) if state.faults else ""
        if state.delay:
            await asyncio.sleep(state.delay)
        if fault.startswith("delay:"):
            await asyncio.sleep(float(fault[6:]))
        if fault in ("503", "429", "500"):
            return web.Response(
                status=int(fault), body=SLOW_DOWN, content_type="application/xml"
            )
        status, body = 200, data
        if rng is not None and fault != "ignore_range":
            first, last = rng
            status, body = 206, data[first : last + 1]
            shift = 1 if fault == "wrong_range" else 0
            headers["Content-Range"] = (
                f"bytes {first + shift}-{last + shift}/{len(data)}"
            )
        if fault == "long":
            body = body + b"\0" * 10
        response = web.StreamResponse(status=status, headers=headers)
        response.content_length = len(body)
        await response.prepare(request)
        if fault in ("reset", "short"):
            await response.write(body[: len(body) // 2])
            await asyncio.sleep(0.01)
            abort(request, reset=fault == "reset")
            return response
        await response.write(body)
        await response.write_eof()
        return response
    finally:
        state.in_flight -= 1


async def post_faults(request):
    request.app["state"].faults.extend((await request.json())["faults"])
    return web.json_response({"queued": len(request.app["state"].faults)})


async def post_delay(request):
    request.app["state"].delay = float((await request.json())["seconds"])
    return web.json_response({})


async def get_stats(request):
    s = request.app["state"]
    return web.json_response(
        {
            "requests": s.requests,
            "in_flight": s.in_flight,
            "max_in_flight": s.max_in_flight,
        }
    )


async def serve_files(root):
    app = web.Application()
    app["state"] = State(root)
    app.router.add_route("GET", "/files/{path:.+}", serve_file)
    app.router.add_route("HEAD", "/files/{path:.+}", serve_file)
    app.router.add_post("/_control/faults", post_faults)
    app.router.add_post("/_control/delay", post_delay)
    app.router.add_get("/_control/stats", get_stats)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    print(site._server.sockets[0].getsockname()[1], flush=True)
    await asyncio.Event().wait()


def run_seaweed():
    from seaweed import SeaweedS3

    server = SeaweedS3().start()

    def stop(*_):
        server.stop()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    print(
        server.endpoint,
        server.admin_key,
        server.admin_secret,
        server.readonly_key,
        server.readonly_secret,
        flush=True,
    )
    while True:
        signal.pause()


if __name__ == "__main__":
    if sys.argv[1] == "seaweed":
        run_seaweed()
    else:
        from aiohttp import web

        asyncio.run(serve_files(sys.argv[2]))
