# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""The state `patchfeed convert` keeps in its output folder (patchfeed/convert.py):
`<out_dir>/.patchfeed_convert.json`, what it records and how a rerun uses it."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from patchfeed.convert_inputs import Case, ConvertError, fingerprint

MANIFEST_NAME = ".patchfeed_convert.json"
PARTIAL_SUFFIX = ".partial"
# Settings added after manifests were first written, with the value that gives the outputs
# older versions wrote: a folder converted before a setting existed resumes without --force.
SETTINGS_ADDED = {"normalize": "none"}


def case_inputs(case: Case) -> list[list[Any]]:
    return [fingerprint(p) for p in case.paths]


def output_names(case_id: str, labels: bool) -> list[str]:
    return [f"{case_id}.b2nd"] + ([f"{case_id}_seg.b2nd"] if labels else [])


class Manifest:
    """`<out_dir>/.patchfeed_convert.json`: the settings, the dataset's CT statistics (with
    normalize="ct") and each case's state. A case is recorded as started before its first file
    is written, so every file convert may have written is listed (and is convert's to
    overwrite) even after a kill."""

    def __init__(self, out_dir: str) -> None:
        self.path = os.path.join(out_dir, MANIFEST_NAME)
        self.settings: dict[str, Any] | None = None
        self.ct_statistics: dict[str, Any] | None = None
        self.cases: dict[str, dict[str, Any]] = {}
        if os.path.exists(self.path):
            try:
                with open(self.path) as f:
                    data = json.load(f)
                self.settings = {**SETTINGS_ADDED, **data["settings"]}
                self.cases = data["cases"]
                self.ct_statistics = data.get("ct_statistics")
            except (ValueError, KeyError, TypeError) as e:
                raise ConvertError(f"{self.path}: unreadable convert manifest ({e}); delete it "
                                   f"and pass force=True (--force) to start over") from None

    def outputs(self) -> set[str]:
        return {name for entry in self.cases.values() for name in entry["outputs"]}

    def save(self) -> None:
        # One line per case: readable, and small enough to rewrite after every case.
        cases = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in self.cases.items())
        tmp = self.path + PARTIAL_SUFFIX
        with open(tmp, "w") as f:
            f.write(f'{{"tool": "patchfeed convert",\n "settings": {json.dumps(self.settings)},')
            if self.ct_statistics is not None:
                f.write(f'\n "ct_statistics": {json.dumps(self.ct_statistics)},')
            f.write(f'\n "cases": {{\n{cases}\n }}\n}}\n')
        os.replace(tmp, self.path)


def remove_outputs(out_dir: str, manifest: Manifest, to_write: set[str]) -> list[str]:
    """Deletes every case's outputs (one folder, one dataset: after a change that affects them
    all) and forgets the cases; returns the deleted files this run does not write again."""
    removed = []
    for name in sorted(manifest.outputs()):
        if os.path.exists(os.path.join(out_dir, name)):
            os.remove(os.path.join(out_dir, name))
            if name not in to_write:
                removed.append(name)
    manifest.cases = {}
    manifest.ct_statistics = None
    return removed


def is_done(entry: dict[str, Any] | None, inputs: list[list[Any]], out_dir: str) -> bool:
    """Whether a case's outputs are complete for exactly these inputs."""
    if entry is None or entry.get("state") != "done" or entry.get("inputs") != inputs:
        return False
    for name, size in zip(entry["outputs"], entry.get("sizes", [])):
        path = os.path.join(out_dir, name)
        if not os.path.isfile(path) or os.path.getsize(path) != size:
            return False
    return True


def prepare_folder(out_dir: str, manifest: Manifest, settings: dict[str, Any], force: bool,
                    to_write: set[str]) -> list[str]:
    """Refuses what must not be overwritten; returns the earlier outputs that force removed
    and this run does not write again."""
    ours = manifest.outputs()
    foreign = sorted(n for n in os.listdir(out_dir) if n.endswith(".b2nd") and n not in ours)
    if foreign and not force:
        raise ConvertError(f"{out_dir} holds .b2nd files that convert did not write (e.g. "
                           f"{foreign[:3]}); pass force=True (--force) to write there anyway")
    removed: list[str] = []
    if manifest.settings is not None and manifest.settings != settings:
        changed = sorted(k for k in set(settings) | set(manifest.settings)
                         if settings.get(k) != manifest.settings.get(k))
        if not force:
            was = ", ".join(f"{k}={manifest.settings.get(k)!r}" for k in changed)
            now = ", ".join(f"{k}={settings.get(k)!r}" for k in changed)
            raise ConvertError(f"{out_dir} was converted with {was}; now {now}. Pass force=True "
                               f"(--force) to delete those {len(manifest.cases)} cases' outputs "
                               f"and convert again, or choose another folder")
        removed = remove_outputs(out_dir, manifest, to_write)
    manifest.settings = settings
    for name in ours:  # a killed run's leftovers
        if os.path.exists(os.path.join(out_dir, name + PARTIAL_SUFFIX)):
            os.remove(os.path.join(out_dir, name + PARTIAL_SUFFIX))
    return removed


def inputs_digest(inputs_of: dict[str, list[list[Any]]]) -> str:
    """One value for every case's input fingerprints: what dataset-wide statistics came from."""
    return hashlib.sha256(json.dumps(sorted(inputs_of.items())).encode()).hexdigest()
