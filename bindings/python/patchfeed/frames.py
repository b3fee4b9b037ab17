"""Reading `.b2nd` and zarr arrays and writing `.b2nd` ones with NumPy: `open_array`, `read_box`,
`write_b2nd`."""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from patchfeed import _core


def _parse_dtype(raw: bytes, path: str, itemsize: int) -> np.dtype:
    """NumPy dtype from a b2nd dtype string: `dtype.str` ('<f4'), or for structured dtypes the
    repr of the field list, as python-blosc2 writes them. A metalayer without a dtype (older
    caterva files; the C++ reader refuses a present but empty one) holds raw items."""
    if not raw:
        return np.dtype(f"V{itemsize}")
    try:
        text = raw.decode("ascii")
        try:
            return np.dtype(text)
        except TypeError:
            return np.dtype(ast.literal_eval(text))
    except (UnicodeDecodeError, TypeError, ValueError, SyntaxError) as e:
        raise _core.CorruptDataError(
            f"{path}: the b2nd metalayer holds an invalid dtype {raw!r}") from e


class NdArray:
    """An opened `.b2nd` or zarr array. Reads decode only the blocks (zarr: the chunks, inner
    chunks and Blosc blocks) a box touches, GIL released.

    `format` is "b2nd", "zarr v2" or "zarr v3". `chunks` and `blocks` are the units a read plans
    with: a `.b2nd` file's chunks and blocks; a zarr array's chunks (shards) and, for a sharded
    array, its inner chunks (else the chunks again). Zarr items come in little-endian order."""

    def __init__(self, path: str, io: str = "mmap", level: int = 0,
                 storage_options: Mapping[str, Any] | None = None, *,
                 store: _core.Store | None = None,
                 scale: str | Sequence[float] | None = None, fill_missing: bool = True) -> None:
        self.path = str(path)
        if store is None:
            store = _core.store_for(self.path, None if storage_options is None
                                    else dict(storage_options))
        if scale is not None:
            if level != 0:
                raise ValueError("give a precomputed layer's scale by level= or scale=, not both")
            selector = scale if isinstance(scale, str) else ",".join(str(v) for v in scale)
            level = _core.precomputed_scale(self.path, selector, store)
        self._reader = _core.ArrayReader(self.path, io, int(level), store, bool(fill_missing))
        self.format = self._reader.format
        self.shape = tuple(self._reader.shape)
        self.dtype = _parse_dtype(self._reader.dtype, str(path), self._reader.itemsize)
        if self.dtype.itemsize != self._reader.itemsize:
            raise _core.CorruptDataError(
                f"{path}: dtype {self.dtype} does not match the stored item size "
                f"{self._reader.itemsize}")
        self.chunks = tuple(self._reader.chunks)
        self.blocks = tuple(self._reader.blocks)
        #: Where index 0 of each axis lies in the array's own coordinates: a precomputed
        #: scale's voxel_offset as (0, z, y, x); zeros for `.b2nd` and zarr.
        self.origin = tuple(self._reader.origin)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        """Items in the array."""
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """Bytes of the decoded array (what `np.asarray` allocates), not of the file."""
        return self.size * self.dtype.itemsize

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __array__(self, dtype: Any = None, copy: bool | None = None
                  ) -> np.ndarray:
        """The whole array, read (NumPy's `np.asarray(arr)` / `np.array(arr)`)."""
        if copy is False:
            raise ValueError("a patchfeed array is read from its file: it cannot be viewed "
                             "without a copy (copy=False)")
        out = self.read_box([0] * self.ndim, self.shape)
        return out if dtype is None else out.astype(dtype, copy=False)

    def __repr__(self) -> str:
        return (f"NdArray({self.path!r}, format={self.format!r}, shape={self.shape}, "
                f"dtype={self.dtype}, chunks={self.chunks}, blocks={self.blocks})")

    def read_box(self, start: Sequence[int], stop: Sequence[int], pad: float = 0, *,
                 absolute: bool = False) -> np.ndarray:
        """Returns array[start:stop] as a new array; parts outside the array are `pad`.

        `start` and `stop` are indexes from 0, as NumPy's; with `absolute=True` they are in the
        array's own coordinates instead (`origin` is index 0): a precomputed scale's voxel
        coordinates, as cloud-volume's cutouts and tensorstore's domain take them."""
        if absolute:
            if len(start) != self.ndim or len(stop) != self.ndim:
                raise ValueError(f"{self.path}: a box of {len(start)} and {len(stop)} values "
                                 f"for an array of {self.ndim} axes")
            start = [a - o for a, o in zip(start, self.origin)]
            stop = [b - o for b, o in zip(stop, self.origin)]
        raw = self._reader.read_box(list(start), list(stop), float(pad))
        shape = tuple(b - a for a, b in zip(start, stop))
        return np.frombuffer(raw, dtype=self.dtype).reshape(shape)

    def __getitem__(self, key) -> np.ndarray:
        """NumPy's basic indexing with steps of 1: integers, slices and one Ellipsis, e.g.
        arr[0, 10:20], arr[..., 5]. Anything else is a TypeError, out-of-range integers an
        IndexError, as in NumPy."""
        if not isinstance(key, tuple):
            key = (key,)
        ellipses = [i for i, k in enumerate(key) if k is Ellipsis]
        if len(ellipses) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        if ellipses:
            i = ellipses[0]
            fill = max(len(self.shape) - (len(key) - 1), 0)
            key = key[:i] + (slice(None),) * fill + key[i + 1:]
        if len(key) > len(self.shape):
            raise IndexError(f"too many indices for array: array is {len(self.shape)}-dimensional, "
                             f"but {len(key)} were indexed")
        start, stop, squeeze = [], [], []
        for d, n in enumerate(self.shape):
            k = key[d] if d < len(key) else slice(None)
            if isinstance(k, slice):
                a, b, step = k.indices(n)
                if step != 1:
                    raise ValueError("only steps of 1 are supported")
                start.append(a)
                stop.append(max(a, b))
                continue
            try:
                i = operator.index(k)
            except TypeError:
                raise TypeError(f"patchfeed arrays are indexed by integers, slices and '...', "
                                f"not {type(k).__name__}") from None
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {d} with size {n}")
            i = i + n if i < 0 else i
            start.append(i)
            stop.append(i + 1)
            squeeze.append(d)
        out = self.read_box(start, stop)
        return out.squeeze(axis=tuple(squeeze)) if squeeze else out


def open_array(path: str, io: str = "mmap", level: int = 0,
               storage_options: Mapping[str, Any] | None = None, *,
               scale: str | Sequence[float] | None = None, fill_missing: bool = True) -> NdArray:
    """Opens a `.b2nd` file or sparse frame directory, a zarr v2 or v3 array (a directory with
    `.zarray` or `zarr.json`), an OME-Zarr image group: its level `level` (0: the highest
    resolution; or open `<group>/<path>` directly), or a Neuroglancer precomputed layer (a
    directory with `info`): its scale `level`, or `scale` given by key ("8_8_40") or resolution
    ((8, 8, 40)), or the scale's folder `<layer>/<key>`, as (C, z, y, x) (docs/precomputed.md);
    a chunk never written reads as zeros, or with `fill_missing=False` fails the read naming
    its file. `io` applies to local `.b2nd` files; zarr and precomputed chunk files are always
    read with positional reads.

    `path` may be a URL: `s3://bucket/key`, `gs://bucket/key`, `https://host/path`
    (docs/storage.md). `storage_options` says what the environment does not, with fsspec's
    names: `endpoint_url`, `anon`, `key`, `secret`, `token`, `region`, `profile`."""
    return NdArray(path, io, level, storage_options, scale=scale, fill_missing=fill_missing)


def write_b2nd(path: str, array: np.ndarray, chunks: Sequence[int], blocks: Sequence[int],
               codec: str = "zstd", clevel: int = 5, filters: Sequence[str] = ("shuffle",),
               splitmode: str = "auto", sparse: bool = False) -> None:
    """Writes `array` as a `.b2nd` frame readable by python-blosc2."""
    array = np.require(array, requirements="C")  # keeps 0-d arrays 0-d, unlike ascontiguousarray
    # python-blosc2 stores simple dtypes as dtype.str, structured ones as str(dtype).
    dtype = array.dtype.str if array.dtype.fields is None else str(array.dtype)
    _core.write_b2nd(str(path), array.reshape(-1).view(np.uint8), list(array.shape), dtype,
                     list(chunks), list(blocks), codec, clevel, list(filters), splitmode, sparse,
                     array.dtype.itemsize)
