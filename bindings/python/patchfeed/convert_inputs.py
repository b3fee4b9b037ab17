# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""What `patchfeed convert` reads (patchfeed/convert.py): finding the cases and reading them.

Inputs (`inputs` of `convert` and `find_cases`):
  * an nnU-Net raw folder: `imagesTr/<case>_0000.nii.gz`, `<case>_0001...` (one file per
    channel) and `labelsTr/<case>.nii.gz` (labels optional; `imagesTs` is not converted);
  * a flat folder of `.nii`, `.nii.gz`, `.npy` files or `.zarr` arrays (images; `labels` names a
    folder with `<case>.<ext>` label files). Files named `<case>_0000`, `<case>_0001`, ... with
    the same channels for every case are grouped as nnU-Net groups them; otherwise every file
    is a one-image case named after the file;
  * a zarr group that is not an OME-Zarr image: one case per entry, named after the entry (as
    `Dataset.from_zarr_group` names them). An entry that is a zarr array or an OME-Zarr image is
    an image-only case; an entry that is a plain group holding an `image` array (or OME-Zarr
    image) is a case whose label is whichever one of `label`, `labels` or `seg` it holds.
    Other entries (files, groups without `image`, names starting with '.') are skipped;
  * a list of dicts, MONAI/TorchIO style: `{"image": path or [path per channel], "label": path,
    "id": case id}` ("label" and "id" optional; the id defaults to the label's file name, else
    the first image's without a trailing `_0000`). Plain paths in the list are images;
  * a `.json` file holding such a list, or a dict with it under "training" (the Medical
    Segmentation Decathlon's and MONAI's `dataset.json`); paths are relative to the file;
  * one `.nii`/`.nii.gz`/`.npy` file, zarr array, OME-Zarr image or Neuroglancer precomputed
    layer (a folder with `info`, as cloud-volume writes it): one case. Precomputed layers are
    also accepted wherever a list or JSON file names an image or label.

Readers: nibabel for NIfTI, NumPy for `.npy`, patchfeed's own `open_array` for zarr v2 and v3
arrays (sharded or not), OME-Zarr images and precomputed layers, of which `level` picks the
resolution (0: full) or the scale. A precomputed layer reads as (C, z, y, x)
(docs/precomputed.md).

Axes: arrays keep the axis order their reader gives; nothing is reoriented or resampled. For
NIfTI that is nibabel's voxel order `np.asanyarray(img.dataobj)` (i, j, k), as MONAI's and
TorchIO's NIfTI readers give; a 4-D NIfTI holds channels on its last axis (the NIfTI standard's
4th dimension; the Decathlon stores modalities there), moved to the front. `.npy` and zarr
arrays are channel-first: 2-D (Y, X) -> (1, 1, Y, X), 3-D -> one channel, 4-D is (C, Z, Y, X);
a 5-D zarr array with a leading axis of 1 (OME-Zarr's (t, c, z, y, x), one time point) drops it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any, Union

import numpy as np

from patchfeed import _core
from patchfeed.frames import open_array

PathLike = Union[str, "os.PathLike[str]"]

EXTENSIONS = (".nii.gz", ".nii", ".npy", ".zarr")
# The label of a case in a zarr group of cases: the one of these its entry holds.
ZARR_LABEL_NAMES = ("label", "labels", "seg")
_CHANNEL_NAME = re.compile(r"^(?P<case>.+)_(?P<channel>\d{4})$")
_SUPPORTED = ".nii, .nii.gz, .npy, zarr (v2, v3, OME-Zarr) and precomputed layers"


class ConvertError(ValueError):
    """A bad input or output folder; the message names the file and what is wrong."""


@dataclasses.dataclass(frozen=True)
class Case:
    """One case to write: its id, image files (in channel order) and label file."""

    case_id: str
    images: tuple[str, ...]
    label: str | None = None

    @property
    def paths(self) -> tuple[str, ...]:
        return self.images + ((self.label,) if self.label else ())


# ---- zarr nodes ---------------------------------------------------------------------------


# Zarr metadata documents: none a writer makes is larger (codec/zarr/zarr_reader.h says the same).
_MAX_METADATA_BYTES = 16 << 20


def _read_json(path: str, store: _core.Store | None = None) -> dict[str, Any]:
    try:
        if store is None:
            with open(path) as f:
                data = json.load(f)
        else:
            data = json.loads(store.read(path, _MAX_METADATA_BYTES))
    except (OSError, ValueError) as e:
        raise ConvertError(f"{path}: cannot read zarr metadata: {e}") from None
    if not isinstance(data, dict):
        raise ConvertError(f"{path}: zarr metadata must be a JSON object")
    return data


def zarr_node(path: str, store: _core.Store | None = None) -> str | None:
    """What the directory `path` is, from its zarr metadata: "array", "ome" (an OME-Zarr image
    group), "group" (any other zarr group), or None (no zarr metadata there). `store`: where
    `path` leads when it is not a local path (a URL's store)."""
    def is_file(p: str) -> bool:
        return os.path.isfile(p) if store is None else store.stat(p) == "file"

    def join(*parts: str) -> str:
        return os.path.join(*parts) if store is None else "/".join(x.rstrip("/") for x in parts)

    if is_file(join(path, ".zarray")):
        return "array"
    meta_v3 = join(path, "zarr.json")
    if is_file(meta_v3):
        meta = _read_json(meta_v3, store)
        if meta.get("node_type") != "group":
            return "array"
        ome = (meta.get("attributes") or {}).get("ome") or {}  # OME-Zarr 0.5
        return "ome" if "multiscales" in meta or "multiscales" in ome else "group"
    if is_file(join(path, ".zgroup")):
        attrs_path = join(path, ".zattrs")  # OME-Zarr 0.4 and older
        attrs = _read_json(attrs_path, store) if is_file(attrs_path) else {}
        return "ome" if "multiscales" in attrs else "group"
    return None


def _is_zarr(path: str) -> bool:
    return path.rstrip("/").endswith(".zarr") or zarr_node(path) is not None


def _is_precomputed(path: str) -> bool:
    """A Neuroglancer precomputed layer: a folder with an `info` (and no zarr metadata)."""
    return (os.path.isdir(path) and os.path.isfile(os.path.join(path, "info"))
            and zarr_node(path) is None)


def _is_precomputed_scale(path: str) -> bool:
    """One scale of a precomputed layer named by its folder, `<layer>/<key>`."""
    path = path.rstrip("/")
    return os.path.isdir(path) and _is_precomputed(os.path.dirname(path))


def has_ome_image(cases: Sequence[Case]) -> bool:
    """Whether an input has levels to choose from: an OME-Zarr image or a precomputed layer."""
    return any(zarr_node(p) == "ome" or _is_precomputed(p)
               for c in cases for p in c.paths if os.path.isdir(p))


# ---- finding cases ------------------------------------------------------------------------


def find_cases(inputs: Any, labels: PathLike | None = None) -> list[Case]:
    """The cases `inputs` describe (see the module docstring), sorted by id; reads no data."""
    if isinstance(inputs, (str, os.PathLike)):
        path = os.fspath(inputs)
        _check_exists(path)
        node = zarr_node(path) if os.path.isdir(path) else None
        folder = (os.path.isdir(path) and not _is_zarr(path) and not _is_precomputed(path)
                  and not _is_precomputed_scale(path))
        if labels is not None and not folder:
            raise ConvertError("labels= goes with a folder of images; a list, JSON file or zarr "
                               "group names each case's label")
        if path.endswith(".json") and os.path.isfile(path):
            cases = _cases_from_json(path)
        elif node == "group":
            cases = cases_in_zarr_group(path)
        elif folder:
            if os.path.isdir(os.path.join(path, "imagesTr")):
                cases = _cases_from_raw_folder(path, labels)
            else:
                cases = _cases_from_folder(path, labels)
        else:
            cases = _cases_from_list([path], base_dir=None)
    elif isinstance(inputs, Sequence):
        if labels is not None:
            raise ConvertError("labels= goes with a folder; a list names each case's 'label'")
        cases = _cases_from_list(inputs, base_dir=None)
    else:
        raise ConvertError(f"inputs must be a path or a list of cases, not {type(inputs).__name__}")
    return _checked_cases(cases)


def _checked_cases(cases: list[Case]) -> list[Case]:
    if not cases:
        raise ConvertError("no input cases found")
    seen: dict[str, Case] = {}
    for c in cases:
        if c.case_id in seen:
            raise ConvertError(f"case id {c.case_id!r} is used twice: {seen[c.case_id].images[0]} "
                               f"and {c.images[0]}")
        seen[c.case_id] = c
        # The output names must read back as nnU-Net's: <id>.b2nd and <id>_seg.b2nd.
        if c.case_id.endswith("_seg") or "/" in c.case_id or c.case_id.startswith("."):
            raise ConvertError(f"case id {c.case_id!r} ({c.images[0]}) cannot name a case file: "
                               f"ids may not end in '_seg', start with '.' or contain '/'")
    with_label = [c.case_id for c in cases if c.label is not None]
    if with_label and len(with_label) != len(cases):
        missing = [c.case_id for c in cases if c.label is None]
        raise ConvertError(f"{len(missing)} cases have no label (e.g. {missing[:3]}) while "
                           f"{len(with_label)} have one; a dataset is labelled throughout or not")
    return sorted(cases, key=lambda c: c.case_id)


def _strip_extension(name: str) -> str | None:
    """`name` without a supported extension, or None when it has none."""
    for ext in EXTENSIONS:
        if name.endswith(ext) and len(name) > len(ext):
            return name[: -len(ext)]
    return None


def _listed_inputs(folder: str, ending: str | None = None) -> dict[str, str]:
    """{name without extension: path} of the supported inputs in `folder`; dot files (macOS's
    `._x.nii.gz` copies in the Decathlon archives) are skipped."""
    out: dict[str, str] = {}
    for name in sorted(os.listdir(folder)):
        stem = _strip_extension(name)
        if name.startswith(".") or stem is None or (ending and not name.endswith(ending)):
            continue
        if stem in out:
            raise ConvertError(f"{folder}: {os.path.basename(out[stem])} and {name} are the "
                               f"same case in two formats")
        out[stem] = os.path.join(folder, name)
    return out


def _group_channels(files: Mapping[str, str]) -> dict[str, list[str]] | None:
    """nnU-Net's grouping `<case>_0000, <case>_0001, ...` when every file follows it with the
    same channels 0..n-1 for every case; None otherwise (e.g. `patient_0001`, `patient_0002`
    are two cases, not channels 1 and 2 of one)."""
    groups: dict[str, dict[int, str]] = {}
    for stem, path in files.items():
        m = _CHANNEL_NAME.match(stem)
        if m is None:
            return None
        groups.setdefault(m["case"], {})[int(m["channel"])] = path
    counts = {len(g) for g in groups.values()}
    if len(counts) != 1 or any(sorted(g) != list(range(len(g))) for g in groups.values()):
        return None
    return {case: [g[i] for i in range(len(g))] for case, g in groups.items()}


def _label_files(folder: str | None, case_ids: Sequence[str]) -> dict[str, str | None]:
    if folder is None:
        return {cid: None for cid in case_ids}
    if not os.path.isdir(folder):
        raise ConvertError(f"label folder {folder} does not exist")
    found = _listed_inputs(folder)
    missing = [cid for cid in case_ids if cid not in found]
    if missing:
        raise ConvertError(f"{folder}: no label file for {len(missing)} cases, e.g. "
                           f"{missing[:3]} (expected <case>.nii.gz, .nii, .npy or .zarr)")
    return {cid: found[cid] for cid in case_ids}


def _cases_from_raw_folder(folder: str, labels: PathLike | None) -> list[Case]:
    """nnU-Net's raw layout; its dataset.json's file_ending and channel count are checked."""
    meta: dict[str, Any] = {}
    meta_path = os.path.join(folder, "dataset.json")
    if os.path.isfile(meta_path):
        with open(meta_path) as f:
            meta = json.load(f)
    ending = meta.get("file_ending")
    if ending and not any(ending.endswith(e) or e.endswith(ending) for e in EXTENSIONS):
        raise ConvertError(f"{meta_path}: file_ending {ending!r} is not supported (convert reads "
                           f".nii, .nii.gz, .npy and .zarr)")
    images = os.path.join(folder, "imagesTr")
    files = _listed_inputs(images, ending)
    groups = _group_channels(files)
    if groups is None:
        raise ConvertError(f"{images}: files must be named <case>_0000, <case>_0001, ... with the "
                           f"same channels for every case (nnU-Net's raw format); for a Decathlon "
                           f"folder pass its dataset.json")
    channels = meta.get("channel_names") or meta.get("modality")
    n = len(next(iter(groups.values())))
    if channels and len(channels) != n:
        raise ConvertError(f"{meta_path} names {len(channels)} channels, {images} has {n} per "
                           f"case")
    label_dir = os.fspath(labels) if labels is not None else os.path.join(folder, "labelsTr")
    if labels is None and not os.path.isdir(label_dir):
        label_dir = None
    found = _label_files(label_dir, list(groups))
    return [Case(cid, tuple(paths), found[cid]) for cid, paths in groups.items()]


def _cases_from_folder(folder: str, labels: PathLike | None) -> list[Case]:
    files = _listed_inputs(folder)
    if not files:
        raise ConvertError(f"{folder}: no .nii, .nii.gz, .npy or .zarr inputs")
    groups = _group_channels(files) or {stem: [path] for stem, path in files.items()}
    found = _label_files(None if labels is None else os.fspath(labels), list(groups))
    return [Case(cid, tuple(paths), found[cid]) for cid, paths in groups.items()]


def cases_in_zarr_group(group: str, store: _core.Store | None = None) -> list[Case]:
    """One case per entry of a zarr group, by the rule in the module docstring. `store`:
    where `group` leads when it is not a local path (a URL's store: one listing of the group,
    then each entry's metadata)."""
    if store is not None and store.remote:
        return _cases_in_remote_zarr_group(group, store)
    cases = []
    for name in sorted(os.listdir(group)):
        entry = os.path.join(group, name)
        if name.startswith(".") or not os.path.isdir(entry):
            continue
        node = zarr_node(entry)
        if node in ("array", "ome"):
            cases.append(Case(name, (entry,)))
            continue
        if node != "group":
            continue
        members = {}
        for member in ("image",) + ZARR_LABEL_NAMES:
            path = os.path.join(entry, member)
            kind = zarr_node(path) if os.path.isdir(path) else None
            if kind == "group":
                raise ConvertError(f"{path}: a zarr group, not an array or OME-Zarr image")
            if kind is not None:
                members[member] = path
        found_labels = [m for m in ZARR_LABEL_NAMES if m in members]
        if "image" not in members:
            if found_labels:
                raise ConvertError(f"{entry}: holds '{found_labels[0]}' but no 'image'")
            continue  # not a case, e.g. bioformats2raw's "OME" metadata group
        if len(found_labels) > 1:
            raise ConvertError(f"{entry}: holds {' and '.join(map(repr, found_labels))}; a case "
                               f"has one label array (one of {', '.join(ZARR_LABEL_NAMES)})")
        label = members[found_labels[0]] if found_labels else None
        cases.append(Case(name, (members["image"],), label))
    if not cases:
        raise ConvertError(f"{group}: a zarr group with no cases (entries that are zarr arrays, "
                           f"OME-Zarr images, or groups holding 'image')")
    return cases


def _cases_in_remote_zarr_group(group: str, store: _core.Store) -> list[Case]:
    cases = []
    for name in store.list(group):
        if name.startswith(".") or not name.endswith("/"):
            continue
        name = name[:-1]
        entry = f"{group.rstrip('/')}/{name}"
        node = zarr_node(entry, store)
        if node in ("array", "ome"):
            cases.append(Case(name, (entry,)))
            continue
        if node != "group":
            continue
        members = {m: f"{entry}/{m}" for m in ("image",) + ZARR_LABEL_NAMES
                   if zarr_node(f"{entry}/{m}", store) in ("array", "ome")}
        found_labels = [m for m in ZARR_LABEL_NAMES if m in members]
        if "image" not in members:
            continue
        if len(found_labels) > 1:
            raise ConvertError(f"{entry}: holds {' and '.join(map(repr, found_labels))}; a case "
                               f"has one label array (one of {', '.join(ZARR_LABEL_NAMES)})")
        label = members[found_labels[0]] if found_labels else None
        cases.append(Case(name, (members["image"],), label))
    if not cases:
        raise ConvertError(f"{group}: a zarr group with no cases (entries that are zarr arrays, "
                           f"OME-Zarr images, or groups holding 'image')")
    return cases


def _cases_from_json(path: str) -> list[Case]:
    with open(path) as f:
        try:
            data = json.load(f)
        except json.JSONDecodeError as e:
            raise ConvertError(f"{path}: not valid JSON: {e}") from None
    if isinstance(data, dict):
        if "training" not in data:
            raise ConvertError(f"{path}: expected a list of cases or a dict with 'training'")
        data = data["training"]
    if not isinstance(data, list):
        raise ConvertError(f"{path}: the cases must be a list")
    return _cases_from_list(data, base_dir=os.path.dirname(os.path.abspath(path)))


def _cases_from_list(items: Sequence[Any], base_dir: str | None) -> list[Case]:
    def resolve(p: Any) -> str:
        p = os.fspath(p)
        return os.path.normpath(os.path.join(base_dir, p)) if base_dir else p

    cases = []
    for i, item in enumerate(items):
        if isinstance(item, (str, os.PathLike)):
            item = {"image": item}
        if not isinstance(item, Mapping) or "image" not in item:
            raise ConvertError(f"case {i}: expected a path or a dict with 'image', got {item!r}")
        raw = item["image"]
        images = [resolve(p) for p in ([raw] if isinstance(raw, (str, os.PathLike)) else raw)]
        if not images:
            raise ConvertError(f"case {i}: 'image' is empty")
        label = resolve(item["label"]) if item.get("label") is not None else None
        for p in images + ([label] if label else []):
            _check_exists(p)
            if _strip_extension(os.path.basename(p.rstrip("/"))) is None and not (
                    os.path.isdir(p) and (zarr_node(p) is not None or _is_precomputed(p)
                                          or _is_precomputed_scale(p))):
                raise ConvertError(f"{p}: unsupported file type (convert reads {_SUPPORTED})")
        cases.append(Case(str(item.get("id") or _derived_id(images, label)), tuple(images), label))
    return cases


def _check_exists(path: str) -> None:
    if not os.path.exists(path):
        raise ConvertError(f"no such file or folder: {path}")


def _input_name(path: str) -> str:
    """The file or folder name of an input; a precomputed scale's folder (`<layer>/<key>`) is
    named by its layer."""
    path = path.rstrip("/")
    return os.path.basename(os.path.dirname(path) if _is_precomputed_scale(path) else path)


def _derived_id(images: Sequence[str], label: str | None) -> str:
    """The label's name (labels are named by case in nnU-Net's and the Decathlon's layouts),
    else the first image's without `_0000`; without an extension (a zarr array inside a group,
    e.g. `data.zarr/case1/image`), the whole name."""
    if label is not None:
        name = _input_name(label)
        return _strip_extension(name) or name
    name = _input_name(images[0])
    stem = _strip_extension(name) or name
    return stem[:-5] if stem.endswith("_0000") else stem


# ---- reading ------------------------------------------------------------------------------


def _nibabel() -> Any:
    try:
        import nibabel
    except ImportError:
        raise ImportError("reading NIfTI needs the 'nibabel' package: pip install nibabel "
                          "(or pip install 'patchfeed[nifti]')") from None
    return nibabel


def _format(path: str) -> str:
    name = os.path.basename(path.rstrip("/"))
    if name.endswith((".nii", ".nii.gz")):
        return "nifti"
    if name.endswith(".npy"):
        return "npy"
    if _is_precomputed(path) or _is_precomputed_scale(path):
        return "precomputed"
    if _is_zarr(path):
        return "zarr"
    raise ConvertError(f"{path}: unsupported file type (convert reads {_SUPPORTED})")


def _open_source(path: str, level: int) -> Any:
    """An array-like with `.shape` and `[...]` reading the data; headers only so far. `level`
    is the OME-Zarr resolution level, for OME-Zarr images (other inputs have one)."""
    fmt = _format(path)
    try:
        if fmt == "nifti":
            return _nibabel().load(path).dataobj
        if fmt == "npy":
            return np.load(path, mmap_mode="r")
        # A layer's scale is `level`; a scale's folder names its own.
        leveled = _is_precomputed(path) or (os.path.isdir(path) and zarr_node(path) == "ome")
        return open_array(path, level=level if leveled else 0)
    except (ImportError, ConvertError):
        raise
    except Exception as e:  # nibabel's ImageFileError, patchfeed's zarr errors, a bad .npy header
        raise ConvertError(f"{path}: cannot read as {fmt}: {e}") from None


def _channels_first(a: np.ndarray, path: str) -> np.ndarray:
    """`a` (or a view of it) as (C, *spatial) by the conventions in the module docstring."""
    fmt = _format(path)
    nifti = fmt == "nifti"
    if nifti and a.ndim == 5 and a.shape[3] == 1:  # NIfTI vectors: dim5 with dim4 = 1
        a = a[:, :, :, 0]
    if fmt == "zarr" and a.ndim == 5 and a.shape[0] == 1:  # OME-Zarr (t, c, z, y, x), t = 1
        a = a[0]
    if a.ndim == 2:
        a = a[None, None]
    elif a.ndim == 3:
        a = a[None]
    elif a.ndim == 4 and nifti:
        a = np.moveaxis(a, -1, 0)
    elif a.ndim != 4:
        kind = ("a NIfTI image is 2-D, 3-D or 4-D (channels last)" if nifti else
                "an array is 2-D, 3-D or 4-D (channels first)")
        raise ConvertError(f"{path}: shape {tuple(a.shape)} is not supported: {kind}")
    if 0 in a.shape:
        raise ConvertError(f"{path}: empty array, shape {tuple(a.shape)}")
    return a


def _probe_shape(path: str, level: int) -> tuple[int, ...]:
    """The (C, *spatial) shape `path` converts to, from its header alone."""
    shape = tuple(int(s) for s in _open_source(path, level).shape)
    # The same rules as for the data, applied to a zero-byte stand-in of that shape.
    return _channels_first(np.broadcast_to(np.empty((), np.uint8), shape), path).shape


def _read(path: str, level: int) -> np.ndarray:
    source = _open_source(path, level)
    try:  # nibabel applies the NIfTI scaling (scl_slope, scl_inter) here
        data = np.asanyarray(source) if _format(path) == "nifti" else source[...]
    except Exception as e:  # a truncated .nii.gz, a corrupt zarr chunk, ...
        raise ConvertError(f"{path}: cannot read the data: {e}") from None
    return _channels_first(np.asarray(data), path)


def check_shapes(case: Case, level: int) -> tuple[int, ...]:
    """Channels and label must cover the same voxels: checked on headers, before any data.
    Returns the image's (C, *spatial) shape."""
    shapes = {p: _probe_shape(p, level) for p in case.images}
    if case.label is not None:
        shapes[case.label] = _probe_shape(case.label, level)
        if shapes[case.label][0] != 1:
            raise ConvertError(f"{case.label}: a label map has one channel, this one has "
                               f"{shapes[case.label][0]} (shape {shapes[case.label]})")
    if len({s[1:] for s in shapes.values()}) > 1:
        listed = ", ".join(f"{os.path.basename(p)} {s[1:]}" for p, s in shapes.items())
        raise ConvertError(f"case {case.case_id!r}: channel and label shapes differ: {listed}")
    first = shapes[case.images[0]]
    return (sum(shapes[p][0] for p in case.images), *first[1:])


@dataclasses.dataclass(frozen=True)
class Nonfinite:
    """How many NaN and Inf values the channels from one input file hold."""

    path: str
    nan: int
    inf: int


# Non-finite values are counted a slice at a time, so the mask of each slice stays in cache
# and no mask of the whole case is allocated: 256 Ki items, 1 MiB of float32.
_COUNT_ITEMS = 1 << 18


def count_nonfinite(a: np.ndarray) -> tuple[int, int]:
    """(NaN, +-Inf) counts of `a`; integer arrays hold neither."""
    if a.dtype.kind != "f":
        return 0, 0
    flat = a.reshape(-1)
    finite = np.empty(min(flat.size, _COUNT_ITEMS), dtype=bool)
    nan = inf = 0
    for start in range(0, flat.size, _COUNT_ITEMS):
        piece = flat[start:start + _COUNT_ITEMS]
        ok = finite[:piece.size]
        np.isfinite(piece, out=ok)
        if ok.all():
            continue
        bad = piece.size - int(np.count_nonzero(ok))
        n = int(np.count_nonzero(np.isnan(piece)))
        nan, inf = nan + n, inf + bad - n
    return nan, inf


def _check_integer_cast(path: str, a: np.ndarray, dtype: np.dtype) -> None:
    """Float data cast to an integer image dtype: NaN, Inf and values out of range would
    become arbitrary integers."""
    nan, inf = count_nonfinite(a)
    if nan or inf:
        raise ConvertError(f"{path}: {nan} NaN and {inf} Inf values cannot be stored as {dtype}")
    info = np.iinfo(dtype)
    lo, hi = a.min(), a.max()
    if lo < info.min or hi > info.max:
        raise ConvertError(f"{path}: values {lo}..{hi} do not fit the image dtype {dtype}")


def nonfinite_by_file(image: np.ndarray, files: Sequence[tuple[str, int]]) -> list[Nonfinite]:
    """The input files whose channels of `image` hold NaN or Inf; `files` lists each file with
    its number of channels, in channel order (as `read_image` returns them)."""
    found = []
    c = 0
    for path, n in files:
        nan, inf = count_nonfinite(image[c:c + n])
        c += n
        if nan or inf:
            found.append(Nonfinite(path, nan, inf))
    return found


def read_image(case: Case, dtype: np.dtype | None,
               level: int) -> tuple[np.ndarray, list[tuple[str, int]]]:
    """The channels stacked as (C, *spatial) C-ordered, cast to `dtype` (None: the sources'
    common dtype, native byte order), and each input file with its number of channels."""
    parts = [_read(p, level) for p in case.images]
    for p, a in zip(case.images, parts):
        if a.dtype.kind not in "biuf":
            raise ConvertError(f"{p}: dtype {a.dtype} is not a real number type")
    out_dtype = np.dtype(dtype or np.result_type(*parts).newbyteorder("="))
    if out_dtype.kind in "biu":
        for p, a in zip(case.images, parts):
            if a.dtype.kind == "f":
                _check_integer_cast(p, a, out_dtype)
    out = np.empty((sum(len(a) for a in parts), *parts[0].shape[1:]), dtype=out_dtype)
    c = 0
    with np.errstate(over="ignore"):  # float64 beyond float32 becomes Inf, counted by convert
        for a in parts:
            out[c:c + len(a)] = a
            c += len(a)
    return out, [(p, len(a)) for p, a in zip(case.images, parts)]


def read_label(path: str, dtype: np.dtype, level: int) -> np.ndarray:
    """The label map as `dtype`; non-integer values or values out of range are errors."""
    a = _read(path, level)
    if a.dtype.kind == "f":
        nan, inf = count_nonfinite(a)
        if nan or inf:
            raise ConvertError(f"{path}: a label map needs integer values, found {nan} NaN and "
                               f"{inf} Inf")
        bad = a != np.rint(a)
        if bad.any():
            raise ConvertError(f"{path}: a label map needs integer values, found "
                               f"{a[bad][0]}")
    elif a.dtype.kind not in "biu":
        raise ConvertError(f"{path}: a label map needs integers, dtype is {a.dtype}")
    if a.dtype.kind != "b" and not np.can_cast(a.dtype, dtype, "safe"):
        lo, hi, info = a.min(), a.max(), np.iinfo(dtype)
        if lo < info.min or hi > info.max:
            hint = " (label_dtype='int32', --label-dtype int32)" if dtype == np.int16 else ""
            raise ConvertError(f"{path}: label values {lo}..{hi} do not fit {dtype}{hint}")
    return np.ascontiguousarray(a, dtype=dtype)


# ---- fingerprints for resuming --------------------------------------------------------------


def fingerprint(path: str) -> list[Any]:
    """What a rerun compares to tell an input is unchanged. A file: [path, bytes, mtime in ns].
    A zarr array or OME-Zarr image (a folder): [path, files, bytes, sum of the files' mtimes in
    ns] over every file under it (metadata and chunks, every level): one listing and one stat
    per file, no reads. It changes when a file is added, removed, resized or rewritten (a new
    mtime), whether written in place or renamed over, as zarr-python does."""
    path = os.path.abspath(path)
    if not os.path.isdir(path):
        st = os.stat(path)
        return [path, st.st_size, st.st_mtime_ns]
    files = size = mtimes = 0
    folders = [path]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for e in entries:
                if e.is_dir():
                    folders.append(e.path)
                    continue
                st = e.stat()
                files, size, mtimes = files + 1, size + st.st_size, mtimes + st.st_mtime_ns
    return [path, files, size, mtimes]
