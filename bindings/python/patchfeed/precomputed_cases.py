"""Cases out of Neuroglancer precomputed layers: which layers make a case, and which scale of
each is read, for `Dataset.from_precomputed` (docs/precomputed.md).

A case is a folder holding an image layer and, optionally, a segmentation layer, paired by
their folder names (cloud-volume's usual `<volume>/image` and `<volume>/segmentation`); a
folder of such volumes is one case per volume. A layer's scale is the folder of its chunks,
`<layer>/<key>`, so the dataset names it by path like any other array.

Image and segmentation are paired scale by scale by resolution (their scale lists may differ:
a segmentation is often kept at fewer resolutions), and must then cover the same voxels: the
loader reads both with the same box, index 0 at each scale's voxel_offset.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

from patchfeed import _core

#: Segmentation layer names looked for when none is given, in this order.
LABEL_LAYER_NAMES = ("segmentation", "seg", "labels", "label")

ScaleSelector = int | str | Sequence[float] | None


class PrecomputedCase(NamedTuple):
    case_id: str
    image: str  #: `<image layer>/<scale key>`
    label: str | None  #: `<segmentation layer>/<scale key>`, or None


def _join(folder: str, name: str) -> str:
    return f"{folder.rstrip('/')}/{name}"


def _is_layer(path: str, store: _core.Store) -> bool:
    return store.stat(_join(path, "info")) == "file"


def _same_resolution(a: Sequence[float], b: Sequence[float]) -> bool:
    # As the C++ FindScale matches a resolution: within 0.1 %.
    return all(math.isclose(x, y, rel_tol=1e-3) for x, y in zip(a, b))


def _image_scale(layer: str, scales: list[dict[str, Any]], scale: ScaleSelector
                 ) -> dict[str, Any]:
    if scale is None:
        return scales[0]
    if isinstance(scale, int):
        if not 0 <= scale < len(scales):
            raise ValueError(f"{layer}: no scale {scale} (its info has {len(scales)})")
        return scales[scale]
    if isinstance(scale, str):
        for s in scales:
            if s["key"] == scale:
                return s
        raise ValueError(f"{layer}: no scale with key {scale!r} (its keys: "
                         f"{', '.join(repr(s['key']) for s in scales)})")
    want = [float(v) for v in scale]
    for s in scales:
        if len(want) == 3 and _same_resolution(s["resolution"], want):
            return s
    raise ValueError(f"{layer}: no scale of resolution {tuple(want)} (its resolutions: "
                     f"{', '.join(str(tuple(s['resolution'])) for s in scales)})")


def _paired_scale(image_layer: str, image: dict[str, Any], label_layer: str,
                  store: _core.Store) -> dict[str, Any]:
    """The segmentation scale at the image scale's resolution, covering the same voxels."""
    for s in _core.precomputed_scales(label_layer, store):
        if not _same_resolution(s["resolution"], image["resolution"]):
            continue
        if s["size"] != image["size"] or s["voxel_offset"] != image["voxel_offset"]:
            raise ValueError(
                f"{label_layer}/{s['key']}: covers {s['size']} voxels (x, y, z) from "
                f"{s['voxel_offset']}, the image {image_layer}/{image['key']} {image['size']} "
                f"from {image['voxel_offset']}; a case's layers must cover the same voxels")
        return s
    raise ValueError(f"{label_layer}: no scale of resolution {tuple(image['resolution'])}, the "
                     f"image's ({image_layer}/{image['key']})")


def _case(case_id: str, folder: str, image: str, labels: Sequence[str], named: bool,
          scale: ScaleSelector, store: _core.Store) -> PrecomputedCase:
    image_layer = _join(folder, image)
    chosen = _image_scale(image_layer, _core.precomputed_scales(image_layer, store), scale)
    found = [name for name in labels if _is_layer(_join(folder, name), store)]
    if named and not found:
        raise ValueError(f"{folder}: no precomputed layer {labels[0]!r} (the label= asked for)")
    if len(found) > 1 and len(labels) > 1:
        raise ValueError(f"{folder}: holds the layers {' and '.join(map(repr, found))}; name the "
                         f"segmentation layer with label=")
    if not found:
        return PrecomputedCase(case_id, _join(image_layer, chosen["key"]), None)
    label_layer = _join(folder, found[0])
    paired = _paired_scale(image_layer, chosen, label_layer, store)
    return PrecomputedCase(case_id, _join(image_layer, chosen["key"]),
                           _join(label_layer, paired["key"]))


def precomputed_cases(root: str, store: _core.Store, image: str = "image",
                      label: str | Sequence[str] = LABEL_LAYER_NAMES,
                      scale: ScaleSelector = None) -> list[PrecomputedCase]:
    """The cases under `root`: `root` itself when it holds the layer `image` (or is a layer:
    one case, no segmentation), else each folder in it that holds `image`, sorted by name.
    `label`: the segmentation layer's name, which every volume must hold, or names to look for
    (the first found; () for images alone)."""
    # A name the caller gave must be there; the default names are looked for.
    named = isinstance(label, str)
    labels = [label] if named else list(label)
    name = root.rstrip("/").rsplit("/", 1)[-1]
    if _is_layer(root, store):
        chosen = _image_scale(root, _core.precomputed_scales(root, store), scale)
        return [PrecomputedCase(name, _join(root, chosen["key"]), None)]
    if _is_layer(_join(root, image), store):
        return [_case(name, root, image, labels, named, scale, store)]
    cases = [_case(entry[:-1], _join(root, entry[:-1]), image, labels, named, scale, store)
             for entry in store.list(root)
             if entry.endswith("/") and _is_layer(_join(_join(root, entry[:-1]), image), store)]
    if not cases:
        raise ValueError(f"{root}: no precomputed layer {image!r} in it or in any folder in it")
    return cases
