// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_BINDINGS_AUGMENT_OPTIONS_H_
#define PATCHFEED_BINDINGS_AUGMENT_OPTIONS_H_

// The `augmentation` dict shared by patchfeed.Loader and patchfeed.augment.NnUNetAugmenter.

#include <pybind11/pybind11.h>

#include "loader/loader.h"

namespace patchfeed::internal_python {

/// nnU-Net's defaults for the dict's "patch_size", "max_angle" and "dummy_2d", then the
/// probabilities and options it names (patchfeed.Loader's docstring lists them). ValueError
/// for a missing patch size or an unknown key.
loader::AugmentOptions AugmentOptionsFromDict(const pybind11::dict& d);

}  // namespace patchfeed::internal_python

#endif  // PATCHFEED_BINDINGS_AUGMENT_OPTIONS_H_
