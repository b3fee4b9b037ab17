"""patchfeed: a fast patch loader for training on N-d Blosc2 data.

Training: `Loader` (an iterable of batches of torch tensors or NumPy arrays, zero-copy from
the loader's ring) over a `Dataset` of `.b2nd` cases. Chunks: `compress`, `decompress`,
`chunk_info`. Arrays: `open_array` (then `read_box` or slicing), `write_b2nd`. Validation and
inference over whole cases: `tiles` (nnU-Net's sliding window) and `TileStitcher`. The command
line: `python -m patchfeed` or `patchfeed`.
"""

from patchfeed._core import CorruptDataError, chunk_info, compress, decompress
from patchfeed.frames import NdArray, open_array, write_b2nd
from patchfeed.loader import BatchInfo, Dataset, Loader, Sample
from patchfeed.tiles import Tile, Tiles, TileStitcher, gaussian_importance_map, tiles

__all__ = [
    "BatchInfo",
    "CorruptDataError",
    "Dataset",
    "Loader",
    "NdArray",
    "Sample",
    "Tile",
    "TileStitcher",
    "Tiles",
    "chunk_info",
    "compress",
    "decompress",
    "gaussian_importance_map",
    "open_array",
    "tiles",
    "write_b2nd",
]
__version__ = "0.1.0"
