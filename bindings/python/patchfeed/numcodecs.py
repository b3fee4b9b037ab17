# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""patchfeed's Blosc codec for numcodecs (and so for zarr v2 arrays).

`Blosc` takes numcodecs' `Blosc` settings and API (`cname`, `clevel`, `shuffle` with
AUTOSHUFFLE, `blocksize`, `typesize`; `encode`, `decode(buf, out=)`, `get_config`,
`from_config`), writes Blosc1 chunks that c-blosc 1.x (numcodecs' own Blosc) decodes, decodes
any Blosc1 or Blosc2 chunk, and releases the GIL while it works: no internal threads, no global
state, so it is safe from any thread and in forked processes.

numcodecs finds it under its own id, "patchfeed_blosc", through the `numcodecs.codecs` entry
point. `register(replace_blosc=True)` also makes it numcodecs' "blosc", so arrays whose
metadata names "blosc" (every zarr v2 Blosc array) are read and written with patchfeed while
their metadata stays readable by stock numcodecs:

    import patchfeed.numcodecs
    patchfeed.numcodecs.register(replace_blosc=True)

Where c-blosc 1.x differs by design, numcodecs' behaviour is kept: AUTOSHUFFLE is bit-shuffle
for 1-byte items and byte-shuffle otherwise; a typesize above 255 is compressed as 1-byte items;
buffers over 2**31 - 1 bytes are refused. The compressed bytes are not c-blosc's bit for bit
(the compressors' own choices differ); what is guaranteed is that either side decodes the
other's chunks to the same bytes (tests/python/test_numcodecs_blosc.py).
"""

from __future__ import annotations

from typing import Any

from numcodecs.abc import Codec
from numcodecs.compat import ensure_contiguous_ndarray

from patchfeed import _core

NOSHUFFLE = 0
SHUFFLE = 1
BITSHUFFLE = 2
AUTOSHUFFLE = -1
AUTOBLOCKS = 0

# c-blosc 1.x's compressors as numcodecs ships them (snappy is not built there either).
CNAMES = ("blosclz", "lz4", "lz4hc", "zlib", "zstd")
_FILTERS = {NOSHUFFLE: [], SHUFFLE: ["shuffle"], BITSHUFFLE: ["bitshuffle"]}
_SHUFFLE_NAMES = {AUTOSHUFFLE: "AUTOSHUFFLE", NOSHUFFLE: "NOSHUFFLE", SHUFFLE: "SHUFFLE",
                  BITSHUFFLE: "BITSHUFFLE"}
_MAX_TYPESIZE = 255  # c-blosc 1.x's BLOSC_MAX_TYPESIZE: larger items are compressed as bytes


class Blosc(Codec):
    """Blosc1 compression with patchfeed's codec, configured as numcodecs.Blosc.

    Parameters
    ----------
    cname : one of 'blosclz', 'lz4', 'lz4hc', 'zlib', 'zstd'.
    clevel : 0 (stored) to 9.
    shuffle : NOSHUFFLE (0), SHUFFLE (1), BITSHUFFLE (2) or AUTOSHUFFLE (-1): bit-shuffle for
        1-byte items, byte-shuffle otherwise.
    blocksize : bytes per block; 0 picks c-blosc's automatic size.
    typesize : the item size to shuffle by; default the buffer's own item size.
    """

    codec_id = "patchfeed_blosc"
    NOSHUFFLE = NOSHUFFLE
    SHUFFLE = SHUFFLE
    BITSHUFFLE = BITSHUFFLE
    AUTOSHUFFLE = AUTOSHUFFLE
    max_buffer_size = 2**31 - 1

    def __init__(self, cname: str = "lz4", clevel: int = 5, shuffle: int = SHUFFLE,
                 blocksize: int = AUTOBLOCKS, typesize: int | None = None) -> None:
        if isinstance(typesize, int) and typesize < 1:
            raise ValueError(f"Cannot use typesize {typesize} less than 1.")
        self.cname = cname.decode("ascii") if isinstance(cname, bytes) else cname
        self.clevel = clevel
        self.shuffle = shuffle
        self.blocksize = blocksize
        self._typesize = typesize  # not part of the config, as in numcodecs

    def encode(self, buf: Any) -> bytes:
        if self.cname not in CNAMES:
            raise ValueError(f"compressor not supported: {self.cname!r}")
        if self.shuffle not in _SHUFFLE_NAMES:
            raise ValueError("invalid shuffle argument; expected -1, 0, 1 or 2, found "
                             f"{self.shuffle!r}")
        arr = ensure_contiguous_ndarray(buf, self.max_buffer_size)
        typesize = self._typesize if isinstance(self._typesize, int) else arr.itemsize
        shuffle = self.shuffle
        if shuffle == AUTOSHUFFLE:
            shuffle = BITSHUFFLE if typesize == 1 else SHUFFLE
        if typesize > _MAX_TYPESIZE:
            typesize = 1
        return _core.compress(arr, typesize=typesize, codec=self.cname, clevel=self.clevel,
                              filters=_FILTERS[shuffle], blocksize=self.blocksize, blosc1=True)

    def decode(self, buf: Any, out: Any = None) -> Any:
        chunk = ensure_contiguous_ndarray(buf, self.max_buffer_size)
        if out is None:
            return _core.decompress(chunk, max_nbytes=self.max_buffer_size)
        _core.decompress_into(chunk, ensure_contiguous_ndarray(out))
        return out

    def __repr__(self) -> str:
        shuffle = _SHUFFLE_NAMES.get(self.shuffle, repr(self.shuffle))
        return (f"{type(self).__name__}(cname={self.cname!r}, clevel={self.clevel!r}, "
                f"shuffle={shuffle}, blocksize={self.blocksize})")


class BloscAsBlosc(Blosc):
    """`Blosc` under numcodecs' own id "blosc" (see `register`)."""

    codec_id = "blosc"


def register(replace_blosc: bool = False) -> None:
    """Registers `Blosc` with numcodecs as "patchfeed_blosc" (the entry point does this when
    patchfeed is installed) and, with `replace_blosc`, as "blosc" in place of numcodecs' own, so
    every Blosc array in zarr v2 metadata decodes and encodes with patchfeed."""
    from numcodecs import register_codec

    register_codec(Blosc)
    if replace_blosc:
        register_codec(BloscAsBlosc, codec_id="blosc")
