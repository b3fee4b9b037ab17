# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Writes the fuzzers' regression inputs for the structural checks of issue 10: real chunks
(tests/codec/testdata/golden) and real frames (python-blosc2) with one field damaged, one file
per check, into tests/fuzz/chunk_regressions/ and tests/fuzz/frame_regressions/. `make fuzz`
copies both into the fuzzers' corpora, so every run starts from these.

Usage: python3 tests/fuzz/make_damaged_inputs.py   (needs python-blosc2 and numpy)
The committed files were made with the versions in tests/codec/testdata/golden/VERSIONS.txt.
"""

from __future__ import annotations

import pathlib
import struct
import tempfile

import blosc2
import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
GOLDEN = HERE.parent / "codec" / "testdata" / "golden"
B2_ZSTD = "blosc2_zstd_bitshuffle_ts4_n33333_c5_never_smooth"  # 5 blocks, starts increasing
B1_ZSTD = "blosc1_zstd_shuffle_ts8_n30000_c5_bs4096"  # c-blosc 1.x, 8 blocks


def golden(name: str) -> bytearray:
    return bytearray((GOLDEN / f"{name}.chunk").read_bytes())


def i32(buf: bytearray, at: int, value: int | None = None) -> int:
    if value is not None:
        struct.pack_into("<i", buf, at, value)
    return struct.unpack_from("<i", buf, at)[0]


def damaged_chunks() -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for bit, name in ((0x10, "zeros"), (0x20, "nan"), (0x40, "uninit")):
        c = golden(B2_ZSTD)
        c[31] |= bit
        out[f"special_{name}_bits_on_regular_chunk"] = c
    c = golden("blosc2_zeros_n5000") + bytearray(8)
    i32(c, 12, 40)
    out["zeros_chunk_of_40_bytes"] = c
    c = golden("blosc2_repeat_ts4_n4000")
    i32(c, 4, 0)
    out["repeat_value_larger_than_nbytes"] = c
    c = golden(B2_ZSTD)
    i32(c, 32 + 8, 33)
    out["block_start_inside_offsets"] = c
    c = golden(B2_ZSTD)
    i32(c, 32 + 12, i32(c, 32 + 4))
    out["two_blocks_share_a_start"] = c
    c = golden(B2_ZSTD)
    s1, s2 = i32(c, 32 + 4), i32(c, 32 + 8)
    i32(c, 32 + 8, s1 + (s2 - s1) // 2)
    out["block_start_moved_mid_stream"] = c
    c = golden(B2_ZSTD) + bytearray(16)
    i32(c, 12, len(c))
    out["bytes_after_last_block"] = c
    c = golden(B2_ZSTD)
    i32(c, 32, i32(c, 32) + 4)
    out["gap_before_first_block"] = c
    for version in (1, 3, 0x42):
        c = golden(B1_ZSTD)
        c[0] = version
        out[f"blosc1_version_{version}"] = c
    c = golden(B2_ZSTD)
    c[0] = 2
    out["version_2_with_32_byte_header"] = c
    c = golden(B1_ZSTD)
    c[2] |= 0x08
    out["blosc1_reserved_flag_0x08"] = c
    c = golden(B1_ZSTD)
    c[1] = 2
    out["blosc1_codec_version_2"] = c
    c = golden(B1_ZSTD)
    i32(c, 8, i32(c, 4) + 8)
    out["blosc1_blocksize_above_nbytes"] = c
    c = golden(B1_ZSTD)
    last = i32(c, 16 + 4 * 7)
    c = c[: last + 4]
    i32(c, last, 0)
    i32(c, 12, last + 4)
    out["blosc1_zero_run_stream"] = c
    c = golden(B2_ZSTD)
    c[2] = (c[2] & 0x1F) | (6 << 5)
    out["codec_format_6_naming_zstd"] = c
    c = golden("blosc2_lz4_dict_ts4_n80000")
    i32(c, 32 + 4 * 5, 32 * 1024 + 1)
    out["dictionary_above_32k"] = c
    c = golden("blosc2_lz4_none_ts1_n50000_c5_never_random")  # memcpyed
    c[31] |= 0x01
    out["memcpyed_chunk_with_dictionary_flag"] = c
    c = golden("blosc2_zeros_n5000")
    c[2] |= 0x02
    out["zeros_chunk_with_memcpyed_flag"] = c
    c = bytearray(17)
    c[0:4] = bytes([2, 1, 0x02, 1])
    struct.pack_into("<iii", c, 4, 2**31 - 1 - 32, 536866816, 17)
    out["memcpyed_17_bytes_claiming_2gb"] = c
    return {k: bytes(v) for k, v in out.items()}


class Frame:
    """A contiguous frame's bytes and where its chunks and offsets chunk lie."""

    def __init__(self, data: bytes) -> None:
        self.data = bytearray(data)
        self.header_len = struct.unpack_from(">i", data, 11)[0]
        cbytes = struct.unpack_from(">q", data, 39)[0]
        self.offsets_at = self.header_len + cbytes
        off_cbytes = struct.unpack_from("<i", data, self.offsets_at + 12)[0]
        raw = blosc2.decompress(bytes(data[self.offsets_at : self.offsets_at + off_cbytes]))
        self.offsets = np.frombuffer(raw, dtype="<i8")

    def chunk_at(self, i: int) -> int:
        return self.header_len + int(self.offsets[i])


def write_b2nd(arr: np.ndarray, chunks, blocks, **cparams) -> bytes:
    cparams.setdefault("nthreads", 1)
    with tempfile.TemporaryDirectory() as d:
        path = pathlib.Path(d) / "a.b2nd"
        blosc2.asarray(arr, urlpath=str(path), mode="w", chunks=chunks, blocks=blocks,
                       cparams=cparams)
        return path.read_bytes()


def damaged_frames() -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64) % 97 / 4
    base = write_b2nd(x, (32, 64), (8, 64), codec=blosc2.Codec.LZ4)
    f = Frame(base)
    at = f.chunk_at(1)
    s1, s2 = i32(f.data, at + 32 + 4), i32(f.data, at + 32 + 8)
    i32(f.data, at + 32 + 8, s1 + (s2 - s1) // 2)
    out["bstart_moved_mid_stream"] = f.data
    f = Frame(base)
    f.data[f.chunk_at(0) + 31] |= 0x10
    out["zeros_bits_on_stored_chunk"] = f.data
    f = Frame(base)
    f.data[f.offsets_at + 31] |= 0x10
    out["zeros_bits_on_offsets_chunk"] = f.data
    f = Frame(base)
    struct.pack_into(">i", f.data, 48, 8)  # frame typesize 8 for a float32 array
    out["typesize_differs_from_dtype"] = f.data
    f = Frame(base)
    f.data[f.chunk_at(0) + 3] = 8  # chunk typesize 8 for a float32 array
    out["chunk_typesize_differs_from_itemsize"] = f.data
    f = Frame(base)
    f.data[f.offsets_at + 3] = 4
    out["offsets_chunk_typesize_4"] = f.data
    for at, value, name in ((26, 0x10, "frame_type_16"), (70, 7, "seven_default_filters"),
                            (71, 9, "default_filter_id_9")):
        f = Frame(base)
        f.data[at] = value
        out[name] = f.data
    # DELTA chunks of two blocks whose metalayer claims one block per chunk: the block shape is
    # the last int32 of the b2nd content (msgpack 0xD2 + BE int32 per dimension).
    delta = bytearray(write_b2nd(x, (16, 64), (8, 64), codec=blosc2.Codec.LZ4,
                                 filters=[blosc2.Filter.DELTA, blosc2.Filter.SHUFFLE],
                                 filters_meta=[0, 0]))
    pattern = b"\xd2" + struct.pack(">i", 8) + b"\xd2" + struct.pack(">i", 64)
    at = delta.rfind(pattern)
    assert at > 0
    struct.pack_into(">i", delta, at + 1, 16)
    out["delta_chunk_blocksize_differs_from_b2nd"] = delta
    # Valid: blocks stored out of order by four compression threads (retried until they are).
    for _ in range(100):
        f = Frame(write_b2nd(x, (64, 64), (4, 64), codec=blosc2.Codec.LZ4, nthreads=4))
        starts = np.frombuffer(f.data, dtype="<i4", count=16, offset=f.chunk_at(0) + 32)
        if np.any(np.diff(starts) < 0):
            out["blocks_out_of_order_threads4"] = f.data
            break
    return {k: bytes(v) for k, v in out.items()}


def main() -> None:
    for folder, files, ext in (("chunk_regressions", damaged_chunks(), ".chunk"),
                               ("frame_regressions", damaged_frames(), ".b2nd")):
        (HERE / folder).mkdir(exist_ok=True)
        for name, data in files.items():
            (HERE / folder / f"{name}{ext}").write_bytes(data)


if __name__ == "__main__":
    main()
