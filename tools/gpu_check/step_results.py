# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Step results of the GPU check: one JSON file per step, written as the step goes (so a step
killed by its time limit still leaves what it measured), merged into results.json and
summary.md in $OUT after every step."""

from __future__ import annotations

import datetime
import json
import os
import pathlib
import platform
import time
import traceback
from typing import Any, Callable


class Skip(Exception):
    """A step that cannot run here (no CUDA in a dry run, no binary): status "skipped"."""


class Step:
    """What one step measured and checked, saved to `<steps_dir>/<name>.json` on every change.

    `checks` are pass/fail conditions (a false one fails the step); `goals` are measured
    figures against a target (reported, met or not, never failing the step); `figures` are
    the measured numbers; `smoke` holds what a --cpu-dry-run ran (no figure of a GPU)."""

    def __init__(self, name: str, steps_dir: str, deadline: float, dry_run: bool) -> None:
        self.name = name
        self.path = pathlib.Path(steps_dir) / f"{name}.json"
        self.deadline = deadline
        self.dry_run = dry_run
        self.result: dict[str, Any] = {"step": name, "status": "running", "dry_run": dry_run,
                                       "checks": {}, "figures": {}, "goals": {}, "notes": []}
        self.save()

    def left(self) -> float:
        """Seconds until the run's deadline."""
        return self.deadline - time.time()

    def check(self, name: str, ok: bool, detail: Any = None) -> bool:
        self.result["checks"][name] = {"ok": bool(ok), "detail": detail}
        print(f"  [{'ok' if ok else 'FAILED'}] {name}" + (f": {detail}" if detail is not None
                                                          else ""), flush=True)
        self.save()
        return bool(ok)

    def figure(self, name: str, value: Any, unit: str = "") -> None:
        key = "smoke" if self.dry_run else "figures"
        self.result.setdefault(key, {})[name] = {"value": value, "unit": unit}
        print(f"  {'smoke ' if self.dry_run else ''}{name} = {_fmt(value)} {unit}", flush=True)
        self.save()

    def goal(self, name: str, measured: float, target: str, met: bool, unit: str = "") -> None:
        if self.dry_run:  # a CPU dry run measures no GPU goal
            return
        self.result["goals"][name] = {"measured": measured, "unit": unit, "target": target,
                                      "met": bool(met)}
        print(f"  goal {name}: {_fmt(measured)} {unit} (target {target}): "
              f"{'met' if met else 'NOT met'}", flush=True)
        self.save()

    def note(self, text: str) -> None:
        self.result["notes"].append(text)
        print(f"  note: {text}", flush=True)
        self.save()

    def set(self, key: str, value: Any) -> None:
        self.result[key] = value
        self.save()

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.result, indent=1, default=str))
        os.replace(tmp, self.path)


def _fmt(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def run(step: Step, body: Callable[[Step], None]) -> int:
    """Runs `body(step)`; returns the exit code: 0 ok or skipped, 1 a check failed, 2 error."""
    print(f"gpu_check step {step.name}{' (cpu dry run)' if step.dry_run else ''}", flush=True)
    t0 = time.time()
    code = 0
    try:
        body(step)
        failed = [k for k, c in step.result["checks"].items() if not c["ok"]]
        step.result["status"] = "failed" if failed else "ok"
        if failed:
            print(f"gpu_check: ERROR: step {step.name}: failed checks: {failed}", flush=True)
            code = 1
    except Skip as e:
        step.result["status"] = "skipped"
        step.result["message"] = str(e)
        print(f"  skipped: {e}", flush=True)
    except BaseException as e:  # noqa: BLE001 (KeyboardInterrupt too: say so, then re-raise)
        step.result["status"] = "error"
        step.result["message"] = f"{type(e).__name__}: {e}"
        step.result["traceback"] = traceback.format_exc()
        print(f"gpu_check: ERROR: step {step.name} raised {type(e).__name__}: {e}\n"
              f"{traceback.format_exc()}", flush=True)
        code = 2
        if not isinstance(e, Exception):
            step.result["seconds"] = round(time.time() - t0, 1)
            step.save()
            raise
    step.result["seconds"] = round(time.time() - t0, 1)
    step.save()
    return code


def merge(steps_dir: str, out: str) -> dict[str, Any]:
    """results.json and summary.md in `out` from the step files and the shell's status.tsv."""
    steps_path = pathlib.Path(steps_dir)
    status: dict[str, dict[str, Any]] = {}
    tsv = steps_path / "status.tsv"
    if tsv.exists():
        for line in tsv.read_text().splitlines():
            name, rc, seconds = (line.split("\t") + ["", ""])[:3]
            status[name] = {"exit": rc, "seconds": seconds}
    steps: dict[str, Any] = {}
    for name in status:  # the order they ran in
        f = steps_path / f"{name}.json"
        data = json.loads(f.read_text()) if f.exists() else {"step": name}
        if data.get("status") in (None, "running"):
            # The process died or was killed before it said how the step ended.
            rc = status[name]["exit"]
            data["status"] = ("ok" if rc == "0" else "timeout" if rc in ("124", "137")
                              else "not run" if rc == "no-time" else f"exit {rc}")
        data["exit"] = status[name]["exit"]
        data.setdefault("seconds", status[name]["seconds"])  # a step with no JSON (build)
        steps[name] = data
    dry = any(s.get("dry_run") for s in steps.values())
    host = {"date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "cpu_count": os.cpu_count(), "platform": platform.platform()}
    host.update(steps.get("pinned", {}).get("host", {}))
    results = {"issue": 16, "dry_run": dry, "host": host, "steps": steps}
    outp = pathlib.Path(out)
    outp.mkdir(parents=True, exist_ok=True)
    (outp / "results.json").write_text(json.dumps(results, indent=1, default=str))
    (outp / "summary.md").write_text(summary(results))
    return results


def summary(results: dict[str, Any]) -> str:
    """The markdown that bench/README.md's "GPU" section takes its figures from."""
    h = results["host"]
    lines = ["# patchfeed GPU check (issue 16)", ""]
    if results["dry_run"]:
        lines += ["**CPU DRY RUN: no GPU was used; nothing here is a GPU figure.**", ""]
    lines += [f"- date (UTC): {h.get('date_utc')}",
              f"- device: {h.get('gpu', 'n/a')}, driver {h.get('driver', 'n/a')}, "
              f"torch {h.get('torch', 'n/a')} (CUDA {h.get('torch_cuda', 'n/a')})",
              f"- host: {h.get('cpu_count')} CPUs, {h.get('platform')}", "",
              "| step | status | seconds | failed checks |", "| --- | --- | ---: | --- |"]
    for name, s in results["steps"].items():
        failed = [k for k, c in s.get("checks", {}).items() if not c["ok"]]
        lines.append(f"| {name} | {s.get('status')} | {s.get('seconds', '')} | "
                     f"{', '.join(failed) or ''} |")
    goals = [(n, g, k) for n, s in results["steps"].items() for k, g in s.get("goals", {}).items()]
    if goals:
        lines += ["", "| step | goal | measured | target | met |", "| --- | --- | ---: | --- | --- |"]
        for n, g, k in goals:
            measured = f"{_fmt(g['measured'])} {g['unit']}".strip()
            lines.append(f"| {n} | {k} | {measured} | {g['target']} | "
                         f"{'yes' if g['met'] else 'no'} |")
    lines += ["", "## Figures", ""]
    for name, s in results["steps"].items():
        figs = s.get("smoke" if results["dry_run"] else "figures") or {}
        for k, f in figs.items():
            lines.append(f"- {name} / {k}: {_fmt(f['value'])} {f['unit']}".rstrip())
        for text in s.get("notes", []):
            lines.append(f"- {name} (note): {text}")
        if s.get("message"):
            lines.append(f"- {name} ({s.get('status')}): {s['message']}")
    return "\n".join(lines) + "\n"
