# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Type stubs for patchfeed._core, the pybind11 extension (use the patchfeed package)."""

from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

from typing_extensions import Buffer

from patchfeed.augment import AugmentationOptions

augment: ModuleType

class CorruptDataError(ValueError):
    """Raised for corrupt or truncated data; the message names file, chunk and block."""

# ---- codec and frames ---------------------------------------------------------------------

def compress(
    data: Buffer,
    *,
    typesize: int = 1,
    codec: str = "lz4",
    clevel: int = 5,
    filters: Sequence[str] = ["shuffle"],
    filters_meta: Sequence[int] = [],
    splitmode: str = "auto",
    blocksize: int = 0,
    blosc1: bool = False,
    use_dict: bool = False,
) -> bytes: ...
def decompress(chunk: Buffer, *, max_nbytes: int = 1 << 30) -> bytes: ...
def decompress_into(chunk: Buffer, out: Buffer) -> int: ...
def chunk_info(chunk: Buffer) -> dict[str, Any]: ...
def nnunet_chunk_block_shapes(
    shape: Sequence[int], patch_size: Sequence[int], itemsize: int
) -> tuple[list[int], list[int]]: ...
def precomputed_scale(layer: str, selector: str, store: Store | None = None) -> int: ...
def write_b2nd(
    path: str,
    data: Buffer,
    shape: Sequence[int],
    dtype: str,
    chunks: Sequence[int],
    blocks: Sequence[int],
    codec: str = "zstd",
    clevel: int = 5,
    filters: Sequence[str] = ["shuffle"],
    splitmode: str = "auto",
    sparse: bool = False,
    itemsize: int = 0,
) -> None: ...

class Store:
    @property
    def remote(self) -> bool: ...
    def stat(self, path: str) -> str | None: ...
    def list(self, folder: str) -> list[str]: ...
    def read(self, path: str, max_bytes: int) -> bytes: ...

def store_for(path: str, storage_options: dict[str, Any] | None = None) -> Store: ...

class ArrayReader:
    def __init__(self, path: str, io: str = "mmap", level: int = 0,
                 store: Store | None = None) -> None: ...
    @property
    def shape(self) -> list[int]: ...
    @property
    def dtype(self) -> bytes: ...
    @property
    def path(self) -> str: ...
    @property
    def format(self) -> str: ...
    @property
    def chunks(self) -> list[int]: ...
    @property
    def blocks(self) -> list[int]: ...
    @property
    def itemsize(self) -> int: ...
    def read_box(self, start: Sequence[int], stop: Sequence[int], pad: float = 0.0) -> bytearray: ...

# ---- loader -------------------------------------------------------------------------------

class Dataset:
    @staticmethod
    def from_nnunet_folder(folder: str, store: Store | None = None) -> Dataset: ...
    @staticmethod
    def from_folder(folder: str, naming: Sequence[tuple[str, str]],
                    store: Store | None = None) -> Dataset: ...
    @staticmethod
    def from_zarr_group(group: str, arrays: Sequence[str],
                        store: Store | None = None) -> Dataset: ...
    @staticmethod
    def from_list(
        array_names: Sequence[str], cases: Sequence[tuple[str, Sequence[str]]],
        store: Store | None = None,
    ) -> Dataset: ...
    @property
    def array_names(self) -> list[str]: ...
    @property
    def num_cases(self) -> int: ...
    @property
    def case_ids(self) -> list[str]: ...
    def paths(self, case_index: int) -> list[str]: ...
    def __len__(self) -> int: ...

class Batch:
    @property
    def epoch(self) -> int: ...
    @property
    def batch_index(self) -> int: ...
    @property
    def pinned(self) -> bool: ...
    @property
    def names(self) -> list[str]: ...
    @property
    def samples(self) -> list[tuple[int, tuple[int, ...], bool, int]]: ...
    @property
    def released(self) -> bool: ...
    def data_ptr(self, index: int) -> int: ...
    def dlpack(self, index: int) -> Any: ...  # a "dltensor" PyCapsule
    def numpy(self, index: int) -> Any: ...  # numpy.ndarray viewing the slot
    def release(self) -> None: ...

class ForegroundIndex:
    @staticmethod
    def from_locations(spatial_shape: Sequence[int], keys: Sequence[Sequence[int]],
                       coords: Sequence[Any], row_length: int) -> ForegroundIndex: ...
    @property
    def spatial_shape(self) -> list[int]: ...
    @property
    def keys(self) -> list[list[int]]: ...
    @property
    def counts(self) -> list[int]: ...

class Loader:
    # patchfeed.Loader's keywords (bindings/loader_options.cc), except: `dataset` is a Dataset,
    # `arrays` pairs each array with its pad value (None: the default), `rank`/`world_size`
    # are resolved, `device`/`as_numpy` are Python's; `start_epoch`/`start_batch` set the first
    # position. tests/python/test_loader_options.py checks names and defaults against C++.
    def __init__(
        self,
        *,
        dataset: Dataset,
        patch_size: Sequence[int],
        batch_size: int = 2,
        arrays: Sequence[tuple[str, float | None]] = [],
        epoch_mode: str = "infinite",
        samples_per_epoch: int = 0,
        oversample_foreground: float = 0.33,
        probabilistic_oversampling: bool = False,
        need_to_pad: Sequence[int] | None = None,
        case_weights: Sequence[float] | None = None,
        annotated_key: int = -1,
        foreground: str = "auto",
        foreground_keys: Sequence[Sequence[int]] | None = None,
        foreground_cache_dir: str | None = None,
        foreground_locations: Sequence[ForegroundIndex] | None = None,
        seed: int = 0,
        rank: int = 0,
        world_size: int = 1,
        num_threads: int = 0,
        ring_size: int = 3,
        memory_budget: int = 4 << 30,
        pin_memory: bool | None = None,
        io_mode: str = "mmap",
        io_depth: int = 64,
        io_backend: str = "auto",
        error_policy: str = "fail",
        max_redraws: int = 8,
        check_finite: bool = False,
        max_open_files: int = 1024,
        min_task_bytes: int = 256 << 10,
        augmentation: AugmentationOptions | Mapping[str, Any] | None = None,
        consumer_produces: bool = True,
        start_epoch: int = 0,
        start_batch: int = 0,
    ) -> None: ...
    def next(self, poll_seconds: float = 0.05) -> Batch | None: ...
    def seek(self, epoch: int, batch_index: int) -> None: ...
    def state(self) -> dict[str, int]: ...
    def metrics(self) -> dict[str, int | str]: ...
    def array_layout(self) -> list[tuple[str, str, tuple[int, ...]]]: ...
    @property
    def excluded_cases(self) -> list[tuple[int, str, str]]: ...
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def batches_per_epoch(self) -> int: ...
    @property
    def local_batch_size(self) -> int: ...
    @property
    def num_cases(self) -> int: ...
    @property
    def num_threads(self) -> int: ...
    @property
    def pinned(self) -> bool: ...
    @property
    def unpinned_reason(self) -> str: ...

def loader_options() -> list[str]: ...
def loader_option_defaults() -> dict[str, Any]: ...

# ---- command line -------------------------------------------------------------------------

def run_cli(args: Sequence[str]) -> int: ...

# ---- tiles (patchfeed.tiles) --------------------------------------------------------------

class Tile:
    @property
    def index(self) -> int: ...
    @property
    def box(self) -> tuple[tuple[int, ...], tuple[int, ...]]: ...  # (start, stop), spatial
    @property
    def pinned(self) -> bool: ...
    @property
    def names(self) -> list[str]: ...
    @property
    def released(self) -> bool: ...
    def data_ptr(self, index: int) -> int: ...
    def dlpack(self, index: int) -> Any: ...  # a "dltensor" PyCapsule
    def numpy(self, index: int) -> Any: ...  # numpy.ndarray viewing the tile's buffer
    def release(self) -> None: ...

class TileReader:
    def __init__(
        self,
        dataset: Dataset,
        case_index: int,
        tile_size: Sequence[int],
        overlap: float = 0.5,
        arrays: Sequence[tuple[str, float | None]] = ...,
        read_ahead: int = 2,
        num_threads: int = 0,
        io_mode: str = "mmap",
        pin_memory: bool | None = None,
        min_task_bytes: int = 262144,
        memory_budget: int = 4294967296,
    ) -> None: ...
    def next(self, poll_seconds: float = 0.05) -> Tile | None: ...
    def close(self) -> None: ...
    def array_layout(self) -> list[tuple[str, str, tuple[int, ...]]]: ...
    @property
    def closed(self) -> bool: ...
    @property
    def num_tiles(self) -> int: ...
    @property
    def starts(self) -> list[list[int]]: ...
    @property
    def case_shape(self) -> list[int]: ...
    @property
    def tile_size(self) -> list[int]: ...
    @property
    def slices(self) -> bool: ...
    @property
    def num_threads(self) -> int: ...
    @property
    def pinned(self) -> bool: ...

def sliding_window_steps(
    image_size: Sequence[int], tile_size: Sequence[int], tile_step_size: float
) -> list[list[int]]: ...
