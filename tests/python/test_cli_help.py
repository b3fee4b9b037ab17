# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""What the `patchfeed` command tells its users: `--help`/`-h` for every subcommand, the
version, messages in words (no status-code prefixes), the message for a folder that holds no
array, and `info --stats` against NumPy."""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys
import tomllib

import blosc2
import numpy as np
import patchfeed
import pytest
import zarr
from loader_testlib import env_with_package

REPO = pathlib.Path(__file__).resolve().parents[2]
ZSTD_DATA = REPO / "tests" / "codec" / "testdata" / "zstd"
STATUS_PREFIX = re.compile(r"\b(DATA_LOSS|NOT_FOUND|INVALID_ARGUMENT|UNIMPLEMENTED|"
                           r"RESOURCE_EXHAUSTED|INTERNAL|CANCELLED|IO_ERROR|OUT_OF_RANGE):")

# Each C++ command and the options its help must describe.
CPP_OPTIONS = {
    "demo": ["--dir", "--keep", "--cases", "--steps", "--threads", "--batch", "--patch", "--io",
             "--io-depth", "--codec", "--mb"],
    "compress": ["--typesize", "--codec", "--clevel", "--filter", "--split", "--blocksize",
                 "--blosc1", "--dict"],
    "decompress": ["--max-bytes"],
    "info": ["--level", "--stats"],
    "read": ["--out", "--box", "--pad", "--npy", "--io", "--level"],
}


def cli(cli_path, *args):
    return subprocess.run([str(cli_path), *map(str, args)], capture_output=True, text=True,
                          timeout=120, check=False)


def package(*args):
    return subprocess.run([sys.executable, "-m", "patchfeed", *map(str, args)],
                          capture_output=True, text=True, timeout=120, check=False,
                          env=env_with_package())


@pytest.mark.parametrize("flag", ["--help", "-h"])
@pytest.mark.parametrize("command", sorted(CPP_OPTIONS))
def test_every_cpp_command_explains_itself(cli_path, command, flag):
    proc = cli(cli_path, command, flag)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith(f"usage: patchfeed {command}")
    assert "\noptions:\n" in out and "\nexample:\n" in out
    for option in CPP_OPTIONS[command]:
        assert re.search(rf"^\s+{re.escape(option)}\b", out, re.M), f"{option} not described"
    # The example runs the command it documents.
    example = out.split("\nexample:\n")[1]
    assert f"patchfeed {command} " in example
    # Help wins over other arguments, even ones the command would refuse.
    assert cli(cli_path, command, "no-such-file", flag, "--bogus").stdout == out


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_python_commands_explain_themselves(flag):
    nnunet = package("nnunet-path", flag)
    assert nnunet.returncode == 0, nnunet.stderr
    assert nnunet.stdout.startswith("usage: patchfeed nnunet-path")
    assert "nnUNet_extTrainer" in nnunet.stdout and "example:" in nnunet.stdout
    for command in ("bench", "convert"):
        proc = package(command, flag)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith(f"usage: patchfeed {command}")


def test_nnunet_path_prints_the_trainer_folder_and_refuses_arguments():
    proc = package("nnunet-path")
    assert proc.returncode == 0
    assert (pathlib.Path(proc.stdout.strip()) / "nnUNetTrainerPatchfeed.py").is_file()
    bad = package("nnunet-path", "extra")
    assert bad.returncode == 2
    assert "takes no arguments" in bad.stderr and "--help" in bad.stderr


def _cmake_version() -> str:
    text = (REPO / "CMakeLists.txt").read_text()
    return re.search(r"project\(patchfeed VERSION ([0-9.]+)", text).group(1)


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_is_the_one_cmake_declares_everywhere(cli_path, flag):
    version = _cmake_version()
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert pyproject == version
    assert patchfeed.__version__ == version
    binary = cli(cli_path, flag)
    assert (binary.returncode, binary.stdout) == (0, f"patchfeed {version}\n")
    module = package(flag)
    assert (module.returncode, module.stdout) == (0, f"patchfeed {version}\n")


def test_failures_are_worded_without_status_codes(cli_path, tmp_path):
    missing = cli(cli_path, "decompress", tmp_path / "missing.blosc", tmp_path / "out")
    corrupt = cli(cli_path, "decompress", ZSTD_DATA / "zstd_flip_chunk.blosc", tmp_path / "out")
    bad_option = cli(cli_path, "read", tmp_path / "x.b2nd", "--out", "-", "--bogus")
    bad_info = cli(cli_path, "info", tmp_path / "missing.b2nd")
    for proc, command in ((missing, "decompress"), (corrupt, "decompress"),
                          (bad_option, "read"), (bad_info, "info")):
        assert proc.returncode != 0
        assert proc.stderr.startswith(f"patchfeed {command}: "), proc.stderr
        assert not STATUS_PREFIX.search(proc.stderr), proc.stderr
    assert "missing.blosc" in missing.stderr and "cannot open" in missing.stderr
    assert "zstd stream is corrupt" in corrupt.stderr
    assert "unknown option --bogus" in bad_option.stderr
    for option in CPP_OPTIONS["read"]:
        assert option in bad_option.stderr
    assert "patchfeed read --help" in bad_option.stderr
    assert bad_option.returncode == 2


@pytest.mark.parametrize("command", ["info", "read"])
def test_a_folder_without_an_array_says_so(cli_path, tmp_path, command):
    folder = tmp_path / "not_an_array"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello")
    args = [command, folder] + (["--out", "-"] if command == "read" else [])
    proc = cli(cli_path, *args)
    assert proc.returncode == 1
    assert proc.stderr == (
        f"patchfeed {command}: {folder} is a folder but not a zarr array, OME-Zarr image or "
        "sparse .b2nd frame (no .zarray, zarr.json or chunks.b2frame in it)\n")


# --- info --stats -------------------------------------------------------------------------

STATS_DTYPES = ["float16", "float32", "float64", "int8", "int16", "uint16", "int32", "uint32",
                "int64", "uint64", "uint8", "bool"]


def _values(dtype: str) -> np.ndarray:
    rng = np.random.default_rng(sum(map(ord, dtype)))
    shape = (9, 13, 7)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind == "f":
        a = (rng.normal(0, 50, shape)).astype(dtype)
        a[1, 2, 3] = np.nan
        a[4, 5, 6] = np.nan
        a[0, 0, 0] = np.inf
        a[8, 12, 6] = -np.inf
        a[2, 7, 1] = -np.inf
        return a
    info = np.iinfo(dtype)
    a = rng.integers(info.min // 2, info.max // 2, shape, dtype=dtype, endpoint=True)
    a[3, 3, 3] = info.min
    a[5, 1, 0] = info.max
    return a


def _expected(a: np.ndarray) -> dict:
    flat = a.ravel()
    if a.dtype.kind == "f":
        finite = flat[np.isfinite(flat)].astype(np.float64)
        return {"count": flat.size, "nan": int(np.isnan(flat).sum()),
                "posinf": int(np.isposinf(flat).sum()), "neginf": int(np.isneginf(flat).sum()),
                "min": float(finite.min()), "max": float(finite.max()),
                "mean": float(finite.mean())}
    values = flat.astype(object) if a.dtype.kind in "iu" else flat.astype(int)
    return {"count": flat.size, "nan": 0, "posinf": 0, "neginf": 0,
            "min": int(min(values)), "max": int(max(values)),
            "mean": float(sum(int(v) for v in values) / flat.size)}


def _check(stats: dict, expected: dict):
    for key in ("count", "nan", "posinf", "neginf", "min", "max"):
        assert stats[key] == expected[key], key
    assert stats["mean"] == pytest.approx(expected["mean"], rel=1e-12, abs=1e-9)


def _write(kind: str, a: np.ndarray, path: pathlib.Path) -> pathlib.Path:
    if kind == "b2nd":
        target = path / "a.b2nd"
        blosc2.asarray(a, urlpath=str(target), mode="w", chunks=(4, 5, 7), blocks=(2, 5, 3))
        return target
    target = path / f"a_{kind}.zarr"
    arr = zarr.create_array(str(target), shape=a.shape, dtype=a.dtype, chunks=(4, 5, 3),
                            zarr_format=2 if kind == "zarr2" else 3, fill_value=0)
    arr[...] = a
    return target


@pytest.mark.parametrize("kind", ["b2nd", "zarr2", "zarr3"])
@pytest.mark.parametrize("dtype", STATS_DTYPES)
def test_info_stats_match_numpy(cli_path, tmp_path, kind, dtype):
    a = _values(dtype)
    path = _write(kind, a, tmp_path)
    proc = cli(cli_path, "info", path, "--stats")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["shape"] == list(a.shape)
    _check(doc["stats"], _expected(a))


def test_info_stats_of_an_all_nan_array_have_no_extremes(cli_path, tmp_path):
    a = np.full((5, 6), np.nan, dtype=np.float32)
    path = tmp_path / "nan.b2nd"
    blosc2.asarray(a, urlpath=str(path), mode="w", chunks=(2, 3), blocks=(1, 3))
    stats = json.loads(cli(cli_path, "info", path, "--stats").stdout)["stats"]
    assert stats == {"count": 30, "min": None, "max": None, "mean": None, "nan": 30,
                     "posinf": 0, "neginf": 0}


def test_info_without_stats_reads_no_data(cli_path, tmp_path):
    path = _write("b2nd", _values("float32"), tmp_path)
    assert "stats" not in json.loads(cli(cli_path, "info", path).stdout)
