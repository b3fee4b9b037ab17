# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""The parameter space of the differential codec tests and a covering subset of it.

The full product (codec x filter chain x typesize x size x clevel x split mode x dictionary x
data kind) has ~10^6 points; `matrix_cases()` returns a few hundred of them:

* full sweeps of the pairs that interact most (codec x filter chain, typesize x filter chain,
  size x typesize x shuffle kind, clevel x codec, split mode x codec x typesize,
  dictionary x codec x clevel, data kind x codec), every other axis at a default;
* a seeded random sample (1000 points) of the whole product.

Also a name mapping to python-blosc2 and a tiny independent chunk-header parser.
"""

from __future__ import annotations

import dataclasses
import random
import struct

import blosc2
import numpy as np

CODECS = ("blosclz", "lz4", "lz4hc", "zlib", "zstd")
B2_CODEC = {
    "blosclz": blosc2.Codec.BLOSCLZ,
    "lz4": blosc2.Codec.LZ4,
    "lz4hc": blosc2.Codec.LZ4HC,
    "zlib": blosc2.Codec.ZLIB,
    "zstd": blosc2.Codec.ZSTD,
}
B2_FILTER = {
    "shuffle": blosc2.Filter.SHUFFLE,
    "bitshuffle": blosc2.Filter.BITSHUFFLE,
    "delta": blosc2.Filter.DELTA,
    "trunc_prec": blosc2.Filter.TRUNC_PREC,
    "bytedelta": blosc2.Filter.BYTEDELTA,
}
FILTER_ID = {"shuffle": 1, "bitshuffle": 2, "delta": 3, "trunc_prec": 4, "bytedelta": 35}
B2_SPLIT = {
    "always": blosc2.SplitMode.ALWAYS_SPLIT,
    "never": blosc2.SplitMode.NEVER_SPLIT,
    "auto": blosc2.SplitMode.AUTO_SPLIT,
    "forward_compat": blosc2.SplitMode.FORWARD_COMPAT_SPLIT,
}
SPLITS = tuple(B2_SPLIT)
# Filter chains, slot 0 first ("+" separates slots). trunc_prec needs typesize 4 or 8;
# "trunc_prec-7" keeps all but the 7 low mantissa bits (a negative filters_meta).
CHAINS = (
    "none",
    "shuffle",
    "bitshuffle",
    "delta",
    "trunc_prec",
    "shuffle+bytedelta",
    "shuffle+bitshuffle",
    "delta+shuffle",
    "trunc_prec+shuffle",
    "trunc_prec-7+bitshuffle",
)
TYPESIZES = (1, 2, 3, 4, 8, 12, 16)
SIZES = (1, 7, 31, 32, 33, 127, 1000, 4096, 65536, 65537, 262145, 300001, 3000001)
DICT_CODECS = ("lz4", "lz4hc", "zstd")
KINDS = ("smooth_f32", "smooth_f64", "labels_u8", "labels_i16", "random", "runs", "zeros")
LARGE = 300001  # above this, slow settings (zstd >= 7, lz4hc 9) are avoided to save time


def chain_filters(chain: str, typesize: int) -> tuple[list[str], list[int]]:
    """(filter names, filters_meta) of a chain; trunc_prec keeps 13 (float32) / 30 bits."""
    if chain == "none":
        return [], []
    names, metas = [], []
    for part in chain.split("+"):
        if part.startswith("trunc_prec"):
            bits = part[len("trunc_prec") :]
            meta = int(bits) if bits else (13 if typesize == 4 else 30)
            names.append("trunc_prec")
            metas.append(meta)
        else:
            names.append(part)
            metas.append(0)
    return names, metas


def chain_allowed(chain: str, typesize: int) -> bool:
    return "trunc_prec" not in chain or typesize in (4, 8)


@dataclasses.dataclass(frozen=True)
class Case:
    """One point of the product: what both libraries are asked to compress."""

    codec: str = "lz4"
    chain: str = "shuffle"
    typesize: int = 4
    nbytes: int = 65537
    clevel: int = 5
    split: str = "auto"
    use_dict: bool = False
    kind: str = "smooth_f32"

    @property
    def id(self) -> str:
        d = "+dict" if self.use_dict else ""
        return (
            f"{self.codec}{d}-c{self.clevel}-{self.chain}-ts{self.typesize}-n{self.nbytes}"
            f"-{self.split}-{self.kind}"
        )

    @property
    def lossy(self) -> bool:
        return "trunc_prec" in self.chain

    def filters(self) -> tuple[list[str], list[int]]:
        return chain_filters(self.chain, self.typesize)

    def pf_kwargs(self) -> dict:
        names, metas = self.filters()
        return {
            "typesize": self.typesize,
            "codec": self.codec,
            "clevel": self.clevel,
            "filters": names,
            "filters_meta": metas,
            "splitmode": self.split,
            "use_dict": self.use_dict,
        }

    def b2_kwargs(self) -> dict:
        names, metas = self.filters()
        return {
            "typesize": self.typesize,
            "codec": B2_CODEC[self.codec],
            "clevel": self.clevel,
            "filters": [B2_FILTER[n] for n in names] or [blosc2.Filter.NOFILTER],
            "filters_meta": [m for m in metas] or [0],
            "splitmode": B2_SPLIT[self.split],
            "use_dict": self.use_dict,
            "nthreads": 1,
        }

    def truncated(self, data: bytes) -> bytes:
        """`data` after TRUNC_PREC as the format notes (3.5) define it: the low mantissa bits
        of every whole element cleared; bytes after the last whole element kept."""
        names, metas = self.filters()
        p = metas[names.index("trunc_prec")]
        zeroed = (23 if self.typesize == 4 else 52) - p if p >= 0 else -p
        keep = len(data) - len(data) % self.typesize
        words = np.frombuffer(data[:keep], dtype="<u4" if self.typesize == 4 else "<u8")
        mask = words.dtype.type(~((1 << zeroed) - 1) & (2 ** (8 * self.typesize) - 1))
        return (words & mask).tobytes() + data[keep:]

    def expected_slots(self) -> tuple[list[int], list[int]]:
        """The six filter ids and meta bytes both libraries should record (meta as uint8;
        BYTEDELTA's 0 is recorded as the typesize; BYTEDELTA over 1-byte streams is dropped,
        as c-blosc2 does, leaving its slot empty)."""
        names, metas = self.filters()
        ids, meta = [], []
        for n, m in zip(names, metas, strict=True):
            streams = m if m else self.typesize
            if n == "bytedelta" and streams <= 1:
                ids.append(0)
                meta.append(0)
                continue
            ids.append(FILTER_ID[n])
            meta.append((self.typesize if n == "bytedelta" and m == 0 else m) & 0xFF)
        return ids + [0] * (6 - len(ids)), meta + [0] * (6 - len(meta))


def _sweeps() -> list[Case]:
    out = []
    # codec x filter chain.
    for codec in CODECS:
        for chain in CHAINS:
            out.append(Case(codec=codec, chain=chain))
    # typesize x filter chain (codec rotates so every codec meets every typesize).
    i = 0
    for ts in TYPESIZES:
        for chain in CHAINS:
            if chain_allowed(chain, ts):
                out.append(
                    Case(
                        codec=CODECS[i % 5],
                        chain=chain,
                        typesize=ts,
                        nbytes=33333,
                        kind="smooth_f64" if ts == 8 else "smooth_f32",
                    )
                )
                i += 1
    # size x typesize x shuffle kind.
    for n in SIZES:
        for ts in (1, 4, 12):
            for chain in ("shuffle", "bitshuffle"):
                out.append(Case(codec=CODECS[i % 5], chain=chain, typesize=ts, nbytes=n))
                i += 1
    # clevel x codec.
    for codec in CODECS:
        for clevel in range(10):
            out.append(Case(codec=codec, clevel=clevel, nbytes=100003))
    # split mode x codec x typesize (with and without a byte shuffle: AUTO depends on it).
    for split in SPLITS:
        for codec in CODECS:
            for ts in (1, 4, 16):
                out.append(
                    Case(
                        codec=codec,
                        split=split,
                        typesize=ts,
                        nbytes=131075,
                        chain="shuffle" if ts != 16 else "bitshuffle",
                    )
                )
    # dictionaries (with split blocks too: typesize 4 and a byte shuffle).
    for codec in DICT_CODECS:
        for clevel in (1, 5, 9):
            for kind in ("smooth_f32", "labels_u8"):
                for split in ("auto", "always", "never"):
                    out.append(
                        Case(
                            codec=codec,
                            clevel=clevel,
                            use_dict=True,
                            nbytes=LARGE,
                            kind=kind,
                            typesize=4 if kind == "smooth_f32" else 1,
                            split=split,
                        )
                    )
    # data kind x codec.
    ts_of = {
        "smooth_f32": 4,
        "smooth_f64": 8,
        "labels_u8": 1,
        "labels_i16": 2,
        "random": 8,
        "runs": 1,
        "zeros": 4,
    }
    for kind in KINDS:
        for codec in CODECS:
            out.append(Case(codec=codec, kind=kind, typesize=ts_of[kind], nbytes=200003))
    return out


def _random_cases(count: int, seed: int) -> list[Case]:
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        ts = rng.choice(TYPESIZES)
        chain = rng.choice(CHAINS)
        if not chain_allowed(chain, ts):
            continue
        codec = rng.choice(CODECS)
        nbytes = rng.choice(SIZES[:-1]) if rng.random() > 0.03 else SIZES[-1]
        if rng.random() < 0.3:  # an arbitrary size
            nbytes = rng.randrange(1, 400000)
        clevel = rng.randrange(10)
        if nbytes > LARGE and ((codec == "zstd" and clevel >= 7) or codec == "lz4hc"):
            clevel = rng.randrange(1, 7)
        out.append(
            Case(
                codec=codec,
                chain=chain,
                typesize=ts,
                nbytes=nbytes,
                clevel=clevel,
                split=rng.choice(SPLITS),
                kind=rng.choice(KINDS),
                use_dict=codec in DICT_CODECS and rng.random() < 0.2,
            )
        )
    return out


def matrix_cases() -> list[Case]:
    """Sweeps + 1000 random points, without duplicates, in a stable order."""
    seen: dict[str, Case] = {}
    for c in _sweeps() + _random_cases(1000, seed=20260101):
        seen.setdefault(c.id, c)
    return list(seen.values())


@dataclasses.dataclass
class RawHeader:
    """Chunk header fields read straight from the bytes, independently of patchfeed."""

    version: int
    versionlz: int
    flags: int
    typesize: int
    nbytes: int
    blocksize: int
    cbytes: int
    header_size: int
    filters: list[int]
    filters_meta: list[int]
    udcodec: int
    blosc2_flags: int

    @property
    def memcpyed(self) -> bool:
        return bool(self.flags & 0x02)

    @property
    def dont_split(self) -> bool:
        return bool(self.flags & 0x10)

    @property
    def special(self) -> int:
        return (self.blosc2_flags >> 4) & 7 if self.header_size == 32 else 0


def parse_header(chunk: bytes) -> RawHeader:
    version, versionlz, flags, typesize, nbytes, blocksize, cbytes = struct.unpack_from(
        "<BBBBiii", chunk, 0
    )
    extended = flags & 0x05 == 0x05
    if extended:
        filters, meta = list(chunk[16:22]), list(chunk[24:30])
        udcodec, b2flags = chunk[22], chunk[31]
    else:
        filters, meta, udcodec, b2flags = [0] * 6, [0] * 6, 0, 0
    return RawHeader(
        version,
        versionlz,
        flags,
        typesize,
        nbytes,
        blocksize,
        cbytes,
        32 if extended else 16,
        filters,
        meta,
        udcodec,
        b2flags,
    )


def bstarts(chunk: bytes) -> list[int]:
    """The block offsets of a regular (not special, not memcpyed) chunk."""
    h = parse_header(chunk)
    nblocks = -(-h.nbytes // h.blocksize) if h.nbytes else 0
    return list(struct.unpack_from(f"<{nblocks}i", chunk, h.header_size))
