# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Shared setup for the Python tests of patchfeed.

* Makes `import patchfeed` work from the build tree: `$PATCHFEED_BUILD_DIR/python` when that
  variable is set (ahead of any installed patchfeed), else `<repo>/build/python` unless
  patchfeed is importable already.
* Deterministic data generators (`make_data(kind, nbytes, seed)`) for the kinds of buffers the
  codec sees in practice: a smooth CT-like float32/float64 field, uint8/int16 label maps,
  random bytes, constant runs and zeros.
* A log of compression-ratio comparisons, printed in the terminal summary.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import pathlib
import sys

import blosc2
import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD_DIR = pathlib.Path(os.environ.get("PATCHFEED_BUILD_DIR", REPO / "build"))

# An explicit build directory wins over an installed patchfeed, so `make test` always tests
# the tree it just built (a pip-installed copy would otherwise shadow it).
if "PATCHFEED_BUILD_DIR" in os.environ or importlib.util.find_spec("patchfeed") is None:
    sys.path.insert(0, str(BUILD_DIR / "python"))
    if importlib.util.find_spec("patchfeed") is None:
        raise ImportError(
            f"patchfeed is not importable and not built in {BUILD_DIR / 'python'}; build with "
            "-DPATCHFEED_BUILD_PYTHON=ON or set PATCHFEED_BUILD_DIR"
        )

# One thread everywhere unless a test asks for more: block order in c-blosc2 chunks is then
# deterministic, and the 2-core CI machine is not oversubscribed.
blosc2.set_nthreads(1)

DATA_KINDS = ("smooth_f32", "smooth_f64", "labels_u8", "labels_i16", "random", "runs", "zeros")
_MAX_CACHED = 4 << 20  # bytes per kind kept around; larger requests are generated on demand


def _smooth_field(nelem: int, seed: int) -> np.ndarray:
    """A CT-like 3-D field in float64: smooth sines + Gaussian blobs + mild noise, quantised
    to 1/16 so that its low mantissa bits are zero, as in real rescaled scanner data."""
    side = 64
    depth = max(1, -(-nelem // (side * side)))
    rng = np.random.default_rng(seed)
    z, y, x = np.meshgrid(
        np.arange(depth, dtype=np.float64),
        np.arange(side, dtype=np.float64),
        np.arange(side, dtype=np.float64),
        indexing="ij",
        sparse=True,
    )
    v = 300 * np.sin(x / 9.0) * np.cos(y / 13.0) + 150 * np.sin(z / 7.0 + x / 21.0)
    for _ in range(6):
        cz, cy, cx = rng.uniform(0, depth), rng.uniform(0, side), rng.uniform(0, side)
        r = rng.uniform(4, 14)
        v = v + rng.uniform(-800, 1200) * np.exp(
            -((z - cz) ** 2 + (y - cy) ** 2 + (x - cx) ** 2) / (2 * r * r)
        )
    v = v + rng.normal(0, 2.0, size=v.shape)
    return (np.round(v * 16) / 16).ravel()[:nelem]


def _labels(nelem: int, seed: int) -> np.ndarray:
    """A segmentation-like int64 map: background 0 with a few nested blobs labelled 1..4."""
    side = 64
    depth = max(1, -(-nelem // (side * side)))
    rng = np.random.default_rng(seed)
    z, y, x = np.meshgrid(
        np.arange(depth), np.arange(side), np.arange(side), indexing="ij", sparse=True
    )
    out = np.zeros((depth, side, side), dtype=np.int64)
    for _ in range(3):
        cz, cy, cx = rng.uniform(0, depth), rng.uniform(0, side), rng.uniform(0, side)
        r = rng.uniform(6, 20)
        d2 = (z - cz) ** 2 + (y - cy) ** 2 + (x - cx) ** 2
        for label, frac in ((1, 1.0), (2, 0.6), (3, 0.3)):
            out[d2 < (r * frac) ** 2] = label
    out[:, ((x + y) % 97 == 0)[0]] = 4  # a thin structure crossing every slice
    return out.ravel()[:nelem]


def _runs(nbytes: int, seed: int) -> bytes:
    """Constant runs of random byte values and random lengths (1..3000)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 3000, size=nbytes // 1000 + 2)
    values = rng.integers(0, 256, size=lengths.size, dtype=np.uint8)
    return np.repeat(values, lengths).tobytes()[:nbytes].ljust(nbytes, b"\x07")


def _generate(kind: str, nbytes: int, seed: int) -> bytes:
    if kind == "smooth_f32":
        raw = _smooth_field(nbytes // 4 + 1, seed).astype(np.float32).tobytes()
    elif kind == "smooth_f64":
        raw = _smooth_field(nbytes // 8 + 1, seed).tobytes()
    elif kind == "labels_u8":
        raw = _labels(nbytes + 1, seed).astype(np.uint8).tobytes()
    elif kind == "labels_i16":
        raw = _labels(nbytes // 2 + 1, seed).astype(np.int16).tobytes()
    elif kind == "random":
        raw = np.random.default_rng(seed).bytes(nbytes)
    elif kind == "runs":
        raw = _runs(nbytes, seed)
    elif kind == "zeros":
        raw = bytes(nbytes)
    else:
        raise ValueError(f"unknown data kind {kind!r}")
    return raw[:nbytes]


@functools.lru_cache(maxsize=32)
def _cached(kind: str, seed: int) -> bytes:
    return _generate(kind, _MAX_CACHED, seed)


def make_data(kind: str, nbytes: int, seed: int = 0) -> bytes:
    """`nbytes` deterministic bytes of the given kind (see DATA_KINDS); any length works,
    including lengths that are not a multiple of the element size."""
    if nbytes <= _MAX_CACHED:
        out = _cached(kind, seed)[:nbytes]
    else:
        out = _generate(kind, nbytes, seed)
    assert len(out) == nbytes
    return out


@pytest.fixture(scope="session")
def data_factory():
    """The `make_data(kind, nbytes, seed=0)` generator."""
    return make_data


@pytest.fixture
def smooth_f32():
    """256 KiB + 3 bytes of the smooth CT-like float32 field."""
    return make_data("smooth_f32", 262147)


@pytest.fixture
def labels_u8():
    """100 000 bytes of a uint8 label map."""
    return make_data("labels_u8", 100000)


@pytest.fixture
def labels_i16():
    """100 000 bytes of an int16 label map."""
    return make_data("labels_i16", 100000)


@pytest.fixture
def random_bytes():
    """65 537 seeded random bytes (incompressible)."""
    return make_data("random", 65537)


@pytest.fixture
def constant_runs():
    """100 001 bytes of constant runs."""
    return make_data("runs", 100001)


@pytest.fixture
def zeros():
    """100 000 zero bytes."""
    return make_data("zeros", 100000)


@pytest.fixture(scope="session")
def cli_path() -> pathlib.Path:
    """The `patchfeed` command-line binary: $PATCHFEED_CLI or <build>/cli/patchfeed."""
    path = pathlib.Path(os.environ.get("PATCHFEED_CLI", BUILD_DIR / "cli" / "patchfeed"))
    if not path.is_file():
        pytest.fail(f"patchfeed CLI not found at {path} (build it or set PATCHFEED_CLI)")
    return path


# Compression-ratio comparisons (name, patchfeed cbytes, blosc2 cbytes), reported at the end.
RATIO_LOG: list[tuple[str, int, int]] = []


@pytest.fixture(scope="session")
def ratio_log() -> list[tuple[str, int, int]]:
    """A session-wide list that tests append (case id, patchfeed cbytes, blosc2 cbytes) to."""
    return RATIO_LOG


def pytest_terminal_summary(terminalreporter):
    if not RATIO_LOG:
        return
    worse = [(n, p, b) for n, p, b in RATIO_LOG if b > 64 and p > 1.5 * b]
    total_p = sum(p for _, p, _ in RATIO_LOG)
    total_b = sum(b for _, _, b in RATIO_LOG)
    terminalreporter.section("patchfeed vs c-blosc2 compressed size")
    terminalreporter.write_line(
        f"{len(RATIO_LOG)} chunks compared; total patchfeed/blosc2 cbytes = "
        f"{total_p / max(total_b, 1):.3f}; {len(worse)} with patchfeed > 1.5x blosc2"
    )
    for name, p, b in sorted(worse, key=lambda t: -t[1] / t[2])[:40]:
        terminalreporter.write_line(f"  {name}: patchfeed {p} B, blosc2 {b} B ({p / b:.2f}x)")
