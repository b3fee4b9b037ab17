# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""The `patchfeed` console script and `python -m patchfeed`.

`info`, `read`, `compress`, `decompress` and `demo` are the C++ command (cli/run_cli.h) run
in-process with the GIL released, so they behave exactly like the `patchfeed` binary. `bench`
is Python: it measures `patchfeed.Loader` as a training loop sees it (batches as torch tensors
or NumPy arrays), with samples/s, CPU seconds per sample and peak RSS. `nnunet-path` prints the
folder that holds nnUNetTrainerPatchfeed, for nnU-Net's `nnUNet_extTrainer`. `convert` writes
NIfTI, .npy and zarr inputs as `.b2nd` cases (patchfeed/convert.py). `show` draws a Loader's
samples (patchfeed/show.py), as `bench --plot` draws a run's throughput.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence

from patchfeed import _core

BENCH_USAGE = (
    "  bench [DIR] [--patch Z,Y,X] [--batch B] [--threads T[,T...]] [--steps S] [--warmup W]\n"
    "        [--ring K] [--numpy] [--json] [--plot PNG]   loader throughput through\n"
    "                                  patchfeed.Loader (DIR: an nnU-Net folder; default: a\n"
    "                                  synthetic one); a threads list is a sweep\n"
    "  show DATASET [--augmented N] [--plain] [--patch Z,Y,X] [--seed S] [--out PNG]\n"
    "                                  a picture of N samples, augmented as nnU-Net does\n"
    "  nnunet-path                     the folder for nnUNet_extTrainer (nnUNetTrainerPatchfeed)\n"
    "  convert INPUT OUT_DIR [--labels DIR] [--patch Z,Y,X] [--chunks Z,Y,X --blocks Z,Y,X]\n"
    "        [--keep-dtype] [--level N] [--normalize none|zscore|zscore-nonzero|ct|rescale]\n"
    "        [--allow-nonfinite] [--force] [--no-progress]  NIfTI/.npy/zarr/OME-Zarr\n"
    "                                  -> .b2nd cases (resumable; patchfeed convert --help,\n"
    "                                  docs/convert.md)\n"
)


def _ints(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected integers like 64,64,64, not {text!r}")
    if any(v <= 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive integers, not {text!r}")
    return values


def _bench(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(prog="patchfeed bench", description=__doc__)
    p.add_argument("dir", nargs="?", help="nnU-Net preprocessed folder (default: synthetic)")
    p.add_argument("--patch", type=_ints, default=[64, 64, 64])
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--threads", default="0", help="reader threads (0: every core); a list "
                   "such as 1,2,4 runs once per count (a sweep)")
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--ring", type=int, default=3)
    p.add_argument("--cases", type=int, default=8, help="synthetic cases (without DIR)")
    p.add_argument("--numpy", action="store_true", help="NumPy arrays instead of tensors")
    p.add_argument("--json", action="store_true", help="print one JSON line per run")
    p.add_argument("--plot", metavar="PNG", help="write a plot of samples/s at each step, one "
                   "line per thread count (matplotlib)")
    args = p.parse_args(list(argv))
    if args.steps < 1 or args.warmup < 0 or args.batch < 1:
        p.error("--steps >= 1, --warmup >= 0, --batch >= 1")
    try:
        sweep = [int(t) for t in args.threads.split(",")]
    except ValueError:
        p.error(f"--threads takes integers like 4 or 1,2,4, not {args.threads!r}")
    if any(t < 0 for t in sweep):
        p.error("--threads >= 0")
    if args.plot:
        try:
            import matplotlib  # noqa: F401  (before the runs: say what is missing at once)
        except ImportError:
            print("patchfeed bench: error: --plot needs matplotlib: pip install matplotlib",
                  file=sys.stderr)
            return 1

    tmp: str | None = None
    folder = args.dir
    if folder is None:
        tmp = tempfile.mkdtemp(prefix="patchfeed_bench_")
        folder = tmp
        patch = ",".join(map(str, args.patch))
        code = _run_cpp(
            ["demo", "--dir", folder, "--cases", str(args.cases), "--steps", "1",
             "--patch", patch, "--batch", "1"],
            quiet=True,
        )
        if code != 0:
            return code
    try:
        results = [_bench_run(folder, args, threads) for threads in sweep]
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    for result in results:
        if args.json:
            print(json.dumps({k: v for k, v in result.items() if k != "step_s"}))
        else:
            print(
                f"patchfeed bench: {result['steps']} batches of {result['batch']} x "
                f"{'x'.join(map(str, args.patch))}, {result['threads']} threads: "
                f"{result['samples_per_s']:.1f} samples/s, {result['mb_per_s']:.0f} MB/s, "
                f"{result['cpu_s_per_sample'] * 1e3:.1f} ms CPU/sample, "
                f"peak RSS {result['peak_rss_mb']:.0f} MB"
            )
    if args.plot:
        from patchfeed.show import plot_bench

        plot_bench(results, args.plot, f"{args.dir or 'synthetic cases'}: batches of "
                   f"{args.batch} x {'x'.join(map(str, args.patch))}")
        print(f"patchfeed bench: plot -> {args.plot}")
    return 0


def _bench_run(folder: str, args: argparse.Namespace, threads: int) -> dict:
    """One timed run: `args.steps` batches after `args.warmup`, each step's wall time kept."""
    from patchfeed.loader import Loader

    with Loader(folder, args.patch, args.batch, num_threads=threads,
                ring_size=args.ring, as_numpy=args.numpy, seed=0) as loader:
        it = iter(loader)
        for _ in range(args.warmup):
            next(it)
        t0, c0 = time.perf_counter(), time.process_time()
        nbytes = 0
        steps = []
        last = t0
        for _ in range(args.steps):
            batch = next(it)
            nbytes += sum(int(a.nbytes) for a in batch.values())
            del batch  # a training step is done with its batch here
            now = time.perf_counter()
            steps.append(now - last)
            last = now
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        samples = args.steps * loader.batch_size
        return {
            "samples_per_s": samples / wall,
            "mb_per_s": nbytes / wall / 1e6,
            "cpu_s_per_sample": cpu / samples,
            "samples_per_cpu_s": samples / cpu if cpu > 0 else float("inf"),
            "peak_rss_mb": _usage()["maxrss_mb"],
            "threads": loader.num_threads,
            "steps": args.steps,
            "batch": loader.batch_size,
            "patch": list(args.patch),
            "step_s": steps,
        }


def _usage() -> dict[str, float]:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return {"maxrss_mb": ru.ru_maxrss / 1024.0}


def _run_cpp(argv: Sequence[str], quiet: bool = False) -> int:
    sys.stdout.flush()
    sys.stderr.flush()
    if not quiet:
        return _core.run_cli(list(argv))
    # Silence the C++ command's stdout (fd 1) for helper runs; errors still reach stderr.
    saved = os.dup(1)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 1)
            return _core.run_cli(list(argv))
    finally:
        os.dup2(saved, 1)
        os.close(saved)


NNUNET_PATH_HELP = """\
usage: patchfeed nnunet-path

Prints the folder that holds nnUNetTrainerPatchfeed, the nnU-Net v2 trainer that draws its
training batches from patchfeed's loader. nnU-Net finds trainers outside its own package
through the nnUNet_extTrainer variable; set it to this folder. Takes no options.

example:
  nnUNet_extTrainer=$(patchfeed nnunet-path) \\
      nnUNetv2_train 1 3d_fullres 0 -tr nnUNetTrainerPatchfeed
"""


def _nnunet_path(argv: Sequence[str]) -> int:
    if any(a in ("-h", "--help") for a in argv):
        sys.stdout.write(NNUNET_PATH_HELP)
        return 0
    if argv:
        sys.stderr.write(f"patchfeed nnunet-path: takes no arguments, got {' '.join(argv)}\n"
                         "(patchfeed nnunet-path --help explains it)\n")
        return 2
    from patchfeed.nnunet import trainer_path

    print(trainer_path())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Runs `patchfeed ARGV...` and returns the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "bench":
        return _bench(args[1:])
    if args and args[0] == "convert":
        from patchfeed.convert import main as convert_main  # nibabel only when converting

        return convert_main(args[1:])
    if args and args[0] == "show":
        from patchfeed.show import main as show_main  # matplotlib only when drawing

        return show_main(args[1:])
    if args and args[0] == "nnunet-path":
        return _nnunet_path(args[1:])
    code = _run_cpp(args)
    if not args or args[0] in ("-h", "--help", "help"):
        # The C++ usage lists its own commands; bench, nnunet-path and convert are the package's.
        sys.stdout.write(BENCH_USAGE) if code == 0 else sys.stderr.write(BENCH_USAGE)
    return code


if __name__ == "__main__":
    sys.exit(main())
