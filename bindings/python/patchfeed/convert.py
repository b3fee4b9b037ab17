# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""`patchfeed convert`: NIfTI, NumPy `.npy`, zarr and OME-Zarr -> a folder of `.b2nd` cases.

This is how a MONAI, TorchIO or nnU-Net user with a folder of NIfTI files starts::

    import patchfeed
    from patchfeed.convert import convert
    report = convert("Dataset004_Hippocampus", "hippo_b2nd")     # nnU-Net raw folder
    loader = patchfeed.Loader(report.dataset(), patch_size=(40, 56, 40), batch_size=2)

`convert(inputs, out_dir, *, labels=None, patch_size=None, chunks=None, blocks=None,
codec="lz4hc", clevel=5, filters=("shuffle",), image_dtype="float32", label_dtype="int16",
level=0, normalize="none", allow_nonfinite=False, force=False, progress=True) ->
ConvertReport`. `find_cases(inputs, labels)` returns
the `Case`s that `convert` would write, without reading any data.

Inputs (an nnU-Net raw folder, a folder of `.nii`/`.nii.gz`/`.npy`/`.zarr` files, a zarr group
of cases, a MONAI/TorchIO-style list or `dataset.json`, one file, zarr array or OME-Zarr
image), how they are read (zarr by patchfeed's own reader; `level` picks an OME-Zarr image's
resolution) and their axis conventions: patchfeed/convert_inputs.py.

Output: `<out_dir>/<case>.b2nd`, shape (C, *spatial), channels stacked in file order, float32
(`image_dtype=None` keeps the source dtype), and with labels `<case>_seg.b2nd`, shape
(1, *spatial), int16 (`label_dtype="int32"` for label values beyond int16; values are checked,
never wrapped). `Dataset.from_nnunet_folder(out_dir)` opens a labelled folder;
`Dataset.from_folder(out_dir, {"image": ".b2nd"})` an image-only one (`report.dataset()` picks).

Values: raw intensities unless `normalize` names one of nnU-Net's schemes
(patchfeed/convert_normalize.py). Every image voxel written is checked: NaN or Inf is an error
naming the case, the file and the counts, raised before that case's files are written, unless
`allow_nonfinite=True` (then they are written and reported, per case, in the report and the
manifest).

Chunks and blocks follow nnU-Net 2.8's rule (`comp_blosc2_params`, patchfeed's C++ copy
`_core.nnunet_chunk_block_shapes`) for `patch_size` (default (128, 128, 128)), computed per
case and per array item size as nnU-Net's preprocessor does; `chunks`/`blocks` (spatial, given
together) replace it, clipped to each case's shape. A patch has one value per spatial axis of
the data: 2 values only for 2-D images (stored as (C, 1, Y, X)); (1, Y, X) for slices of 3-D
cases (nnU-Net's 2d configuration, whose 2-value patch gives the same chunks).

Resuming (patchfeed/convert_manifest.py): `<out_dir>/.patchfeed_convert.json` records the
settings and, per case, its inputs' fingerprints (a file's size and mtime; a zarr folder's file
count, bytes and mtimes: `convert_inputs.fingerprint`) and its outputs. A rerun skips cases
whose inputs are unchanged and whose outputs are there (with normalize="ct", as long as every
case's inputs are those the dataset statistics came from); each file is written as
`<name>.partial` and renamed, so an interrupted run never leaves a partial file under a final
name. Refused unless `force=True`: other settings than the folder's (force then deletes the
earlier outputs the manifest lists, so the folder stays one dataset) and `.b2nd` files that
convert did not write (force overwrites those that clash).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from patchfeed import _core
from patchfeed.convert_inputs import (Case, ConvertError, Nonfinite, PathLike, check_shapes,
                                      find_cases, has_ome_image, nonfinite_by_file,
                                      read_image, read_label)
from patchfeed.convert_manifest import (MANIFEST_NAME, PARTIAL_SUFFIX, Manifest, case_inputs,
                                        inputs_digest, is_done, output_names, prepare_folder,
                                        remove_outputs)
from patchfeed.convert_normalize import CT_SEED, SCHEMES, CTStatistics, normalize_case
from patchfeed.frames import write_b2nd

if TYPE_CHECKING:
    from patchfeed.loader import Dataset

__all__ = ["ConvertError", "ConvertReport", "convert", "find_cases", "nnunet_chunks_blocks"]

DEFAULT_PATCH = (128, 128, 128)
# Bump when the files convert writes change for the same settings, so older ones are redone.
LAYOUT_VERSION = 1
_LABEL_DTYPES = ("int16", "int32")


@dataclasses.dataclass
class ConvertReport:
    """What `convert` did: case ids converted and skipped, earlier outputs removed; the
    normalisation (`{"scheme": ...}`, for "ct" with the dataset's statistics per channel);
    and the cases of this run whose images hold NaN or Inf (written with allow_nonfinite),
    converted now or before, with the counts per input file."""

    out_dir: str
    converted: list[str]
    skipped: list[str]
    removed: list[str]
    has_labels: bool
    normalization: dict[str, Any] = dataclasses.field(default_factory=dict)
    nonfinite: dict[str, list[Nonfinite]] = dataclasses.field(default_factory=dict)

    def dataset(self) -> Dataset:
        """The output folder as a `patchfeed.Dataset` (every case in it, not only this run's)."""
        from patchfeed.loader import Dataset

        if self.has_labels:
            return Dataset.from_nnunet_folder(self.out_dir)
        return Dataset.from_folder(self.out_dir, {"image": ".b2nd"})


# ---- layout -------------------------------------------------------------------------------


def nnunet_chunks_blocks(shape: Sequence[int], patch_size: Sequence[int],
                         itemsize: int) -> tuple[list[int], list[int]]:
    """(chunks, blocks) nnU-Net 2.8 picks for a (C, X, Y, Z) array (its comp_blosc2_params
    returns them the other way round)."""
    return _core.nnunet_chunk_block_shapes(list(shape), list(patch_size), int(itemsize))


@dataclasses.dataclass(frozen=True)
class _Settings:
    """Everything that decides the output bytes; a folder holds one set (the manifest's)."""

    patch_size: tuple[int, ...] | None
    chunks: tuple[int, ...] | None
    blocks: tuple[int, ...] | None
    codec: str
    clevel: int
    filters: tuple[str, ...]
    image_dtype: str | None
    label_dtype: str
    labels: bool
    level: int  # the OME-Zarr resolution level read (0 where no input is an OME-Zarr image)
    normalize: str = "none"
    layout_version: int = LAYOUT_VERSION

    def to_json(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v
                for k, v in dataclasses.asdict(self).items()}

    def chunks_blocks(self, shape: Sequence[int], itemsize: int) -> tuple[list[int], list[int]]:
        if self.chunks is None or self.blocks is None:
            return nnunet_chunks_blocks(shape, self.patch_size, itemsize)
        chunks = [1] + [min(c, n) for c, n in zip(self.chunks, shape[1:])]
        blocks = [1] + [min(b, c) for b, c in zip(self.blocks, chunks[1:])]
        return chunks, blocks


def _make_settings(patch_size: Sequence[int] | None, chunks: Sequence[int] | None,
                   blocks: Sequence[int] | None, codec: str, clevel: int,
                   filters: Sequence[str], image_dtype: str | None, label_dtype: str,
                   labels: bool, level: int, normalize: str) -> _Settings:
    def spatial(name: str, v: Sequence[int] | None, sizes: tuple[int, ...]) -> Any:
        if v is None:
            return None
        t = tuple(int(x) for x in v)
        if len(t) not in sizes or any(x <= 0 for x in t):
            raise ConvertError(f"{name} needs {' or '.join(map(str, sizes))} positive values, "
                               f"got {list(v)}")
        return t

    if (chunks is None) != (blocks is None):
        raise ConvertError("give chunks and blocks together, or neither (nnU-Net's rule)")
    if chunks is not None and patch_size is not None:
        raise ConvertError("patch_size sets nnU-Net's chunk rule; with chunks and blocks given "
                           "it would be unused")
    c, b = spatial("chunks", chunks, (3,)), spatial("blocks", blocks, (3,))
    if c is not None and any(x > y for x, y in zip(b, c)):
        raise ConvertError(f"blocks {list(b)} must not exceed chunks {list(c)}")
    if label_dtype not in _LABEL_DTYPES:
        raise ConvertError(f"label_dtype must be one of {_LABEL_DTYPES}, not {label_dtype!r}")
    if image_dtype is not None:
        try:
            image_dtype = np.dtype(image_dtype).name
        except TypeError:
            raise ConvertError(f"image_dtype {image_dtype!r} is not a NumPy dtype") from None
        if np.dtype(image_dtype).kind not in "biuf":
            raise ConvertError(f"image_dtype {image_dtype!r} is not a real number type")
    if isinstance(level, bool) or not isinstance(level, (int, np.integer)) or level < 0:
        raise ConvertError(f"level (an OME-Zarr resolution level) must be an integer >= 0, "
                           f"not {level!r}")
    if normalize not in SCHEMES:
        raise ConvertError(f"normalize must be one of {', '.join(SCHEMES)}, not {normalize!r}")
    if normalize != "none" and (image_dtype is None or np.dtype(image_dtype).kind != "f"):
        raise ConvertError(f"normalize={normalize!r} writes float images, as nnU-Net does; it "
                           f"needs a float image_dtype (the default float32), not "
                           f"{image_dtype or 'the source dtype (--keep-dtype)'}")
    if normalize == "ct" and not labels:
        raise ConvertError("normalize='ct' takes its statistics from the foreground (label > 0) "
                           "voxels of every case: it needs labels (--labels, or an nnU-Net raw "
                           "folder's labelsTr)")
    try:  # a bad codec, level or filter fails here, before any file is read
        _core.compress(b"\0" * 16, typesize=4, codec=codec, clevel=clevel, filters=list(filters))
    except ValueError as e:
        raise ConvertError(f"codec settings: {e}") from None
    # The default patch is spelled out, so that equal outputs mean equal settings.
    patch = None if c is not None else spatial("patch_size", patch_size or DEFAULT_PATCH, (2, 3))
    return _Settings(patch, c, b, codec, int(clevel), tuple(filters), image_dtype, label_dtype,
                     labels, int(level), normalize)


# ---- writing ------------------------------------------------------------------------------


def _write_atomic(path: str, array: np.ndarray, settings: _Settings) -> int:
    """Writes `path` through `path.partial` + rename; returns its size."""
    chunks, blocks = settings.chunks_blocks(array.shape, array.itemsize)
    tmp = path + PARTIAL_SUFFIX
    try:
        write_b2nd(tmp, array, chunks, blocks, codec=settings.codec, clevel=settings.clevel,
                   filters=settings.filters)
        os.replace(tmp, path)
    except BaseException:  # KeyboardInterrupt included: no .partial is left behind
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return os.path.getsize(path)


def _check_image_dtype(case: Case, dtype: np.dtype, manifest: Manifest) -> None:
    """With source dtypes kept, every case must still share one (the loader requires it)."""
    for cid, entry in manifest.cases.items():
        other = entry.get("image_dtype")
        if cid != case.case_id and entry.get("state") == "done" and other != dtype.str:
            raise ConvertError(f"{case.images[0]}: dtype {dtype.str} differs from case {cid!r}'s "
                               f"{other}; a dataset has one image dtype (drop keep-dtype to "
                               f"write float32)")


def _read_checked(case: Case, settings: _Settings, allow_nonfinite: bool
                  ) -> tuple[np.ndarray, np.ndarray | None, list[tuple[str, int]], list[Nonfinite]]:
    """The case's image and label, with the files whose channels hold NaN or Inf (refused
    unless allowed), before anything of the case is written."""
    image_dtype = np.dtype(settings.image_dtype) if settings.image_dtype else None
    image, files = read_image(case, image_dtype, settings.level)
    found = nonfinite_by_file(image, files)
    if found and not allow_nonfinite:
        raise ConvertError(f"case {case.case_id!r}: {_listed(found)}. Fix the inputs, or pass "
                           f"allow_nonfinite=True (--allow-nonfinite) to write them as they "
                           f"are")
    # Read the label before writing anything: a bad label must not leave a new image alone.
    label = (read_label(case.label, np.dtype(settings.label_dtype), settings.level)
             if case.label else None)
    return image, label, files, found


def _listed(found: Sequence[Nonfinite]) -> str:
    return "; ".join(f"{f.path} holds {f.nan} NaN and {f.inf} Inf values" for f in found)


def _convert_case(case: Case, out_dir: str, settings: _Settings, manifest: Manifest,
                  inputs: list[list[Any]], allow_nonfinite: bool,
                  ct_channels: list[dict[str, float]] | None) -> list[Nonfinite]:
    """Converts one case; returns the files whose channels, as written, hold NaN or Inf."""
    names = output_names(case.case_id, settings.labels)
    old = manifest.cases.get(case.case_id, {}).get("outputs", [])
    manifest.cases[case.case_id] = {"state": "started", "inputs": inputs,
                                    "outputs": sorted(set(names) | set(old))}
    manifest.save()
    image, label, files, found = _read_checked(case, settings, allow_nonfinite)
    if settings.image_dtype is None:
        _check_image_dtype(case, image.dtype, manifest)
    params = normalize_case(image, label, settings.normalize, ct_channels,
                            finite_only=bool(found))
    if settings.normalize != "none":  # every voxel written is checked, normalised ones too
        before, found = found, nonfinite_by_file(image, files)
        if found != before and not allow_nonfinite:
            raise ConvertError(f"case {case.case_id!r}: normalize={settings.normalize!r} gave "
                               f"NaN or Inf ({_listed(found)}): the values exceed what "
                               f"{image.dtype} arithmetic holds; pass a wider image_dtype")
    sizes = [_write_atomic(os.path.join(out_dir, names[0]), image, settings)]
    entry = {"state": "done", "inputs": inputs, "outputs": names, "sizes": sizes,
             "image_dtype": image.dtype.str, "channels": len(image)}
    del image
    if label is not None:
        sizes.append(_write_atomic(os.path.join(out_dir, names[1]), label, settings))
    for name in set(old) - set(names):  # e.g. a label that is gone from the inputs
        if os.path.exists(os.path.join(out_dir, name)):
            os.remove(os.path.join(out_dir, name))
    if params is not None:
        entry["normalization"] = params
    if found:
        entry["nonfinite"] = {f.path: [f.nan, f.inf] for f in found}
    manifest.cases[case.case_id] = entry
    manifest.save()
    return found


def _check_headers(cases: Sequence[Case], settings: _Settings, manifest: Manifest) -> None:
    """Every case's header before any data, so a bad case fails in seconds, not hours: shapes
    within a case, the patch's axes against the data's, one channel count across cases."""
    ids = {c.case_id for c in cases}
    channels = {cid: e["channels"] for cid, e in manifest.cases.items()
                if cid not in ids and e.get("state") == "done" and "channels" in e}
    for case in cases:
        shape = check_shapes(case, settings.level)
        patch = settings.patch_size
        if patch is not None and len(patch) == 2 and shape[1] > 1:
            raise ConvertError(
                f"case {case.case_id!r} ({case.images[0]}): the patch "
                f"{','.join(map(str, patch))} has 2 axes and the data has 3 spatial axes "
                f"{shape[1:]}; give 3 values (Z,Y,X), or 1,Y,X for 2-D slices of 3-D cases "
                f"(nnU-Net's 2d configuration: the chunks of its 2-value patch)")
        other = next(iter(channels.items()), None)
        if other is not None and other[1] != shape[0]:
            raise ConvertError(f"case {case.case_id!r} ({case.images[0]}) has {shape[0]} "
                               f"channels and case {other[0]!r} has {other[1]}; the cases of "
                               f"a dataset have the same channels (the loader reads them "
                               f"together)")
        channels[case.case_id] = shape[0]


def _ct_statistics(cases: Sequence[Case], inputs_of: dict[str, list[list[Any]]], out: str,
                   settings: _Settings, manifest: Manifest, force: bool, to_write: set[str],
                   allow_nonfinite: bool, progress: bool) -> tuple[list[dict[str, float]],
                                                                     list[str]]:
    """The dataset's CT statistics: the manifest's when they came from exactly these inputs,
    else computed in a pass over every case. Cases converted with other statistics are refused
    unless `force`, which deletes them. Returns the statistics and the files deleted."""
    digest = inputs_digest(inputs_of)
    saved = manifest.ct_statistics
    if saved is not None and saved.get("inputs_digest") == digest:
        return saved["channels"], []
    done = [cid for cid, e in manifest.cases.items() if e.get("state") == "done"]
    removed: list[str] = []
    if done:
        if not force:
            raise ConvertError(
                f"{out}: its {len(done)} cases were normalised with the CT statistics of other "
                f"inputs (cases were added, removed or changed since). The statistics cover "
                f"every case: pass force=True (--force) to compute them again and convert "
                f"every case again, or choose another folder")
        removed = remove_outputs(out, manifest, to_write)
        manifest.save()
    _check_headers(cases, settings, manifest)
    stats = CTStatistics(len(cases))
    bar = _Progress(len(cases), progress, "CT statistics")
    try:
        for case in cases:
            bar.begin(case.case_id)
            image, label, _, _ = _read_checked(case, settings, allow_nonfinite)
            stats.add(image, label)
            bar.step(case.case_id, skipped=False)
    finally:
        bar.close()
    channels = stats.result()
    manifest.ct_statistics = {"inputs_digest": digest, "seed": CT_SEED,
                              "foreground_samples_per_case": stats.per_case,
                              "channels": channels}
    manifest.save()
    return channels, removed


class _Progress:
    """tqdm when it is installed (nnU-Net depends on it), else one stderr line per case."""

    def __init__(self, total: int, enabled: bool, what: str = "patchfeed convert") -> None:
        self._total, self._done, self._bar = total, 0, None
        self._enabled, self._what = enabled, what
        if enabled:
            try:
                from tqdm import tqdm
            except ImportError:
                return
            self._bar = tqdm(total=total, unit="case", desc=what, file=sys.stderr)

    def begin(self, case_id: str) -> None:
        if self._bar is not None:
            self._bar.set_postfix_str(case_id)

    def note(self, text: str) -> None:
        if self._bar is not None:
            self._bar.write(f"patchfeed convert: {text}", file=sys.stderr)
        elif self._enabled:
            print(f"patchfeed convert: {text}", file=sys.stderr, flush=True)

    def step(self, case_id: str, skipped: bool) -> None:
        self._done += 1
        if self._bar is not None:
            self._bar.update(1)
        elif self._enabled:
            print(f"{self._what}: {self._done}/{self._total} {case_id}"
                  f"{' skipped' if skipped else ''}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def convert(inputs: Any, out_dir: PathLike, *, labels: PathLike | None = None,
            patch_size: Sequence[int] | None = None, chunks: Sequence[int] | None = None,
            blocks: Sequence[int] | None = None, codec: str = "lz4hc", clevel: int = 5,
            filters: Sequence[str] = ("shuffle",), image_dtype: str | None = "float32",
            label_dtype: str = "int16", level: int = 0, normalize: str = "none",
            allow_nonfinite: bool = False, force: bool = False,
            progress: bool = True) -> ConvertReport:
    """Converts `inputs` into `out_dir` (created) as described in the module docstring.

    `level` is the resolution level read from OME-Zarr images (0: the highest; it applies to
    labels given as OME-Zarr images too); other inputs have one level, and a level other than 0
    without an OME-Zarr input is an error.

    `normalize`: "none" (raw intensities, the default), "zscore", "zscore-nonzero", "ct" or
    "rescale": nnU-Net's schemes (patchfeed/convert_normalize.py); "ct" first reads every case
    for the dataset's foreground statistics (kept in the manifest, so a resumed run reuses
    them). `allow_nonfinite` writes images holding NaN or Inf instead of refusing them.

    Raises ConvertError (a ValueError) for a bad input or settings, naming the file; ImportError
    when nibabel, NIfTI's reader, is missing (zarr is read by patchfeed itself). Codec settings
    default to nnU-Net's LZ4HC level 5 (with shuffle; nnU-Net tries shuffle and no filter per
    case). `force` only lifts refusals: completed cases are still skipped.
    """
    out = os.path.abspath(os.fspath(out_dir))
    cases = find_cases(inputs, labels)
    has_labels = cases[0].label is not None
    settings = _make_settings(patch_size, chunks, blocks, codec, clevel, filters, image_dtype,
                              label_dtype, has_labels, level, normalize)
    if settings.level != 0 and not has_ome_image(cases):
        raise ConvertError(f"level={settings.level} selects an OME-Zarr image's resolution or a "
                           f"precomputed layer's scale, and no input is either")
    _check_out_dir(out, cases)
    os.makedirs(out, exist_ok=True)
    manifest = Manifest(out)
    to_write = {n for c in cases for n in output_names(c.case_id, has_labels)}
    removed = prepare_folder(out, manifest, settings.to_json(), force, to_write)

    inputs_of = {c.case_id: case_inputs(c) for c in cases}
    ct_channels = None
    if settings.normalize == "ct":
        ct_channels, more = _ct_statistics(cases, inputs_of, out, settings, manifest, force,
                                           to_write, allow_nonfinite, progress)
        removed += more
    todo = [c for c in cases if not is_done(manifest.cases.get(c.case_id), inputs_of[c.case_id],
                                             out)]
    _check_headers(todo, settings, manifest)
    todo_ids = {c.case_id for c in todo}
    converted, skipped = [], []
    bar = _Progress(len(cases), progress)
    try:
        for case in cases:
            if case.case_id in todo_ids:
                bar.begin(case.case_id)
                found = _convert_case(case, out, settings, manifest, inputs_of[case.case_id],
                                      allow_nonfinite, ct_channels)
                if found:
                    bar.note(f"case {case.case_id!r}: {_listed(found)}, written as they are "
                             f"(--allow-nonfinite)")
                converted.append(case.case_id)
            else:
                skipped.append(case.case_id)
            bar.step(case.case_id, skipped=case.case_id not in todo_ids)
    finally:
        bar.close()
    normalization: dict[str, Any] = {"scheme": settings.normalize}
    if ct_channels is not None:
        normalization["channels"] = ct_channels
    nonfinite = {c.case_id: [Nonfinite(p, *counts) for p, counts in
                             manifest.cases[c.case_id].get("nonfinite", {}).items()]
                 for c in cases if manifest.cases[c.case_id].get("nonfinite")}
    return ConvertReport(out, converted, skipped, removed, has_labels, normalization, nonfinite)


def _check_out_dir(out: str, cases: Sequence[Case]) -> None:
    if os.path.exists(out) and not os.path.isdir(out):
        raise ConvertError(f"{out} exists and is not a folder")
    # Never write next to the inputs: the output folder holds no input.
    for c in cases:
        for p in c.paths:
            if os.path.dirname(os.path.abspath(p)) == out:
                raise ConvertError(f"the output folder {out} holds the input {p}; choose "
                                   f"another one")


# ---- command line -------------------------------------------------------------------------

def _int_list(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected integers like 128,128,128, not {text!r}")
    if any(v <= 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive integers, not {text!r}")
    return values


def main(argv: Sequence[str]) -> int:
    """`patchfeed convert ...`: 0 on success; 1 with the error (no traceback) on bad input."""
    p = argparse.ArgumentParser(prog="patchfeed convert",
                                description="NIfTI/.npy/zarr -> .b2nd cases (docs/convert.md)")
    p.add_argument("input", help="nnU-Net raw folder, folder of images, zarr group of cases, "
                   ".json case list, or one file, zarr array or OME-Zarr image")
    p.add_argument("out_dir")
    p.add_argument("--labels", help="folder of <case>.nii.gz label maps (flat input folder)")
    p.add_argument("--patch", type=_int_list, help="training patch for nnU-Net's chunk rule "
                   "(default 128,128,128)")
    p.add_argument("--chunks", type=_int_list, help="spatial chunk shape (with --blocks)")
    p.add_argument("--blocks", type=_int_list, help="spatial block shape (with --chunks)")
    p.add_argument("--codec", default="lz4hc")
    p.add_argument("--clevel", type=int, default=5)
    p.add_argument("--filters", default="shuffle", help="comma-separated, e.g. shuffle or none")
    p.add_argument("--keep-dtype", action="store_true", help="images keep their dtype "
                   "(default float32)")
    p.add_argument("--label-dtype", default="int16", choices=_LABEL_DTYPES)
    p.add_argument("--level", type=int, default=0, help="OME-Zarr inputs: the resolution level "
                   "to read (default 0, the highest)")
    p.add_argument("--normalize", default="none", choices=SCHEMES,
                   help="intensity normalisation, nnU-Net's schemes (default: none, the raw "
                   "intensities): zscore per case and channel; zscore-nonzero inside the nonzero "
                   "region and the labels; ct: clip to the dataset's foreground 0.5/99.5 "
                   "percentiles, then z-score with its foreground mean and std (needs labels); "
                   "rescale to [0, 1] per case and channel")
    p.add_argument("--allow-nonfinite", action="store_true", help="write images that hold NaN "
                   "or Inf (reported per case) instead of refusing them")
    p.add_argument("--force", action="store_true", help="write over other settings' outputs "
                   "and foreign .b2nd files")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(list(argv))
    filters = [] if args.filters in ("", "none") else args.filters.split(",")
    try:
        report = convert(args.input, args.out_dir, labels=args.labels, patch_size=args.patch,
                         chunks=args.chunks, blocks=args.blocks, codec=args.codec,
                         clevel=args.clevel, filters=filters,
                         image_dtype=None if args.keep_dtype else "float32",
                         label_dtype=args.label_dtype, level=args.level,
                         normalize=args.normalize, allow_nonfinite=args.allow_nonfinite,
                         force=args.force, progress=not args.no_progress)
    except (ConvertError, ImportError, OSError, ValueError) as e:
        print(f"patchfeed convert: error: {e}", file=sys.stderr)
        return 1
    opener = (f"patchfeed.Dataset.from_nnunet_folder({report.out_dir!r})" if report.has_labels
              else f"patchfeed.Dataset.from_folder({report.out_dir!r}, {{'image': '.b2nd'}})")
    print(f"patchfeed convert: {len(report.converted)} converted, {len(report.skipped)} "
          f"skipped{f', {len(report.removed)} old files removed' if report.removed else ''} "
          f"-> {report.out_dir}; open with {opener}")
    for line in summary_lines(report):
        print(f"patchfeed convert: {line}")
    return 0


def summary_lines(report: ConvertReport, most: int = 10) -> list[str]:
    """What a user should know about the values written: the normalisation and where its
    parameters are, and the cases holding NaN or Inf."""
    lines = []
    scheme = report.normalization.get("scheme", "none")
    manifest = os.path.join(report.out_dir, MANIFEST_NAME)
    if scheme == "none":
        lines.append("images hold the raw intensities (--normalize none)")
    elif scheme == "ct":
        stats = "; ".join(f"channel {c}: clipped to [{s['percentile_00_5']:.6g}, "
                          f"{s['percentile_99_5']:.6g}], mean {s['mean']:.6g}, "
                          f"std {s['std']:.6g}"
                          for c, s in enumerate(report.normalization["channels"]))
        lines.append(f"images normalised with nnU-Net's ct scheme and the dataset's foreground "
                     f"statistics ({stats}; also in {manifest}, 'ct_statistics')")
    else:
        lines.append(f"images normalised with nnU-Net's {scheme} scheme per case and channel "
                     f"(each case's parameters: {manifest}, 'cases' -> 'normalization')")
    if report.nonfinite:
        listed = ", ".join(
            f"{cid} (" + "; ".join(f"{os.path.basename(f.path)}: {f.nan} NaN, {f.inf} Inf"
                                   for f in found) + ")"
            for cid, found in list(report.nonfinite.items())[:most])
        more = len(report.nonfinite) - most
        lines.append(f"{len(report.nonfinite)} cases hold NaN or Inf, written as they are "
                     f"(--allow-nonfinite): {listed}{f' and {more} more' if more > 0 else ''}")
    return lines

