"""patchfeed: a fast patch loader for training on N-d Blosc2 data.

Chunks: `compress`, `decompress`, `chunk_info`. Arrays: `open_array` (then `read_box` or
slicing), `write_b2nd`.
"""

from patchfeed._core import CorruptDataError, chunk_info, compress, decompress
from patchfeed.frames import NdArray, open_array, write_b2nd

__all__ = [
    "CorruptDataError",
    "NdArray",
    "chunk_info",
    "compress",
    "decompress",
    "open_array",
    "write_b2nd",
]
__version__ = "0.1.0"
