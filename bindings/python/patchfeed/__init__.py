"""patchfeed: a fast patch loader for training on N-d Blosc2 data.

Training: `Loader` (an iterable of batches of torch tensors or NumPy arrays, zero-copy from
the loader's ring) over a `Dataset` of `.b2nd` cases. Chunks: `compress`, `decompress`,
`chunk_info`. Arrays: `open_array` (then `read_box` or slicing), `write_b2nd`. The command
line: `python -m patchfeed` or `patchfeed`.
"""

from patchfeed._core import CorruptDataError, chunk_info, compress, decompress
from patchfeed.frames import NdArray, open_array, write_b2nd
from patchfeed.loader import BatchInfo, Dataset, Loader, Sample

__all__ = [
    "BatchInfo",
    "CorruptDataError",
    "Dataset",
    "Loader",
    "NdArray",
    "Sample",
    "chunk_info",
    "compress",
    "decompress",
    "open_array",
    "write_b2nd",
]
__version__ = "0.1.0"
