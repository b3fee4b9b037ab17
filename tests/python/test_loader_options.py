# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""patchfeed.Loader's keywords are the C++ loader's options (bindings/loader_options.cc): the
Python signature, the `_core.pyi` stub of `_core.Loader` and the defaults read from a default
LoaderConfig agree on every name, default and (where both have it) annotation, except for the
parameters listed below with the reason. Bad values are errors naming the option."""

from __future__ import annotations

import ast
import inspect
import pathlib
import re

import patchfeed
import patchfeed._core as core
import pytest
from loader_testlib import PATCH, write_dataset

REQUIRED = inspect.Parameter.empty

# Parameters of patchfeed.Loader that are not C++ options.
PYTHON_ONLY = {
    "device": "the CUDA copy is done by torch in patchfeed/loader.py",
    "as_numpy": "NumPy arrays instead of torch tensors: a choice made in Python",
    "pad_values": "goes, paired with each array name, into the C++ option `arrays`",
    "batch_transform": "a Python callable run on the consumer's thread on delivered tensors",
    "storage_options": "make the store a dataset folder URL leads to (Dataset.from_nnunet_folder)",
}
# Options on both sides whose Python value is resolved before the call, so the Python default
# differs from the C++ one: {name: (Python default, why)}.
RESOLVED_IN_PYTHON = {
    "dataset": (REQUIRED, "a path becomes a Dataset (Dataset.from_nnunet_folder)"),
    "arrays": (None, "array names, None for all of the dataset's; C++ takes (name, pad) pairs"),
    "rank": (None, "None: torch.distributed's rank when a process group is up, else 0"),
    "world_size": (None, "None: torch.distributed's world size when a process group is up"),
    "foreground_locations": ("auto", "'auto' reads nnU-Net's class_locations from the .pkl "
                             "files in Python; C++ takes the resulting indexes"),
}
# C++ options that are not keywords of patchfeed.Loader.
CXX_ONLY = {
    "start_epoch": "set by Loader.load_state_dict when a new seed rebuilds the loader",
    "start_batch": "set by Loader.load_state_dict when a new seed rebuilds the loader",
}


def python_params() -> dict[str, inspect.Parameter]:
    params = dict(inspect.signature(patchfeed.Loader.__init__).parameters)
    del params["self"]
    return params


def stub_params() -> dict[str, tuple[str, object]]:
    """{name: (annotation, default or REQUIRED)} of `_core.Loader.__init__` in `_core.pyi`."""
    path = pathlib.Path(patchfeed.__file__).parent / "_core.pyi"
    tree = ast.parse(path.read_text(), str(path))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Loader")
    init = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    args = init.args
    assert [a.arg for a in args.posonlyargs + args.args] == ["self"], "keywords only"
    assert args.vararg is None and args.kwarg is None, "every option typed, no **options"
    out = {}
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        value = REQUIRED
        if default is not None:
            value = eval(compile(ast.Expression(default), str(path), "eval"), {})  # noqa: S307
        out[arg.arg] = (ast.unparse(arg.annotation), value)
    return out


def cxx_defaults() -> dict[str, object]:
    """{name: default or REQUIRED} for every C++ option."""
    defaults = core.loader_option_defaults()
    assert set(defaults) <= set(core.loader_options())
    return {name: defaults.get(name, REQUIRED) for name in core.loader_options()}


def same(a: object, b: object) -> bool:
    # 0 == 0.0 == False in Python; a default must match in type as well.
    return a is b or (type(a) is type(b) and a == b)


def test_the_lists_above_are_current():
    py, cxx = set(python_params()), set(core.loader_options())
    assert set(PYTHON_ONLY) <= py - cxx
    assert set(CXX_ONLY) <= cxx - py
    assert set(RESOLVED_IN_PYTHON) <= py & cxx


def test_option_names_agree():
    names = core.loader_options()
    assert len(names) == len(set(names)), "an option is in the C++ table twice"
    # A C++ option without a Python keyword (or the reverse) needs one, or a line above.
    assert set(python_params()) - set(PYTHON_ONLY) == set(names) - set(CXX_ONLY)
    assert set(stub_params()) == set(names)


def test_defaults_agree():
    cxx = cxx_defaults()
    stub = stub_params()
    for name, default in cxx.items():
        assert same(stub[name][1], default), (name, "_core.pyi", stub[name][1], "C++", default)
    for name, param in python_params().items():
        if name in PYTHON_ONLY:
            continue
        want = RESOLVED_IN_PYTHON[name][0] if name in RESOLVED_IN_PYTHON else cxx[name]
        assert same(param.default, want), (name, "patchfeed.Loader", param.default, want)


def test_annotations_agree():
    # Both sides take the same Python values, except where Python resolves them first.
    stub = stub_params()
    for name, param in python_params().items():
        if name in PYTHON_ONLY or name in RESOLVED_IN_PYTHON:
            continue
        written = ast.unparse(ast.parse(str(param.annotation), mode="eval"))
        assert written == stub[name][0], (name, written, stub[name][0])


@pytest.fixture(scope="module")
def dataset_dir(tmp_path_factory):
    return write_dataset(tmp_path_factory.mktemp("loader_options"))


def test_resolved_defaults_fall_back_to_the_cxx_ones(dataset_dir):
    # Without a torch.distributed process group, rank and world size are the C++ defaults.
    defaults = core.loader_option_defaults()
    with patchfeed.Loader(dataset_dir, PATCH, num_threads=1) as loader:
        assert (loader.rank, loader.world_size) == (defaults["rank"], defaults["world_size"])


def test_every_default_is_accepted_back(dataset_dir):
    # What loader_option_defaults() reads back is what each option's conversion takes.
    dataset = core.Dataset.from_nnunet_folder(str(dataset_dir))
    options = {**core.loader_option_defaults(), "num_threads": 1}
    loader = core.Loader(dataset=dataset, patch_size=list(PATCH), **options)
    try:
        batch = loader.next()
        assert batch is not None and batch.names == ["image", "seg"]
        assert loader.state()["next_batch"] == 1
    finally:
        loader.close()


def test_unknown_option_is_a_type_error_naming_it(dataset_dir):
    dataset = core.Dataset.from_nnunet_folder(str(dataset_dir))
    with pytest.raises(TypeError, match="unexpected loader option 'num_slots'"):
        core.Loader(dataset=dataset, patch_size=list(PATCH), num_slots=3)


@pytest.mark.parametrize(
    "name,value",
    [("batch_size", "two"), ("patch_size", 16), ("seed", None), ("need_to_pad", [1.5])],
)
def test_wrong_type_is_a_type_error_naming_the_option(dataset_dir, name, value):
    kw = {"num_threads": 1, "patch_size": PATCH, name: value}
    with pytest.raises(TypeError, match=f"option '{name}' has the wrong type"):
        patchfeed.Loader(dataset_dir, **kw)


@pytest.mark.parametrize(
    "name,allowed",
    [
        ("epoch_mode", ["infinite", "with_replacement", "without_replacement"]),
        ("foreground", ["auto", "on", "off"]),
        ("io_mode", ["mmap", "pread"]),
        ("error_policy", ["fail", "skip"]),
    ],
)
def test_enum_options_take_their_names_only(dataset_dir, name, allowed):
    for value in allowed:
        patchfeed.Loader(dataset_dir, PATCH, num_threads=1, **{name: value}).close()
    listed = ", ".join(f"'{a}'" for a in allowed[:-1]) + f" or '{allowed[-1]}'"
    for bad in ("sometimes", 1):
        message = f"{name} must be {listed}, not {bad!r}"
        with pytest.raises(ValueError, match=re.escape(message)):
            patchfeed.Loader(dataset_dir, PATCH, num_threads=1, **{name: bad})


def test_options_are_copied_not_shared_with_the_caller(dataset_dir):
    """The options are kept to rebuild the loader when a state with another seed is loaded:
    a later change to a list the caller passed, or a consumed iterator, must not reach it."""
    patch = list(PATCH)
    loader = patchfeed.Loader(str(dataset_dir), patch, 2, seed=1, as_numpy=True,
                              need_to_pad=iter([2, 2, 2]))
    patch[0] = 4
    state = loader.state_dict()
    state["seed"] = 2
    loader.load_state_dict(state)  # rebuilds from the kept options
    batch = loader.next_batch()
    assert batch["image"].shape[2:] == PATCH
    loader.close()
