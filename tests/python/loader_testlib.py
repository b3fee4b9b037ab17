# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Helpers for the patchfeed.Loader tests: a tiny nnU-Net-like dataset written with
python-blosc2, and reference reads of a sample's box with python-blosc2 (padding outside the
case as the loader does: 0 for the image, -1 for the segmentation)."""

from __future__ import annotations

import hashlib
import os
import pathlib

import blosc2
import numpy as np
import patchfeed._core as core

PATCH = (16, 16, 16)
SHAPES = [(1, 24, 20, 20), (1, 20, 24, 18), (1, 28, 20, 22), (1, 22, 22, 20)]


def write_case(folder: pathlib.Path, case_id: str, shape, seed: int) -> None:
    rng = np.random.default_rng(seed)
    img = rng.standard_normal(shape, dtype=np.float32)
    seg = np.zeros(shape, dtype=np.int16)
    z, y, x = (s // 2 for s in shape[1:])
    seg[0, z - 3 : z + 3, y - 3 : y + 3, x - 3 : x + 3] = 1
    seg[0, z - 1 : z + 1, y - 1 : y + 1, x - 1 : x + 1] = 2
    cparams = {"codec": blosc2.Codec.LZ4, "clevel": 1, "filters": [blosc2.Filter.SHUFFLE]}
    for arr, suffix in ((img, ".b2nd"), (seg, "_seg.b2nd")):
        chunks, blocks = core.nnunet_chunk_block_shapes(shape, PATCH, arr.itemsize)
        blosc2.asarray(
            arr,
            urlpath=str(folder / f"{case_id}{suffix}"),
            mode="w",
            chunks=tuple(chunks),
            blocks=tuple(blocks),
            cparams=cparams,
        )


def write_dataset(folder: pathlib.Path, shapes=SHAPES) -> pathlib.Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, shape in enumerate(shapes):
        write_case(folder, f"case_{i:03d}", shape, seed=i)
    return folder


def reference_box(path: str, box_start, patch, pad) -> np.ndarray:
    """The (C, *patch) box at `box_start` of the array in `path`, read with python-blosc2."""
    arr = blosc2.open(path, mode="r")
    shape = arr.shape
    out = np.full((shape[0],) + tuple(patch), pad, dtype=arr.dtype)
    src, dst = [slice(None)], [slice(None)]
    for lo, p, s in zip(box_start, patch, shape[1:]):
        a, b = max(lo, 0), min(lo + p, s)
        if a >= b:
            return out
        src.append(slice(a, b))
        dst.append(slice(a - lo, b - lo))
    out[tuple(dst)] = arr[tuple(src)]
    return out


def check_batch(loader, batch) -> None:
    """Asserts every sample of `batch` equals python-blosc2's read of its box."""
    info = loader.last_batch
    ds = loader.dataset
    patch = tuple(loader.array_layout["image"][1][2:])
    for i, sample in enumerate(info.samples):
        paths = ds.paths(sample.case_index)
        for name, path, pad in (("image", paths[0], 0), ("seg", paths[1], -1)):
            want = reference_box(path, sample.box_start, patch, pad)
            got = np.asarray(batch[name][i])
            np.testing.assert_array_equal(got, want, err_msg=f"{name} sample {i} {sample}")


def take(loader, n: int) -> list:
    """The next `n` batches as comparable records: (epoch, index, samples, image and seg
    digests). Nothing stays referenced, so no slot stays held."""
    out = []
    for _ in range(n):
        b = loader.next_batch()
        if b is None:
            out.append(None)
            continue
        info = loader.last_batch
        out.append(
            (info.epoch, info.batch_index, info.samples,
             hashlib.sha1(np.asarray(b["image"]).tobytes()).hexdigest(),
             hashlib.sha1(np.asarray(b["seg"]).tobytes()).hexdigest())
        )
        del b
    return out


def env_with_package() -> dict:
    """The environment for a subprocess that imports patchfeed like the tests do."""
    import patchfeed

    env = dict(os.environ)
    pkg_parent = str(pathlib.Path(patchfeed.__file__).resolve().parents[1])
    env["PYTHONPATH"] = pkg_parent + os.pathsep + env.get("PYTHONPATH", "")
    return env
