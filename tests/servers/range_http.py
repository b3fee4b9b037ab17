# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""A static file server with HTTP Range support, for tests that read http:// URLs.

`RangeHTTPServer(root)` serves the files under `root` on a free port of 127.0.0.1 from a
background thread (HTTP/1.1, keep-alive). GET and HEAD answer with Content-Length, a strong ETag
and Last-Modified; a single `Range: bytes=a-b`, `bytes=a-` or suffix `bytes=-n` gets 206 with
Content-Range, an unsatisfiable one 416 with `Content-Range: bytes */size`. A malformed or
multi-range header is ignored (200 with the whole file), as RFC 9110 allows. Folders are 404:
there is no listing, as on an object store.

    with RangeHTTPServer(tmp_path) as http:
        urllib.request.urlopen(http.url + "/a.b2nd")

Run `python3 tests/servers/range_http.py DIR` to serve a folder by hand.
"""

from __future__ import annotations

import email.utils
import http.server
import os
import pathlib
import re
import socket
import sys
import threading
import urllib.parse

_RANGE = re.compile(r"bytes=(\d*)-(\d*)")
_CHUNK = 1 << 16


def parse_range(header: str | None, size: int) -> tuple[int, int] | None | str:
    """(first, last) inclusive for a satisfiable single range, None to serve the whole file, or
    "unsatisfiable"."""
    if header is None:
        return None
    m = _RANGE.fullmatch(header.strip())
    if m is None or (not m.group(1) and not m.group(2)):
        return None
    first, last = m.group(1), m.group(2)
    if not first:  # suffix: the last n bytes
        n = int(last)
        if n == 0:
            return "unsatisfiable"
        return (max(0, size - n), size - 1) if size else "unsatisfiable"
    a = int(first)
    if last and int(last) < a:  # invalid syntax, not an unsatisfiable range
        return None
    if a >= size:
        return "unsatisfiable"
    return a, min(int(last), size - 1) if last else size - 1


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    root: pathlib.Path  # set on the subclass made per server

    def setup(self):
        super().setup()
        with self.server.conn_lock:
            self.server.conns.add(self.connection)

    def finish(self):
        super().finish()
        with self.server.conn_lock:
            self.server.conns.discard(self.connection)

    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass  # tests read responses, not an access log

    def do_HEAD(self):  # noqa: N802 (http.server's naming)
        self._serve(body=False)

    def do_GET(self):  # noqa: N802
        self._serve(body=True)

    def _resolve(self) -> pathlib.Path | None:
        rel = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path).lstrip("/")
        path = (self.root / rel).resolve()
        if path != self.root and self.root not in path.parents:
            return None
        return path if path.is_file() else None

    def _serve(self, body: bool) -> None:
        path = self._resolve()
        if path is None:
            self._send_empty(404)
            return
        st = path.stat()
        size = st.st_size
        headers = {
            "ETag": f'"{st.st_mtime_ns:x}-{size:x}"',
            "Last-Modified": email.utils.formatdate(st.st_mtime, usegmt=True),
            "Accept-Ranges": "bytes",
            "Content-Type": "application/octet-stream",
        }
        rng = parse_range(self.headers.get("Range"), size)
        if rng == "unsatisfiable":
            self._send_empty(416, {**headers, "Content-Range": f"bytes */{size}"})
            return
        if rng is None:
            first, last, status = 0, size - 1, 200
        else:
            first, last = rng
            status = 206
            headers["Content-Range"] = f"bytes {first}-{last}/{size}"
        length = last - first + 1
        self.send_response(status)
        for k, v in {**headers, "Content-Length": str(length)}.items():
            self.send_header(k, v)
        self.end_headers()
        if not body:
            return
        with open(path, "rb") as f:
            f.seek(first)
            left = length
            while left > 0:
                data = f.read(min(_CHUNK, left))
                if not data:
                    break
                self.wfile.write(data)
                left -= len(data)

    def _send_empty(self, status: int, headers: dict | None = None) -> None:
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", "0")
        self.end_headers()


class RangeHTTPServer:
    """Serves `root` on http://127.0.0.1:<free port> from a background thread."""

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = pathlib.Path(root).resolve()
        handler = type("Handler", (_Handler,), {"root": self.root})
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        # Open keep-alive connections, so that stop() can end the threads blocked reading them.
        self._server.conns = set()
        self._server.conn_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> RangeHTTPServer:
        # A short poll interval: stop() waits for it.
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        name="range-http", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        with self._server.conn_lock:
            for conn in self._server.conns:
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass  # the client closed it already
        self._server.server_close()

    def __enter__(self) -> RangeHTTPServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


if __name__ == "__main__":
    server = RangeHTTPServer(sys.argv[1] if len(sys.argv) > 1 else ".")
    print(f"serving {server.root} at {server.url}; Ctrl-C stops", flush=True)
    try:
        server._server.serve_forever()
    except KeyboardInterrupt:
        server.stop()
