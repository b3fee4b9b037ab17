"""The training set as the loader sees it: `Dataset`, cases each with the same named arrays,
made from an nnU-Net folder, a folder of files, a zarr group, precomputed volumes or a list."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, Union

from patchfeed import _core, precomputed_cases
from patchfeed.frames import NdArray

PathLike = Union[str, "os.PathLike[str]"]


def _store(path: str, storage_options: Mapping[str, Any] | None) -> _core.Store:
    return _core.store_for(path, None if storage_options is None else dict(storage_options))


class Dataset:
    """The cases of a training set: each case has the same named arrays, one `.b2nd` each.

    Build one with `Dataset.from_nnunet_folder`, `Dataset.from_folder` or `Dataset.from_list`;
    a plain folder path passed to `Loader` means `from_nnunet_folder`.
    """

    def __init__(self, core: _core.Dataset, nnunet_folder: str | None = None,
                 store: _core.Store | None = None) -> None:
        self._core = core
        self.nnunet_folder = nnunet_folder  #: the nnU-Net folder it was read from, if any
        self.store = store  #: where the paths lead (None: local files)

    # Every factory takes `storage_options` for folders and files at URLs (s3://, gs://,
    # http(s)://): fsspec's names, docs/storage.md. One store serves the whole dataset.

    @classmethod
    def from_nnunet_folder(cls, folder: PathLike,
                           storage_options: Mapping[str, Any] | None = None) -> Dataset:
        """nnU-Net's layout: `<id>.b2nd` (array "image") and `<id>_seg.b2nd` ("seg"); the
        cases' `<id>.pkl` give the foreground voxels (nnU-Net's class_locations)."""
        folder = os.fspath(folder)
        store = _store(folder, storage_options)
        return cls(_core.Dataset.from_nnunet_folder(folder, store), nnunet_folder=folder,
                   store=store)

    @classmethod
    def from_folder(cls, folder: PathLike, naming: Mapping[str, str],
                    storage_options: Mapping[str, Any] | None = None) -> Dataset:
        """Arrays named by file suffix, e.g. `{"image": "_0000.b2nd", "label": "_seg.b2nd"}`;
        the first array's files define the case ids."""
        folder = os.fspath(folder)
        store = _store(folder, storage_options)
        return cls(_core.Dataset.from_folder(folder, list(naming.items()), store), store=store)

    @classmethod
    def from_zarr_group(cls, group: PathLike, arrays: Sequence[str] = (),
                        storage_options: Mapping[str, Any] | None = None) -> Dataset:
        """One case per entry of a zarr group, sorted by name. Without `arrays`, the entries
        are found as `patchfeed convert` finds them (docs/convert.md): a zarr array or an
        OME-Zarr image (read at its highest resolution) is a case whose one array is "image";
        a group holding an `image` array is a case whose label, whichever of `label`, `labels`
        or `seg` it holds, is the array "seg" (the name the loader pads with -1 and samples
        foreground from). With `arrays`, e.g. `["image", "labels"]`, every entry holding those
        paths is a case and the paths are the array names."""
        group = os.fspath(group)
        store = _store(group, storage_options)
        if arrays:
            return cls(_core.Dataset.from_zarr_group(group, list(arrays), store), store=store)
        from patchfeed.convert_inputs import cases_in_zarr_group

        cases = cases_in_zarr_group(group, store)
        labelled = _all_or_none_labelled(cases, f"zarr group {group}", "a label",
                                         "arrays=['image']")
        names = ["image", "seg"] if labelled else ["image"]
        return cls.from_list(names, {c.case_id: c.paths for c in cases}, storage_options)

    @classmethod
    def from_list(
        cls, array_names: Sequence[str], cases: Mapping[str, Sequence[PathLike]],
        storage_options: Mapping[str, Any] | None = None, *, fill_missing: bool = True,
    ) -> Dataset:
        """An explicit list: `cases` maps case id to one path per array name. `fill_missing`:
        a precomputed chunk never written reads as zeros (else the read fails naming it)."""
        listed = [(cid, [os.fspath(p) for p in paths]) for cid, paths in cases.items()]
        first = listed[0][1][0] if listed and listed[0][1] else ""
        store = _store(first, storage_options)
        core = _core.Dataset.from_list(list(array_names), listed, store)
        core.fill_missing = bool(fill_missing)
        return cls(core, store=store)

    @classmethod
    def from_precomputed(
        cls, root: PathLike, image: str = "image",
        label: str | Sequence[str] = precomputed_cases.LABEL_LAYER_NAMES,
        scale: int | str | Sequence[float] | None = None,
        storage_options: Mapping[str, Any] | None = None, *, fill_missing: bool = True,
    ) -> Dataset:
        """Neuroglancer precomputed volumes (docs/precomputed.md): `root` is a volume (a folder
        holding the layer `image`, or a layer itself) or a folder of volumes, one case each.
        A volume's segmentation layer, named `label` (or the first of those names found: by
        default "segmentation", "seg", "labels", "label"; () for images alone), is the array
        "seg" beside "image". `scale`: the image's scale by index, key or resolution (default:
        its first); the segmentation's is the one at the same resolution and must cover the
        same voxels. `fill_missing`: chunks never written read as zeros (else an error)."""
        root = os.fspath(root).rstrip("/")
        store = _store(root, storage_options)
        cases = precomputed_cases.precomputed_cases(root, store, image, label, scale)
        labelled = _all_or_none_labelled(cases, root, "a segmentation layer", "label=()")
        names = ["image", "seg"] if labelled else ["image"]
        listed = [(c.case_id, [c.image, c.label] if labelled else [c.image]) for c in cases]
        core = _core.Dataset.from_list(names, listed, store)
        core.fill_missing = bool(fill_missing)
        return cls(core, store=store)

    @property
    def array_names(self) -> list[str]:
        return self._core.array_names

    @property
    def case_ids(self) -> list[str]:
        return self._core.case_ids

    def paths(self, case_index: int) -> list[str]:
        """The files of case `case_index`, in `array_names` order."""
        return self._core.paths(case_index)

    def open_array(self, case_index: int, array: str, io: str = "mmap") -> NdArray:
        """Case `case_index`'s array `array`, opened where the dataset's paths lead."""
        path = self.paths(case_index)[self.array_names.index(array)]
        return NdArray(path, io, store=self.store, fill_missing=self._core.fill_missing)

    def __len__(self) -> int:
        return self._core.num_cases

    def __repr__(self) -> str:
        return f"Dataset({len(self)} cases, arrays {self.array_names})"


def _all_or_none_labelled(cases: Sequence[Any], where: str, what: str, images_alone: str) -> bool:
    """Whether `cases` (each with `case_id` and `label`) have labels: all of them or none, else
    a ValueError saying which do not and how to read the images alone."""
    labelled = [c.case_id for c in cases if c.label is not None]
    if labelled and len(labelled) != len(cases):
        unlabelled = [c.case_id for c in cases if c.label is None]
        raise ValueError(f"{where}: {len(labelled)} cases have {what} and {len(unlabelled)} do "
                         f"not (e.g. {unlabelled[:3]}); pass {images_alone} to read the images "
                         f"alone")
    return bool(labelled)
