#!/usr/bin/env python3
# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""A static file server with single-range GETs and injectable faults, for the C++ remote tests.

Usage: remote_test_server.py ROOT_DIR. Serves ROOT_DIR under /files/ on a free port of
127.0.0.1 and prints that port on stdout once it listens. GET and HEAD answer Range
("bytes=a-b", "bytes=a-") with 206 and Content-Range, 416 past the end, ETag and Last-Modified,
and 412 to an If-Match that no longer matches. Faults, each used by one later GET of a file:
  POST /_control/faults  {"faults": ["503", "429", "500", "reset", "short", "long",
                                     "wrong_range", "ignore_range", "delay:SECONDS"]}
  POST /_control/delay   {"seconds": S}   delays every GET of a file by S from now on
  GET  /_control/stats   {"requests", "in_flight", "max_in_flight"} for GETs of files
"""
import asyncio
import hashlib
import json
import os
import socket
import struct
import sys

from aiohttp import web

SLOW_DOWN = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
             b'<Message>Please reduce your request rate.</Message></Error>')


class State:
    def __init__(self, root):
        self.root = os.path.realpath(root)
        self.faults = []
        self.delay = 0.0
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0


def parse_range(header, size):
    """(first, last) of a single "bytes=a-b" / "bytes=a-" range, None when absent, "bad" else."""
    if header is None:
        return None
    if not header.startswith("bytes=") or "," in header:
        return "bad"
    first, _, last = header[6:].partition("-")
    if not first.isdigit() or (last and not last.isdigit()):
        return "bad"
    first = int(first)
    last = min(int(last), size - 1) if last else size - 1
    if first >= size or last < first:
        return "bad"
    return first, last


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
    with open(path, "rb") as f:
        data = f.read()
    stat = os.stat(path)
    etag = '"%s"' % hashlib.md5(data).hexdigest()
    headers = {"ETag": etag, "Accept-Ranges": "bytes",
               "Last-Modified": "Thu, 01 Jan 2026 00:00:00 GMT"}
    if_match = request.headers.get("If-Match")
    if if_match is not None and if_match != etag:
        return web.Response(status=412, headers=headers, text="precondition failed")
    rng = parse_range(request.headers.get("Range"), stat.st_size)
    if rng == "bad":
        headers["Content-Range"] = "bytes */%d" % stat.st_size
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
            return web.Response(status=int(fault), body=SLOW_DOWN, content_type="application/xml")
        status, body = 200, data
        if rng is not None and fault != "ignore_range":
            first, last = rng
            status, body = 206, data[first:last + 1]
            shift = 1 if fault == "wrong_range" else 0
            headers["Content-Range"] = "bytes %d-%d/%d" % (first + shift, last + shift,
                                                           len(data))
        if fault == "long":
            body = body + b"\0" * 10
        response = web.StreamResponse(status=status, headers=headers)
        response.content_length = len(body)
        await response.prepare(request)
        if fault in ("reset", "short"):
            await response.write(body[:len(body) // 2])
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
    return web.json_response({"requests": s.requests, "in_flight": s.in_flight,
                              "max_in_flight": s.max_in_flight})


async def main(root):
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


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
