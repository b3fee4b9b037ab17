# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""patchfeed.numcodecs.Blosc against numcodecs' own Blosc (c-blosc 1.x inside), property-based
with hypothesis, both ways: numcodecs decodes every chunk patchfeed writes, patchfeed decodes
every chunk numcodecs writes, to the same bytes, for any item size (1-17 and 300, odd ones
included), payload lengths 0 to 4 MiB (not multiples of the item size where the typesize is
given), every cname, shuffle (AUTOSHUFFLE too), clevel 0-9 and blocksizes from 0 up, into fresh
buffers and `out=` buffers; plus the config, repr and registration that zarr v2 relies on."""

from __future__ import annotations

import numpy as np
import pytest

numcodecs = pytest.importorskip("numcodecs")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from numcodecs import Blosc as CBlosc  # noqa: E402

from patchfeed.numcodecs import CNAMES, Blosc, register  # noqa: E402

DTYPES = ["u1", "i1", "?", "<u2", ">i2", "f2", "<u4", ">i4", "<f4", ">f8", "<i8", "c8", "c16",
          "V3", "V5", "V7", "V12", "V16", "V17", "V300"]


@st.composite
def payloads(draw):
    """(bytes, dtype): mostly up to 64 KiB, a tenth up to 4 MiB; random, constant, runs or a
    ramp, so every path of the compressors (incompressible, memcpy'd blocks, matches) shows."""
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    nbytes = draw(st.one_of(st.integers(0, 64 << 10), st.integers(0, 4 << 20))
                  if draw(st.integers(0, 9)) == 0 else st.integers(0, 64 << 10))
    n = nbytes // dtype.itemsize
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["random", "zeros", "runs", "ramp"]))
    raw = n * dtype.itemsize
    if kind == "random":
        data = rng.integers(0, 256, raw, dtype=np.uint8)
    elif kind == "zeros":
        data = np.zeros(raw, np.uint8)
    elif kind == "runs":
        data = np.repeat(rng.integers(0, 4, max(1, raw // 97 + 1), dtype=np.uint8), 97)[:raw]
    else:
        data = (np.arange(raw, dtype=np.int64) // 3 % 251).astype(np.uint8)
    return data.tobytes(), dtype


settings_ = settings(max_examples=150, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
configs = st.fixed_dictionaries({
    "cname": st.sampled_from(CNAMES),
    "clevel": st.integers(0, 9),
    "shuffle": st.sampled_from([-1, 0, 1, 2]),
    "blocksize": st.sampled_from([0, 1, 7, 128, 1000, 4096, 65536, 1 << 20, 3 << 20]),
})


def as_array(raw: bytes, dtype: np.dtype) -> np.ndarray:
    return np.frombuffer(raw, dtype=dtype) if raw else np.zeros(0, dtype)


@settings_
@given(payloads(), configs)
def test_numcodecs_decodes_what_patchfeed_encodes(payload, config):
    raw, dtype = payload
    chunk = Blosc(**config).encode(as_array(raw, dtype))
    assert bytes(Blosc().decode(chunk)) == raw
    if not raw:  # c-blosc 1.x reports decoding an empty chunk (its own too) as an error
        with pytest.raises(RuntimeError):
            CBlosc().decode(CBlosc().encode(b""))
        return
    assert bytes(CBlosc().decode(chunk)) == raw
    out = np.empty(len(raw) + 5, np.uint8)  # a larger destination is allowed, as in numcodecs
    assert CBlosc().decode(chunk, out=out) is out
    assert out[: len(raw)].tobytes() == raw


@settings_
@given(payloads(), configs)
def test_patchfeed_decodes_what_numcodecs_encodes(payload, config):
    raw, dtype = payload
    chunk = CBlosc(**config).encode(as_array(raw, dtype))
    assert bytes(Blosc().decode(chunk)) == raw
    out = np.full(len(raw) // dtype.itemsize, 0, dtype)
    assert Blosc().decode(chunk, out=out) is out
    assert out.tobytes() == raw


@settings(max_examples=60, deadline=None)
@given(st.binary(min_size=0, max_size=5000), st.integers(1, 17), configs)
def test_explicit_typesize_on_any_length(raw, typesize, config):
    """A typesize that does not divide the payload (numcodecs passes it to c-blosc as given)."""
    data = np.frombuffer(raw, np.uint8) if raw else np.zeros(0, np.uint8)
    ours = Blosc(typesize=typesize, **config).encode(data)
    theirs = CBlosc(typesize=typesize, **config).encode(data)
    assert bytes(Blosc().decode(theirs)) == raw
    assert bytes(Blosc().decode(ours)) == raw
    if raw:
        assert bytes(CBlosc().decode(ours)) == raw


@pytest.mark.parametrize("cname", CNAMES)
@pytest.mark.parametrize("dtype,shuffle", [("<f4", 1), (">f8", 2), ("V3", -1), ("u1", -1)])
def test_megabyte_payloads_both_ways(cname, dtype, shuffle):
    """Payloads of a few MiB (hypothesis keeps to small ones): many blocks, a short last one."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(7)
    n = ((3 << 20) + 5 * dtype.itemsize + 1) // dtype.itemsize
    smooth = (np.sin(np.arange(n * dtype.itemsize) / 500.0) * 60).astype(np.int8)
    noise = rng.integers(-2, 3, n * dtype.itemsize, dtype=np.int8)
    data = np.frombuffer((smooth + noise).tobytes(), dtype)
    for blocksize in (0, 1 << 20):
        config = {"cname": cname, "clevel": 7, "shuffle": shuffle, "blocksize": blocksize}
        ours, theirs = Blosc(**config).encode(data), CBlosc(**config).encode(data)
        assert bytes(CBlosc().decode(ours)) == data.tobytes()
        out = np.empty_like(data)
        Blosc().decode(theirs, out=out)
        assert out.tobytes() == data.tobytes()


def test_out_too_small_is_a_value_error():
    chunk = Blosc().encode(np.arange(100, dtype="u4"))
    with pytest.raises(ValueError, match="too small"):
        Blosc().decode(chunk, out=np.empty(99, "u4"))


def test_config_and_repr_follow_numcodecs():
    ours, theirs = Blosc("zstd", 3, Blosc.AUTOSHUFFLE, 4096), CBlosc("zstd", 3, CBlosc.AUTOSHUFFLE,
                                                                    4096)
    assert {**ours.get_config(), "id": "blosc"} == theirs.get_config()
    assert repr(ours) == repr(theirs)
    assert Blosc(**{k: v for k, v in ours.get_config().items() if k != "id"}) == ours
    with pytest.raises(ValueError, match="typesize"):
        Blosc(typesize=0)
    with pytest.raises(ValueError, match="not supported"):
        Blosc(cname="snappy").encode(b"abc")


def test_register_as_blosc_serves_zarr_v2_metadata():
    """With replace_blosc, numcodecs' "blosc" config (what zarr v2 .zarray files hold) gives
    patchfeed's codec, and what it writes still names "blosc" and decodes with c-blosc."""
    from numcodecs.registry import codec_registry, get_codec

    saved = codec_registry.get("blosc")
    try:
        register(replace_blosc=True)
        codec = get_codec({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1,
                           "blocksize": 0})
        assert isinstance(codec, Blosc) and codec.get_config()["id"] == "blosc"
        assert isinstance(get_codec({"id": "patchfeed_blosc"}), Blosc)
        x = np.linspace(0, 1, 10000, dtype="f8")
        assert np.array_equal(np.frombuffer(CBlosc().decode(codec.encode(x)), "f8"), x)
    finally:
        codec_registry["blosc"] = saved
