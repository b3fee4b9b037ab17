#!/usr/bin/env python3
# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Writes c-blosc2's bit-shuffled bytes for a few (typesize, size) pairs to bitshuffle/.

For each case, `t{t}_s{size}.in` holds random input bytes and `t{t}_s{size}.bitshuffled` holds
what c-blosc2 (through python-blosc2) makes of them with the BITSHUFFLE filter, Blosc2 rule.

Route: the payload becomes the short leftover block of a chunk whose first block is all zeros,
so that the chunk as a whole compresses (is not memcpyed) while the random payload block does
not, and c-blosc2 stores that block's filtered bytes verbatim (stream csize == block size). When
libblosc2.so exports blosc2_bitshuffle, its output is cross-checked against the stored stream.

Usage: python3 make_bitshuffle_golden.py   (python-blosc2 and numpy installed)
"""
import ctypes
import os
import struct

import blosc2
import numpy as np

# (typesize, payload size): m % 8 != 0 and size % t != 0 cases included on purpose.
CASES = [(1, 64), (1, 1029), (2, 515), (3, 771), (4, 4096), (4, 2071), (7, 583), (8, 2047),
         (12, 1000), (16, 4103), (24, 3000), (255, 255 * 16 + 37)]
OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bitshuffle")


def via_chunk(t, payload):
    block = 4096 * t  # larger than any payload, and a multiple of t
    assert len(payload) < block
    full = bytes(block) + payload
    chunk = blosc2.compress2(full, typesize=t, clevel=1, codec=blosc2.Codec.LZ4,
                             filters=[blosc2.Filter.BITSHUFFLE], filters_meta=[0],
                             splitmode=blosc2.SplitMode.NEVER_SPLIT, blocksize=block)
    assert bytes(blosc2.decompress2(chunk)) == full
    assert chunk[2] & 0x02 == 0, "chunk was memcpyed"
    nbytes, blocksize = struct.unpack_from("<ii", chunk, 4)
    assert (nbytes, blocksize) == (len(full), block)
    bstart1 = struct.unpack_from("<i", chunk, 32 + 4)[0]  # 2 blocks: bstarts at 32, 36
    csize = struct.unpack_from("<i", chunk, bstart1)[0]
    assert csize == len(payload), "payload stream was compressed, not stored raw"
    return chunk[bstart1 + 4:bstart1 + 4 + csize]


def via_library(t, payload):
    path = os.path.join(os.path.dirname(blosc2.__file__), "lib", "libblosc2.so")
    if not os.path.exists(path):
        return None
    lib = ctypes.CDLL(path)
    if not hasattr(lib, "blosc2_bitshuffle"):
        return None
    lib.blosc2_bitshuffle.argtypes = [ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p,
                                      ctypes.c_void_p]
    out = ctypes.create_string_buffer(len(payload))
    assert lib.blosc2_bitshuffle(t, len(payload), payload, out) == len(payload)
    return out.raw


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    rng = np.random.default_rng(20260806)
    for t, size in CASES:
        payload = rng.integers(0, 256, size, dtype=np.uint8).tobytes()
        shuffled = via_chunk(t, payload)
        direct = via_library(t, payload)
        assert direct is None or direct == shuffled
        stem = os.path.join(OUT_DIR, f"t{t}_s{size}")
        with open(stem + ".in", "wb") as f:
            f.write(payload)
        with open(stem + ".bitshuffled", "wb") as f:
            f.write(shuffled)
        print(f"t={t} size={size} cross-checked={direct is not None}")
    print("python-blosc2", blosc2.__version__, "c-blosc2",
          getattr(blosc2.blosc2_ext, "VERSION_STRING", "?"))


if __name__ == "__main__":
    main()
