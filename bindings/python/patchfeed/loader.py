# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""`patchfeed.Loader`: batches of patches for a training loop, read by the C++ loader.

A batch is a dict `{array name: tensor}` (e.g. `image` (B, C, *patch) float32 and `seg`
(B, 1, *patch) int16; voxels of a patch outside the case are 0 in the image and -1 in `seg`,
see `pad_values`). The tensors are made from the loader's ring slot through DLPack without
a copy; the slot goes back to the loader when the last tensor of the batch is freed, so a
training step that drops its batch before asking for the next one keeps the ring turning. A
consumer that keeps batches (e.g. `list(loader)`) holds slots: with every slot held the loader
cannot produce and `next` raises; copy what you keep (`t.clone()`), or raise `ring_size`.

All C++ work, and the wait for a batch, runs without the GIL. Ctrl-C while waiting raises
KeyboardInterrupt promptly, and the batch being read is kept for the next call.

Example::

    loader = patchfeed.Loader("/data/nnUNet_preprocessed/Dataset004/nnUNetPlans_3d_fullres",
                              patch_size=(128, 128, 128), batch_size=2, seed=0)
    for step, batch in zip(range(250), loader):
        loss = train_step(batch["image"], batch["seg"])
"""

from __future__ import annotations

import atexit
import math
import sys
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from patchfeed import _core, class_locations
from patchfeed.augment import AugmentationOptions, crop_for, sampler_crop
from patchfeed.dataset import Dataset, PathLike

# Parameters of Loader.__init__ that are not options of the C++ loader: `device`, `as_numpy`
# and `batch_transform` are Python's alone; `pad_values` goes into the `arrays` option.
_PYTHON_ONLY = ("self", "device", "as_numpy", "pad_values", "batch_transform", "storage_options")
_STATE_KEYS = ("seed", "epoch", "next_batch", "rank", "world_size")
_STATE_VERSION = 1

# Loaders still open at interpreter exit are closed by atexit, while every module still works:
# their threads then stop before finalisation instead of racing it.
_live_loaders: weakref.WeakSet[Loader] = weakref.WeakSet()


@atexit.register
def _close_live_loaders() -> None:
    loaders = list(_live_loaders)
    for loader in loaders:
        loader.close()
    if loaders:
        # A thread that was consuming batches may be freeing a torch tensor, which releases
        # the GIL inside torch's C++; if finalisation began before it gets the GIL back,
        # CPython ends it with a forced unwind that aborts in torch's noexcept frame. Giving
        # up the GIL here lets such threads leave that window (their next call into the
        # closed loader raises) before finalisation starts: each other thread still running
        # (daemon threads: the others were joined before atexit) is joined, waiting on its
        # exit rather than for a fixed time, with 20 ms in all as the bound for threads that
        # do not end (a library's own background threads).
        deadline = time.monotonic() + 0.02
        for thread in threading.enumerate():
            if thread is not threading.current_thread() and thread.daemon:
                thread.join(max(0.0, deadline - time.monotonic()))


class Sample(NamedTuple):
    """Where one sample of a batch came from."""

    case_index: int
    box_start: tuple[int, ...]  #: lower corner in the case's voxels (may be outside: padded)
    forced_foreground: bool
    foreground_class: int  #: the class key centring the box, -1 for a random box


class BatchInfo(NamedTuple):
    """What `Loader.last_batch` says about the batch most recently returned."""

    epoch: int
    batch_index: int
    samples: tuple[Sample, ...]
    pinned: bool
    data_ptrs: dict[str, int]  #: the slot addresses the arrays view (zero-copy checks)


def _distributed_defaults(rank: int | None, world_size: int | None) -> tuple[int, int]:
    # Only look at torch.distributed when the program imported torch: without it there can be
    # no process group, and importing torch costs a second.
    if rank is None or world_size is None:
        torch = sys.modules.get("torch")
        if torch is not None:
            dist = torch.distributed
            if dist.is_available() and dist.is_initialized():
                rank = dist.get_rank() if rank is None else rank
                world_size = dist.get_world_size() if world_size is None else world_size
    return (0 if rank is None else rank), (1 if world_size is None else world_size)


def _foreground_indexes(dataset: Dataset, locations: Any, keys: Any, foreground: str,
                        io: str = "mmap") -> list[_core.ForegroundIndex | None] | None:
    """The `foreground_locations` option as indexes per case, or None to let the loader build.
    Label maps are opened (for their shapes) with the loader's `io_mode`; one that cannot be
    opened gets None, so that the C++ loader reports it with every other bad case (or, with
    error_policy="skip", leaves it out)."""
    if foreground == "off" or locations is None or locations == "build":
        return None
    ids = dataset.case_ids
    seg = dataset.array_names.index("seg") if "seg" in dataset.array_names else -1
    if isinstance(locations, str):
        if locations != "auto":
            raise ValueError(f"foreground_locations must be 'auto', 'build' or a mapping, "
                             f"not {locations!r}")
        # A remote folder's class_locations are not read: the loader builds the indexes from
        # the label maps (once; they are cached locally, docs/loader.md).
        if dataset.nnunet_folder is None or seg < 0 or (dataset.store is not None and
                                                        dataset.store.remote):
            return None
        wanted = None if keys is None else [tuple(k) if len(k) > 1 else k[0] for k in keys]
        return class_locations.nnunet_indexes(
            dataset.nnunet_folder, ids, [dataset.paths(i)[seg] for i in range(len(ids))], wanted,
            io=io)
    if seg < 0:
        raise ValueError("foreground_locations needs a 'seg' array for the cases' shapes")
    missing = [cid for cid in ids if cid not in locations]
    if missing:
        raise ValueError(f"foreground_locations has no entry for cases {missing[:5]}")
    first = locations[ids[0]]
    wanted = list(first.keys()) if keys is None else [tuple(k) if len(k) > 1 else k[0]
                                                       for k in keys]
    indexes: list[_core.ForegroundIndex | None] = []
    for i, cid in enumerate(ids):
        try:
            shape = dataset.open_array(i, "seg", io=io).shape[1:]
        except (OSError, ValueError):
            indexes.append(None)
            continue
        indexes.append(class_locations.index_from_locations(locations[cid], wanted, shape))
    return indexes


def _derive_crop(dataset: Dataset, patch_size: Sequence[int], need_to_pad: Sequence[int] | None,
                 augmentation: Mapping[str, Any], io: str) -> tuple[list[int], list[int], dict]:
    """The sampler's crop, need_to_pad and the augmentation dict when `augmentation` has no
    "patch_size": `patch_size` is then the patch after augmentation, and the crop is nnU-Net's
    initial patch size for it (`patchfeed.augment.crop_for`), or the patch itself when neither
    rotation nor scaling is on. A 2-D patch on 3-D cases draws (1, Y, X) crops, as nnU-Net's
    2d configuration does."""
    aug = dict(augmentation)
    final = [int(p) for p in patch_size]
    aug["patch_size"] = final
    spatial = len(final)
    if spatial == 2:
        image = aug.get("image_array", "image")
        if image in dataset.array_names and len(dataset):
            spatial = dataset.open_array(0, image, io=io).ndim - 1
    crop = list(crop_for(final, _max_angle(aug), dummy_2d=bool(aug.get("dummy_2d", False)))
                ) if _moves_samples(aug) else list(final)
    crop, pad = sampler_crop(final, crop, spatial)
    return crop, pad if need_to_pad is None else list(need_to_pad), aug


def _spatial_setting(augmentation: Mapping[str, Any], key: str, default: Any) -> Any:
    """A spatial setting from the "spatial" dict or its flat shorthand (AugmentationOptions)."""
    spatial = augmentation.get("spatial") or {}
    return spatial[key] if key in spatial else augmentation.get(key, default)


def _moves_samples(augmentation: Mapping[str, Any]) -> bool:
    """Whether rotation, scaling or elastic deformation may move a sample (nnU-Net's 0.2)."""
    return any(float(_spatial_setting(augmentation, key, default)) > 0 for key, default in
               (("p_rotation", 0.2), ("p_scaling", 0.2), ("p_elastic", 0.0)))


def _max_angle(augmentation: Mapping[str, Any]) -> float:
    """The largest rotation, radians: "spatial"'s range or max_angle (nnU-Net's pi/6)."""
    rotation = (augmentation.get("spatial") or {}).get("rotation")
    if rotation is None:
        return float(augmentation.get("max_angle", math.pi / 6))
    values = rotation if isinstance(rotation, (list, tuple)) else [rotation]
    return max(abs(float(r)) for r in values)


def _warn_about_nnunet_sampling(patch_size: Sequence[int], need_to_pad: Any,
                                augmentation: Mapping[str, Any]) -> None:
    """Settings that silently make sampling differ from nnU-Net's get a warning with the fix."""
    if "patch_size" not in augmentation:
        return
    patch = [int(p) for p in augmentation["patch_size"]]
    crop = [int(c) for c in patch_size][-len(patch):]
    if crop == patch and _moves_samples(augmentation):
        warnings.warn(
            f"augmentation: the sampler's crop {tuple(crop)} equals the patch: nnU-Net draws an "
            f"enlarged crop (its initial patch size, e.g. (205, 205, 205) for (128, 128, 128) "
            f"and 30 degree rotations) so that rotated and scaled samples have data in their "
            f"corners; pass that as patch_size", stacklevel=3)
    elif crop != patch and need_to_pad is None:
        pad = [c - p for c, p in zip(crop, patch)]
        warnings.warn(
            f"augmentation with an enlarged crop but no need_to_pad: nnU-Net pads by "
            f"need_to_pad = crop - patch ({pad}), so its samples reach the case borders; "
            f"without it they stay away from them and the foreground statistics differ; pass "
            f"need_to_pad={pad}", stacklevel=3)


def _warn_about_excluded_cases(excluded: Sequence[tuple[int, str, str]]) -> None:
    """One warning naming every case the loader left out (error_policy="skip") and why."""
    if excluded:
        lines = "".join(f"\n  case {cid!r} (#{i}): {why}" for i, cid, why in excluded)
        cases = ("case cannot be used and is" if len(excluded) == 1
                 else "cases cannot be used and are")
        warnings.warn(f"error_policy='skip': {len(excluded)} {cases} left out of sampling:{lines}",
                      stacklevel=3)


def _copied(value: Any) -> Any:
    """`value` with its containers copied (iterables become lists, mappings dicts)."""
    if value is None or isinstance(value, (str, bytes, _core.Dataset)):
        return value
    if isinstance(value, Mapping):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, Iterable):
        return [_copied(v) for v in value]
    return value


class Loader:
    """An iterable of training batches sampled across a dataset of `.b2nd` cases.

    Args:
      dataset: a `Dataset`, or the path of an nnU-Net preprocessed configuration folder.
      patch_size: spatial patch size, e.g. `(128, 128, 128)`.
      batch_size: the global batch size; with `world_size` > 1 each rank gets its share.
      arrays: arrays to load, in order (default: all of the dataset's).
      pad_values: fill value per array name outside the case (default -1 for "seg", else 0).
      epoch_mode: "infinite" (nnU-Net: cases drawn with replacement forever),
        "with_replacement" or "without_replacement" (finite epochs of `samples_per_epoch`
        samples, default the number of cases; `len(loader)` batches per epoch).
      oversample_foreground: fraction of each batch centred on foreground (nnU-Net's 0.33).
      probabilistic_oversampling, need_to_pad, case_weights, annotated_key: nnU-Net's
        sampler options (see loader/sampler.h).
      foreground: "auto", "on" or "off": the per-case foreground indexes oversampling uses.
      foreground_keys: class keys (each a list of labels) the sampler picks from.
      foreground_cache_dir: where foreground indexes the loader builds are kept between runs
        (never in the dataset's folder); None: $PATCHFEED_CACHE_DIR, else ~/.cache/patchfeed;
        "": nowhere (built on every run).
      foreground_locations: "auto" takes nnU-Net's class_locations from each case's `<id>.pkl`
        when the dataset is an nnU-Net folder that has them (nothing is built), else builds
        indexes; "build" always builds; or a mapping {case id: {key: (n, ndim + 1) rows}}.
      seed: the sampling seed; a batch depends only on (seed, epoch, batch index, rank).
      rank, world_size: this process's share; default from an initialised
        `torch.distributed` process group, else 0 and 1.
      num_threads: reader threads (0: every core; unlike torch's `num_workers=0`, which
        reads in the main process. Threads decode without the GIL: no worker processes).
      ring_size: batches in flight plus those held by the consumer (the ring's slots).
      memory_budget: bytes the ring, scratch and open files may use; more is refused.
      pin_memory: None pins when CUDA is there, True requires pinning, False never pins.
      device: "cpu", or "cuda[:n]" to copy each batch to the GPU on a side stream.
      as_numpy: yield NumPy arrays (sharing the slot) instead of torch tensors.
      io_mode: "mmap", or "pread" for network file systems.
      io_depth: with "pread", the most reads kept at the file system at once: each batch's
        chunk headers, then its block streams, are fetched together before it is decoded
        (0: every read synchronous, inside the decode tasks; faster on local disks).
      io_backend: "auto" (io_uring where the kernel allows it, else a pool of threads doing
        blocking preads), "io_uring" or "pread"; `metrics()["io_backend"]` says which runs.
      error_policy: "fail" or "skip". At creation, a case that cannot be used (a missing or
        unreadable file, an array whose rank, channels or dtype differ from the other cases')
        raises with "fail", with every such case listed; "skip" leaves them out with one
        warning (`metrics()["cases_excluded"]` counts them). A bad read (or a non-finite
        sample, `check_finite`) raises with "fail"; with "skip" the sample is redrawn.
      check_finite: check every delivered sample's floating arrays (with augmentation, the
        image after it) for NaN and Inf; a sample holding any is an error of that sample, as
        a bad read (error_policy). Costs about a pass over the float data (docs/loader.md).
      max_redraws, max_open_files, min_task_bytes: see loader/loader.h.
      augmentation: nnU-Net's training augmentation, run on every sample right after its read
        (docs/augment.md); `patchfeed.augment.AugmentationOptions` types it. Without a
        "patch_size" in it, `patch_size` above is the patch after augmentation and the loader
        draws nnU-Net's larger crop (`patchfeed.augment.crop_for`) with `need_to_pad = crop -
        patch`, as nnU-Net does; `augmentation={}` is nnU-Net's default pipeline. With a
        "patch_size" (the patch after augmentation), `patch_size` above is the crop the
        sampler draws, given by hand. Optional "max_angle" (radians, default pi/6), "dummy_2d", "image_array"
        ("image"), "seg_array" ("seg", or None), the probabilities "p_rotation",
        "p_scaling", "p_noise", "p_blur", "p_brightness", "p_contrast",
        "p_low_resolution", "p_gamma_inverted", "p_gamma", and "mirror_axes",
        "mask_channels", "remove_label". Unnamed settings are nnU-Net's defaults. nnU-Net's
        targets: "regions" (lists of labels; the segmentation becomes one bool channel per
        region) and "deep_supervision_scales" (one factor per axis per scale; the batch's
        segmentation is then the list of targets, full resolution first). nnU-Net's cascade
        (3d_cascade_fullres): "cascade_foreground_labels" and "previous_seg_array" (the dataset
        array holding the previous stage's label maps, without a channel axis) add one image
        channel per label, perturbed per "binary_operator" and "remove_component". With a 2-D
        "patch_size" and a (1, Y, X) `patch_size`, 2-D patches are drawn from 3-D cases
        (nnU-Net's 2d configuration).
      consumer_produces: whether a waiting `next` reads the batch itself when no worker has
        started it (lower latency); False keeps the calling thread free.
      batch_transform: `fn(batch) -> batch`, run on every batch on the consumer's thread,
        after the copy to `device` (so a MONAI or TorchIO GPU transform sees CUDA tensors).
        An exception in it gets a note naming the epoch and batch, and the batch stays
        undelivered: `state_dict()` names it and the next call reads it again.
      storage_options: for a `dataset` folder at a URL (`s3://`, `gs://`, `https://`), what
        the environment does not say, with fsspec's names (`endpoint_url`, `anon`, `key`,
        `secret`, `token`, `region`, `profile`; docs/storage.md). A `Dataset` brings its own.

    Ctrl-C: a batch counts as delivered when `next_batch` returns it (or `for batch in loader`
    binds it); a KeyboardInterrupt anywhere inside leaves it undelivered, so `state_dict()`
    names it and the next call returns it. (`next(iter(loader))` cannot promise that: Python may
    raise the interrupt after the builtin `next` returned, dropping its result.)

    Raises:
      FileNotFoundError: a dataset file is missing.
      patchfeed.CorruptDataError: a file is not a readable `.b2nd` array.
      ValueError: inconsistent arguments, or arrays that differ across cases (shapes, dtypes).
        With several bad cases, the first one's type; the message lists them all.
      MemoryError: the configuration needs more than `memory_budget`.
    """

    def __init__(
        self,
        dataset: Dataset | PathLike,
        patch_size: Sequence[int],
        batch_size: int = 2,
        *,
        arrays: Sequence[str] | None = None,
        pad_values: Mapping[str, float] | None = None,
        epoch_mode: str = "infinite",
        samples_per_epoch: int = 0,
        oversample_foreground: float = 0.33,
        probabilistic_oversampling: bool = False,
        need_to_pad: Sequence[int] | None = None,
        case_weights: Sequence[float] | None = None,
        annotated_key: int = -1,
        foreground: str = "auto",
        foreground_keys: Sequence[Sequence[int]] | None = None,
        foreground_cache_dir: str | None = None,
        foreground_locations: str | Mapping[str, Mapping[Any, Any]] | None = "auto",
        seed: int = 0,
        rank: int | None = None,
        world_size: int | None = None,
        num_threads: int = 0,
        ring_size: int = 3,
        memory_budget: int = 4 << 30,
        pin_memory: bool | None = None,
        device: str = "cpu",
        as_numpy: bool = False,
        io_mode: str = "mmap",
        io_depth: int = 64,
        io_backend: str = "auto",
        error_policy: str = "fail",
        max_redraws: int = 8,
        check_finite: bool = False,
        max_open_files: int = 1024,
        min_task_bytes: int = 256 << 10,
        augmentation: AugmentationOptions | Mapping[str, Any] | None = None,
        consumer_produces: bool = True,
        batch_transform: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        storage_options: Mapping[str, Any] | None = None,
    ) -> None:
        # Every parameter goes to the C++ loader under its own name (bindings/loader_options.cc
        # converts and checks it) except those Python uses alone or resolves first, below.
        # tests/python/test_loader_options.py keeps this signature, _core.pyi and the C++
        # defaults in step.
        options = dict(locals())  # the parameters: nothing else is bound yet
        for name in _PYTHON_ONLY:
            del options[name]
        if not isinstance(dataset, Dataset):
            dataset = Dataset.from_nnunet_folder(dataset, storage_options)
        elif storage_options is not None:
            raise ValueError("storage_options apply to a dataset given as a folder; a Dataset "
                             "keeps the options it was made with")
        self._dataset = dataset
        if dataset.store is not None and dataset.store.remote and (io_depth != 64 or
                                                                   io_backend != "auto"):
            raise ValueError("io_depth and io_backend are for local files; for a dataset in an "
                             "object store, set requests in flight with "
                             "storage_options={'io_depth': N} (docs/storage.md)")
        if batch_transform is not None and not callable(batch_transform):
            raise TypeError(f"batch_transform must be callable, not {type(batch_transform)}")
        self._batch_transform = batch_transform
        if augmentation is not None and "patch_size" not in augmentation:
            patch_size, need_to_pad, augmentation = _derive_crop(
                dataset, patch_size, need_to_pad, augmentation, io_mode)
            options.update(patch_size=patch_size, need_to_pad=need_to_pad,
                           augmentation=augmentation)
        self._as_numpy = bool(as_numpy)
        self._device, self._cuda = self._check_device(device, self._as_numpy)
        rank, world_size = _distributed_defaults(rank, world_size)
        names = list(arrays) if arrays is not None else dataset.array_names
        pads = dict(pad_values or {})
        unknown = set(pads) - set(names)
        if unknown:
            raise ValueError(f"pad_values for arrays that are not loaded: {sorted(unknown)}")
        options.update(
            dataset=dataset._core,
            arrays=[(n, pads.get(n)) for n in names] if (arrays is not None or pads) else [],
            rank=rank,
            world_size=world_size,
            foreground_locations=_foreground_indexes(dataset, foreground_locations,
                                                     foreground_keys, foreground, io_mode),
        )
        # Kept to rebuild the loader (load_state_dict with another seed): copies, so that a
        # caller's later change to a list, or a consumed iterator, does not leak in.
        self._options: dict[str, Any] = {k: _copied(v) for k, v in options.items()}
        self._core: _core.Loader | None = None
        self._core = _core.Loader(**self._options)
        _warn_about_excluded_cases(self._core.excluded_cases)
        aug = augmentation or {}
        _warn_about_nnunet_sampling(patch_size, need_to_pad, aug)
        self._ds_scales = [list(s) for s in aug.get("deep_supervision_scales") or []]
        self._seg_name = aug.get("seg_array", "seg")
        self._last: BatchInfo | None = None
        self._copies: list[tuple[Any, Any]] = []  # (CUDA event, host batch) while copying
        self._stream = None
        _live_loaders.add(self)

    # ---- iteration ------------------------------------------------------------------------

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """Batches until the end of the epoch (forever with epoch_mode="infinite"). After a
        finite epoch the loader is at batch 0 of the next one, so `for batch in loader` runs
        one epoch per loop."""
        while True:
            batch = self.next_batch()
            if batch is None:
                return
            yield batch

    def next_batch(self) -> dict[str, Any] | None:
        """The next batch, or None after the last batch of a finite epoch. Whatever interrupts
        it (Ctrl-C, an error in `batch_transform`), a batch it does not return stays
        undelivered: `state_dict()` names it and the next call returns it."""
        core = self._loader()
        if self._copies:
            self._reap_copies()
        position, last = core.state(), self._last
        raw = out = None
        try:
            raw = core.next()
            if raw is None:
                return None
            out = self._hand_over(raw)
            if self._batch_transform is not None:
                out = self._transform(out)
        except BaseException as error:
            # The core moved past a batch the caller never got. Its own errors (a failed
            # batch, raised inside core.next() before anything was bound) keep their meaning:
            # that batch is skipped. Anything else (a KeyboardInterrupt, which Python may
            # raise even as core.next() returns, or an error after the hand-over) puts the
            # position back, so the batch is read again.
            if raw is not None or not isinstance(error, Exception):
                if raw is not None:
                    raw.release()
                del raw, out  # the traceback keeps this frame: let its slot go back
                self._last = last
                self._undo_hand_over(core, position)
            raise
        return out

    def _undo_hand_over(self, core: _core.Loader, position: Mapping[str, int]) -> None:
        if self._core is not core:
            return  # closed (or rebuilt) meanwhile: nothing to put back
        if dict(core.state()) != dict(position):
            core.seek(position["epoch"], position["next_batch"])

    def _transform(self, out: dict[str, Any]) -> dict[str, Any]:
        try:
            return self._batch_transform(out)
        except Exception as error:
            info = self._last
            if hasattr(error, "add_note"):  # Python >= 3.11
                error.add_note(f"patchfeed.Loader: in batch_transform on batch {info.batch_index} "
                               f"of epoch {info.epoch}; the batch stays undelivered")
            raise

    def _hand_over(self, raw: Any) -> dict[str, Any]:
        """The batch's arrays as tensors (or NumPy arrays) over its slot, on `device`."""
        names = raw.names
        self._last = BatchInfo(
            epoch=raw.epoch,
            batch_index=raw.batch_index,
            samples=tuple(Sample(c, tuple(b), f, k) for c, b, f, k in raw.samples),
            pinned=raw.pinned,
            data_ptrs={n: raw.data_ptr(i) for i, n in enumerate(names)},
        )
        if self._as_numpy:
            out = {n: raw.numpy(i) for i, n in enumerate(names)}
        else:
            import torch

            out = {n: torch.from_dlpack(raw.dlpack(i)) for i, n in enumerate(names)}
        if self._ds_scales:
            out = self._group_targets(out)
        # From here on only the arrays hold the slot.
        raw.release()
        if self._cuda:
            return self._to_cuda(out)
        return out

    def _group_targets(self, out: dict[str, Any]) -> dict[str, Any]:
        # The deep-supervision targets, full resolution first, as one list under the
        # segmentation's name; a scale of all ones is the segmentation itself (as in nnU-Net).
        seg = self._seg_name
        targets = [out[seg] if all(f == 1 for f in scale) else out.pop(f"{seg}_ds{k}")
                   for k, scale in enumerate(self._ds_scales)]
        out[seg] = targets
        return out

    @property
    def last_batch(self) -> BatchInfo | None:
        """Epoch, index, samples and slot addresses of the batch most recently returned."""
        return self._last

    # ---- position -------------------------------------------------------------------------

    def set_epoch(self, epoch: int) -> None:
        """Moves to batch 0 of `epoch` (batches read ahead for another position are dropped;
        none are when the loader is there already, as after a finished epoch)."""
        state = self._loader().state()
        if state["epoch"] != epoch or state["next_batch"] != 0:
            self._loader().seek(epoch, 0)

    def state_dict(self) -> dict[str, int]:
        """The loader's position: a loader of the same configuration given this state by
        `load_state_dict` returns exactly the batches this one would return next."""
        state = dict(self._loader().state())
        state["version"] = _STATE_VERSION
        return state

    def load_state_dict(self, state: Mapping[str, int]) -> None:
        """Continues from a `state_dict()`: its seed and position. Rank and world size stay
        this loader's (a batch index is the same global batch on every rank)."""
        missing = [k for k in _STATE_KEYS if k not in state]
        if missing:
            raise ValueError(f"not a patchfeed loader state: missing {missing}")
        if state.get("version", _STATE_VERSION) != _STATE_VERSION:
            raise ValueError(f"loader state version {state['version']} is not supported")
        if int(state["seed"]) != self._options["seed"]:
            # The seed is part of the configuration: rebuild, starting at the saved position.
            self.close()
            self._options["seed"] = int(state["seed"])
            self._core = _core.Loader(
                **self._options,
                start_epoch=int(state["epoch"]),
                start_batch=int(state["next_batch"]),
            )
            _live_loaders.add(self)
        else:
            self._loader().seek(int(state["epoch"]), int(state["next_batch"]))

    def __len__(self) -> int:
        """Batches per epoch for this rank (finite epoch modes only)."""
        n = self._loader().batches_per_epoch
        if n < 0:
            raise TypeError('an epoch_mode="infinite" loader has no length')
        return n

    # ---- introspection --------------------------------------------------------------------

    @property
    def dataset(self) -> Dataset:
        return self._dataset

    @property
    def rank(self) -> int:
        return self._options["rank"]

    @property
    def world_size(self) -> int:
        return self._options["world_size"]

    @property
    def batch_size(self) -> int:
        """This rank's batch size."""
        return self._loader().local_batch_size

    @property
    def num_threads(self) -> int:
        return self._loader().num_threads

    @property
    def pinned(self) -> bool:
        """Whether the ring is page-locked (`unpinned_reason` says why not)."""
        return self._loader().pinned

    @property
    def unpinned_reason(self) -> str:
        return self._loader().unpinned_reason

    @property
    def array_layout(self) -> dict[str, tuple[str, tuple[int, ...]]]:
        """{name: (NumPy dtype string, shape)} of a batch's arrays."""
        return {n: (dt, tuple(s)) for n, dt, s in self._loader().array_layout()}

    def metrics(self) -> dict[str, int | str]:
        """Counters since creation: batches, bytes read/decoded/delivered, wait times (ns),
        slot states, files opened, reads in flight; integers except `io_backend` (a name)."""
        return self._loader().metrics()

    # ---- lifetime -------------------------------------------------------------------------

    def close(self) -> None:
        """Stops the reader threads. Batches already returned stay valid. Idempotent."""
        core, self._core = self._core, None
        if core is not None:
            core.close()
        self._copies.clear()
        _live_loaders.discard(self)

    @property
    def closed(self) -> bool:
        return self._core is None

    def __enter__(self) -> Loader:  # noqa: PYI034 (no typing_extensions dependency)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        core = getattr(self, "_core", None)
        if core is not None:
            core.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{self.num_threads} threads"
        return (
            f"Loader({len(self._dataset)} cases, patch {tuple(self._options['patch_size'])}, "
            f"batch {self._options['batch_size']}, {state})"
        )

    # ---- internals ------------------------------------------------------------------------

    def _loader(self) -> _core.Loader:
        if self._core is None:
            raise ValueError("the loader is closed")
        return self._core

    @staticmethod
    def _check_device(device: Any, as_numpy: bool) -> tuple[Any, bool]:
        name = str(device)
        if name == "cpu":
            return "cpu", False
        if not name.startswith("cuda"):
            raise ValueError(f"device must be 'cpu' or 'cuda[:index]', not {name!r}")
        if as_numpy:
            raise ValueError("as_numpy=True yields host arrays; it cannot go with device='cuda'")
        import torch

        if not torch.cuda.is_available():
            raise RuntimeError(
                f"device={name!r} needs CUDA, but torch.cuda.is_available() is False "
                f"(torch {torch.__version__}); use device='cpu'"
            )
        return torch.device(name), True

    def _to_cuda(self, host: dict[str, Any]) -> dict[str, Any]:
        # The copies run on a side stream so they overlap the compute stream; the compute
        # stream waits for them before using the tensors, and the host tensors (the ring
        # slot) stay referenced until the copy has finished.
        import torch

        if self._stream is None:
            self._stream = torch.cuda.Stream(device=self._device)
        compute = torch.cuda.current_stream(self._device)
        def to_device(t):  # a tensor, or the list of deep-supervision targets
            if isinstance(t, list):
                return [x.to(self._device, non_blocking=True) for x in t]
            return t.to(self._device, non_blocking=True)

        with torch.cuda.stream(self._stream):
            out = {n: to_device(t) for n, t in host.items()}
            done = torch.cuda.Event()
            done.record(self._stream)
        compute.wait_event(done)
        for t in out.values():
            for x in t if isinstance(t, list) else [t]:
                x.record_stream(compute)
        self._copies.append((done, host))
        return out

    def _reap_copies(self) -> None:
        # Host batches whose copy finished go back to the ring; if the copies still running
        # hold all but one slot, wait for the oldest so the loader can produce into it.
        self._copies = [(e, h) for e, h in self._copies if not e.query()]
        while self._copies and len(self._copies) >= self._options["ring_size"] - 1:
            self._copies.pop(0)[0].synchronize()
