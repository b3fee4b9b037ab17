"""patchfeed: a fast patch loader for training on N-d Blosc2 data.

The codec layer is exposed for tools and tests: `compress`, `decompress`, `chunk_info`.
"""

from patchfeed._core import CorruptDataError, chunk_info, compress, decompress

__all__ = ["CorruptDataError", "chunk_info", "compress", "decompress"]
__version__ = "0.1.0"
