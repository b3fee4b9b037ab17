// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_BINDINGS_LOADER_OPTIONS_H_
#define PATCHFEED_BINDINGS_LOADER_OPTIONS_H_

/// \file
/// The keywords of _core.Loader: one table, one entry per LoaderConfig option, named as
/// patchfeed.Loader's keyword. Each entry converts a Python value into its field (nested
/// `sampler.` and `foreground.` fields included) and reads the field's default back as the
/// Python value that is the keyword's default, so the C++ defaults are stated once, in
/// LoaderConfig, and tests/python/test_loader_options.py checks that patchfeed.Loader's
/// signature and the `.pyi` stub agree with them.
///
/// Every enum's Python spelling is written once, here: a value outside it is a ValueError
/// naming the option and the allowed values; a value of the wrong type is a TypeError naming
/// the option. The functions need the GIL.

#include <pybind11/pybind11.h>

#include "loader/loader.h"

namespace patchfeed::internal_python {

/// A LoaderConfig from _core.Loader's keyword arguments; options not given keep LoaderConfig's
/// defaults. TypeError for a name the table does not have.
loader::LoaderConfig LoaderConfigFromKwargs(const pybind11::kwargs& kwargs);

/// Every option's name, in table order (patchfeed.Loader's keyword order).
pybind11::list LoaderOptionNames();

/// {name: default} for every option that has a default: a default-constructed LoaderConfig's
/// values as Python values. The required options (`dataset`, `patch_size`) are absent.
pybind11::dict LoaderOptionDefaults();

}  // namespace patchfeed::internal_python

#endif  // PATCHFEED_BINDINGS_LOADER_OPTIONS_H_
