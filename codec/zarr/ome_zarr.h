// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_ZARR_OME_ZARR_H_
#define PATCHFEED_CODEC_ZARR_OME_ZARR_H_

/// \file
/// OME-Zarr (OME-NGFF) image groups: where the arrays of a multiscale pyramid live, from the
/// group's attributes (https://ngff.openmicroscopy.org/0.4/#multiscale-md and /0.5/). Only the
/// dataset paths are read; axes, coordinate transformations and the rest are left to callers.
/// The paths are untrusted: each is a relative path inside the group, checked before a caller
/// joins it to anything. Stateless functions; safe to call concurrently.

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace patchfeed::codec {

/// The dataset paths of the first multiscale of an OME-Zarr image group, highest resolution
/// first, from either a v0.4 (or older) `.zattrs` document ({"multiscales": [{"datasets":
/// [{"path": "0"}, ...]}]}) or a v0.5 group `zarr.json` (the same list under
/// attributes.ome.multiscales). kNotFound when the document has no multiscales; kDataLoss
/// naming the field when it is malformed or a path is empty, absolute, holds a backslash, an
/// empty, "." or ".." component or a NUL, or repeats an earlier path.
Result<std::vector<std::string>> ParseOmeMultiscalePaths(std::string_view attrs_json);

}  // namespace patchfeed::codec

#endif  // PATCHFEED_CODEC_ZARR_OME_ZARR_H_
