# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""patchfeed's Blosc as zarr-python 3's `blosc` codec (zarr v3 arrays).

zarr finds it through the `zarr.codecs.blosc` entry point when patchfeed is installed, and uses
it once selected; the metadata it writes is zarr's own `{"name": "blosc", ...}`, so stock zarr
reads the arrays:

    import zarr
    zarr.config.set({"codecs.blosc": "patchfeed.zarr_blosc.BloscCodec"})

It is zarr's BloscCodec (same parameters, defaults and metadata) with the chunks encoded and
decoded by patchfeed.numcodecs.Blosc, which releases the GIL; zarr runs each chunk in a worker
thread. zarr v2 arrays name numcodecs' "blosc" instead: see
`patchfeed.numcodecs.register(replace_blosc=True)`.
"""

from __future__ import annotations

from functools import cached_property

from zarr.codecs.blosc import BloscCodec as ZarrBloscCodec
from zarr.codecs.blosc import BloscShuffle

from patchfeed.numcodecs import BITSHUFFLE, NOSHUFFLE, SHUFFLE, Blosc

_SHUFFLE = {BloscShuffle.noshuffle: NOSHUFFLE, BloscShuffle.shuffle: SHUFFLE,
            BloscShuffle.bitshuffle: BITSHUFFLE}


class BloscCodec(ZarrBloscCodec):
    """zarr's `blosc` codec, encoded and decoded by patchfeed."""

    @cached_property
    def _blosc_codec(self) -> Blosc:
        return Blosc(cname=self.cname.value, clevel=self.clevel, shuffle=_SHUFFLE[self.shuffle],
                     blocksize=self.blocksize, typesize=self.typesize)


def register() -> None:
    """Makes the codec selectable without the entry point (an uninstalled build tree)."""
    from zarr.registry import register_codec

    register_codec("blosc", BloscCodec)
