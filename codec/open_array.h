// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_OPEN_ARRAY_H_
#define PATCHFEED_CODEC_OPEN_ARRAY_H_

/// \file
/// The one place that opens an array by its format: a `.b2nd` frame (b2nd/), a zarr v2/v3
/// array or OME-Zarr image (zarr/), a Neuroglancer precomputed layer (precomputed/), each as
/// the shared ArrayReader (array_reader.h). The only file at the codec's root that includes
/// the format folders. Stateless functions; safe to call concurrently.

#include <memory>
#include <string>

#include "codec/array_reader.h"
#include "codec/b2nd/frame_reader.h"
#include "common/result.h"
#include "storage/store.h"

namespace patchfeed::codec {

/// Whether `path` is a directory OpenArray reads as zarr (it holds `.zarray`, `zarr.json` or
/// `.zgroup`).
bool IsZarrPath(const std::string& path, const storage::Store& store = *storage::LocalFiles());

/// Opens the array at `path`, whichever its format: a directory with a `.zarray` (zarr v2) or
/// a `zarr.json` of an array (zarr v3); an OME-Zarr image group (its highest-resolution level;
/// name a level as `<group>/<path>`); otherwise a `.b2nd` frame (a file or a sparse-frame
/// directory). `options` apply to every file the array reads, and say which store `path` is
/// in (local files by default; a remote store's paths are URLs). `ome_level` picks another
/// level of an OME-Zarr group by its index in the group's multiscales (0: the highest
/// resolution). A folder with an `info` is a Neuroglancer precomputed layer
/// (precomputed/reader.h); `ome_level` is then the index of its scale.
Result<std::unique_ptr<ArrayReader>> OpenArray(const std::string& path,
                                               FrameOpenOptions options = {}, int ome_level = 0);

}  // namespace patchfeed::codec

#endif  // PATCHFEED_CODEC_OPEN_ARRAY_H_
