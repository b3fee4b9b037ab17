# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""`patchfeed.tiles`: every tile of one whole case, for validation and sliding-window inference.

Tiles sit where nnU-Net's predictor puts them (`compute_steps_for_sliding_window` in
nnunetv2/inference/sliding_window_prediction.py; `overlap` is 1 - its `tile_step_size`). A case
smaller than the tile along an axis is padded as nnU-Net pads it, symmetrically, but the case
is not copied: the tile's box starts before 0 (at `-((tile - size) // 2)`) and reaches past the
end, and the part outside the case holds the pad value. A tile of one axis fewer than the case
(nnU-Net's `2d` configuration) tiles every slice of the first axis on its own.

The C++ reader reads a few tiles ahead on its own threads (only the chunks and blocks each
tile touches, straight into the tile's buffer); the arrays of a tile share that buffer (no
copy), which goes back to the reader when the last of them is freed. Waiting runs without the
GIL, and Ctrl-C while waiting raises KeyboardInterrupt promptly.

Example (sliding-window inference with a torch model, nnU-Net's Gaussian weighting)::

    with patchfeed.tiles("case_000.b2nd", patch_size=(128, 128, 128)) as tiles:
        stitcher = patchfeed.TileStitcher(tiles, num_channels=3)
        for tile in tiles:
            with torch.inference_mode():
                logits = model(tile.arrays["image"][None].to("cuda"))[0]
            stitcher.add(tile, logits)
        segmentation = stitcher.result().argmax(0)
"""

from __future__ import annotations

import atexit
import math
import os
import weakref
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple, Union

import numpy as np

from patchfeed import _core
from patchfeed.frames import NdArray
from patchfeed.loader import Dataset

PathLike = Union[str, "os.PathLike[str]"]
Source = Union[PathLike, NdArray, "tuple[Dataset | _core.Dataset, int | str]"]

# Readers still open at interpreter exit are closed while every module still works.
_live: weakref.WeakSet[Tiles] = weakref.WeakSet()


@atexit.register
def _close_live_tiles() -> None:
    for tiles in list(_live):
        tiles.close()


class Box(NamedTuple):
    """A tile's spatial box in the case's voxels, [start, stop) per axis; it reaches past the
    case where the case is padded."""

    start: tuple[int, ...]
    stop: tuple[int, ...]


class Tile(NamedTuple):
    """One tile of a case.

    `arrays` maps each array's name to its tile, shaped (C, *patch_size). The part of the tile
    inside the case is `arrays[name][(slice(None), *tile_slices)]`, which is
    `case[(slice(None), *case_slices)]`: `case_slices` index the case's spatial axes (an
    integer for the slice axis of a 2-D tile over a 3-D case), `tile_slices` the tile's."""

    index: int
    box: Box
    arrays: dict[str, Any]
    case_slices: tuple[Any, ...]
    tile_slices: tuple[slice, ...]

    def __repr__(self) -> str:
        shapes = {n: f"{tuple(a.shape)} {a.dtype}" for n, a in self.arrays.items()}
        return f"Tile(index={self.index}, box={self.box}, arrays={shapes})"


class Tiles:
    """The tiles of one case, in order (an iterator; `len()` is the number of tiles). Made by
    `patchfeed.tiles`; close it (or use it as a context manager) to stop the reader's threads
    early. Tiles already returned stay valid after closing."""

    def __init__(self, core: _core.TileReader, as_numpy: bool, poll_seconds: float) -> None:
        self._core: _core.TileReader | None = core
        self._as_numpy = as_numpy
        self._poll = poll_seconds
        self._case_shape = tuple(core.case_shape)
        self._tile_size = tuple(core.tile_size)
        self._starts = tuple(tuple(s) for s in core.starts)
        self._slices = bool(core.slices)
        self._num_tiles = int(core.num_tiles)
        self._layout = {n: (d, tuple(s)) for n, d, s in core.array_layout()}
        _live.add(self)

    def __iter__(self) -> Iterator[Tile]:
        return self

    def __next__(self) -> Tile:
        raw = self._reader().next(self._poll)
        if raw is None:
            raise StopIteration
        names = raw.names
        if self._as_numpy:
            arrays = {n: raw.numpy(i) for i, n in enumerate(names)}
        else:
            import torch

            arrays = {n: torch.from_dlpack(raw.dlpack(i)) for i, n in enumerate(names)}
        start, stop = raw.box
        index = raw.index
        # From here on only the arrays hold the tile's buffer.
        raw.release()
        case_slices, tile_slices = self._inside(start, stop)
        return Tile(index, Box(tuple(start), tuple(stop)), arrays, case_slices, tile_slices)

    def __len__(self) -> int:
        return self._num_tiles

    @property
    def case_shape(self) -> tuple[int, ...]:
        """The case's spatial shape."""
        return self._case_shape

    @property
    def patch_size(self) -> tuple[int, ...]:
        """A tile's spatial shape, as its arrays have it."""
        return self._tile_size

    @property
    def starts(self) -> tuple[tuple[int, ...], ...]:
        """Per case axis, the tiles' starts (nnU-Net's steps, shifted where padded)."""
        return self._starts

    @property
    def boxes(self) -> list[Box]:
        """Every tile's box, in order."""
        extent = (1,) * self._slices + self._tile_size
        out = []
        for index in range(self._num_tiles):
            start = []
            for axis in reversed(self._starts):
                index, k = divmod(index, len(axis))
                start.append(axis[k])
            start.reverse()
            out.append(Box(tuple(start), tuple(s + e for s, e in zip(start, extent))))
        return out

    @property
    def array_layout(self) -> dict[str, tuple[str, tuple[int, ...]]]:
        """{name: (dtype, shape)} of a tile's arrays."""
        return dict(self._layout)

    @property
    def num_threads(self) -> int:
        return self._reader().num_threads

    @property
    def pinned(self) -> bool:
        """Whether the tile buffers are page-locked (fast, asynchronous copies to a GPU)."""
        return self._reader().pinned

    def close(self) -> None:
        """Stops the reader's threads; tiles already returned stay valid. Idempotent."""
        core, self._core = self._core, None
        if core is not None:
            core.close()
        _live.discard(self)

    @property
    def closed(self) -> bool:
        return self._core is None

    def __enter__(self) -> Tiles:  # noqa: PYI034 (no typing_extensions dependency)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        core = getattr(self, "_core", None)
        if core is not None:
            core.close()

    def __repr__(self) -> str:
        return (f"Tiles({self._num_tiles} tiles of {self._tile_size} over a case of "
                f"{self._case_shape}{', closed' if self.closed else ''})")

    def _reader(self) -> _core.TileReader:
        if self._core is None:
            raise ValueError("the tiles are closed")
        return self._core

    def _inside(self, start: Sequence[int], stop: Sequence[int]):
        case_slices: list[Any] = []
        tile_slices: list[slice] = []
        for d, (a, b) in enumerate(zip(start, stop)):
            if self._slices and d == 0:
                case_slices.append(a)  # the slice axis: the tile has no such axis
                continue
            lo, hi = max(a, 0), min(b, self._case_shape[d])
            case_slices.append(slice(lo, hi))
            tile_slices.append(slice(lo - a, hi - a))
        return tuple(case_slices), tuple(tile_slices)


def _resolve(source: Any) -> tuple[_core.Dataset, int]:
    if isinstance(source, tuple):
        if len(source) != 2:
            raise TypeError("a case is given as (dataset, case index or id)")
        dataset, case = source
        core = dataset._core if isinstance(dataset, Dataset) else dataset
        if not isinstance(core, _core.Dataset):
            raise TypeError(f"expected a patchfeed.Dataset, not {type(dataset).__name__}")
        if isinstance(case, str):
            ids = core.case_ids
            if case not in ids:
                raise KeyError(f"the dataset has no case {case!r}")
            return core, ids.index(case)
        return core, int(case)
    if isinstance(source, NdArray):
        # The reader reopens the array (a header and the chunk offsets) for its own threads.
        path = source._reader.path
    elif isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
    else:
        raise TypeError("tiles() reads a path, a patchfeed.NdArray or (dataset, case), not "
                        f"{type(source).__name__}")
    return _core.Dataset.from_list(["image"], [(path, [path])]), 0


def tiles(
    source: Source,
    patch_size: Sequence[int],
    overlap: float = 0.5,
    pad: float | Mapping[str, float] | None = None,
    *,
    arrays: Sequence[str] | None = None,
    as_numpy: bool = False,
    read_ahead: int = 2,
    num_threads: int = 0,
    io_mode: str = "mmap",
    pin_memory: bool | None = None,
    min_task_bytes: int = 256 << 10,
    memory_budget: int = 4 << 30,
    poll_seconds: float = 0.05,
) -> Tiles:
    """Every tile of one case, in nnU-Net's sliding-window order.

    Args:
      source: a `.b2nd` or zarr array (a path, or an `NdArray` from `patchfeed.open_array`),
        whose one array is called "image"; or `(dataset, case)` with a `patchfeed.Dataset` and
        a case index or id, whose arrays (all, or `arrays`) are tiled together.
      patch_size: the tile's spatial shape: as many axes as the case's spatial axes, or one
        fewer to tile each slice of the first axis (nnU-Net's 2d configuration).
      overlap: in [0, 1); nnU-Net's `tile_step_size` is 1 - overlap (its default 0.5).
      pad: what fills a tile outside the case: one value for every array, or {name: value};
        by default -1 for an array named "seg" and 0 otherwise (as the Loader).
      as_numpy: NumPy arrays instead of torch tensors (both share the tile's buffer).
      read_ahead: tiles read while you hold one (>= 1); a tile you keep holds one of the
        `read_ahead + 1` buffers until its arrays are freed.
      num_threads: reader threads (0: every core). io_mode, pin_memory, min_task_bytes and
        memory_budget as for `patchfeed.Loader`.
    """
    dataset, case_index = _resolve(source)
    names = list(arrays) if arrays is not None else list(dataset.array_names)
    if isinstance(pad, Mapping):
        unknown = set(pad) - set(names)
        if unknown:
            raise ValueError(f"pad values for arrays that are not tiled: {sorted(unknown)}")
        pads = [(n, None if pad.get(n) is None else float(pad[n])) for n in names]
    else:
        pads = [(n, None if pad is None else float(pad)) for n in names]
    if not 0 <= overlap < 1 or math.isnan(overlap):
        raise ValueError(f"overlap must be in [0, 1), not {overlap}")
    core = _core.TileReader(dataset, case_index, [int(s) for s in patch_size], float(overlap),
                            pads, read_ahead, num_threads, io_mode, pin_memory, min_task_bytes,
                            memory_budget)
    return Tiles(core, bool(as_numpy), float(poll_seconds))


def gaussian_importance_map(patch_size: Sequence[int], sigma_scale: float = 1.0 / 8,
                            value_scaling_factor: float = 10.0) -> np.ndarray:
    """nnU-Net's tile weights (`compute_gaussian`, float64): a Gaussian of sigma
    `patch_size * sigma_scale` centred on `patch_size // 2`, truncated at 4 sigma as scipy's
    `gaussian_filter` is, scaled to a maximum of `value_scaling_factor`, with no zero."""
    weights = np.ones((), dtype=np.float64)
    for size in patch_size:
        sigma = size * sigma_scale
        radius = int(4.0 * sigma + 0.5)
        offsets = np.arange(-radius, radius + 1, dtype=np.float64)
        kernel = np.exp(-0.5 / (sigma * sigma) * offsets**2)
        kernel /= kernel.sum()
        axis = np.zeros(size, dtype=np.float64)
        centre = size // 2
        lo, hi = max(0, centre - radius), min(size, centre + radius + 1)
        axis[lo:hi] = kernel[lo - centre + radius:hi - centre + radius]
        weights = np.multiply.outer(weights, axis)
    weights *= value_scaling_factor / weights.max()
    weights[weights == 0] = weights[weights != 0].min()
    return weights


class TileStitcher:
    """Accumulates tile predictions into one prediction of the whole case as nnU-Net's
    predictor does: each tile's prediction weighted by `gaussian_importance_map` (or 1 with
    `gaussian=False`), summed over the tiles, divided by the summed weights. Only the part of
    each tile inside the case is kept, so the result has the case's shape and no padding to
    crop. torch tensors; `device` and `dtype` are the accumulators' (nnU-Net uses half)."""

    def __init__(self, tiles: Tiles, num_channels: int, *, gaussian: bool = True,
                 dtype: Any = None, device: Any = "cpu") -> None:
        import torch

        dtype = torch.float32 if dtype is None else dtype
        self._sum = torch.zeros((num_channels, *tiles.case_shape), dtype=dtype, device=device)
        self._weights = torch.zeros(tiles.case_shape, dtype=dtype, device=device)
        if gaussian:
            self._gaussian = torch.from_numpy(gaussian_importance_map(tiles.patch_size)).to(
                device=device, dtype=dtype)
        else:
            self._gaussian = torch.ones(tiles.patch_size, dtype=dtype, device=device)

    def add(self, tile: Tile, prediction: Any) -> None:
        """Adds `prediction` (num_channels, *patch_size) of `tile`."""
        weighted = prediction.to(self._sum.device) * self._gaussian
        self._sum[(slice(None), *tile.case_slices)] += weighted[(slice(None), *tile.tile_slices)]
        self._weights[tile.case_slices] += self._gaussian[tile.tile_slices]

    def result(self) -> Any:
        """The weighted mean, (num_channels, *case_shape)."""
        return self._sum / self._weights
