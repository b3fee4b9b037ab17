// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/open_array.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "codec/b2nd/nd_reader.h"
#include "codec/precomputed/reader.h"
#include "codec/zarr/ome_zarr.h"
#include "codec/zarr/zarr_reader.h"
#include "codec/zarr/zarr_v3_meta.h"
#include "common/str_cat.h"
#include "storage/store.h"

namespace patchfeed::codec {

namespace {

// Whether `path` is a file; a store that cannot tell (a refused request) counts as no: the
// open that follows names what is wrong.
bool IsFile(const storage::Store& store, const std::string& path) {
  const Result<storage::EntryKind> kind = store.Stat(path);
  return kind.ok() && *kind == storage::EntryKind::kFile;
}

Result<std::unique_ptr<ArrayReader>> OpenZarrArray(const std::string& dir,
                                                   std::shared_ptr<const storage::Store> store) {
  PATCHFEED_ASSIGN_OR_RETURN(ZarrArrayReader r, ZarrArrayReader::Open(dir, std::move(store)));
  return std::unique_ptr<ArrayReader>(std::make_unique<ZarrArrayReader>(std::move(r)));
}

// Level `level` of the OME-Zarr image group `dir` whose multiscales are in `attrs` (from `file`).
Result<std::string> OmeLevelPath(const std::string& dir, const std::string& file,
                                 const std::string& attrs, int level) {
  auto paths = ParseOmeMultiscalePaths(attrs);
  if (!paths.ok()) {
    if (paths.status().code() == StatusCode::kNotFound) {
      return InvalidArgumentError(
          StrCat(dir, ": a zarr group, not an array (and no OME-Zarr multiscales in ", file, ")"));
    }
    return paths.status().WithContext(file);
  }
  if (level < 0 || level >= static_cast<int>(paths->size())) {
    return InvalidArgumentError(StrCat(dir, ": OME-Zarr level ", level, " of ", paths->size(),
                                       " (levels 0 to ", paths->size() - 1, ")"));
  }
  return dir + "/" + (*paths)[static_cast<size_t>(level)];
}

}  // namespace

bool IsZarrPath(const std::string& path, const storage::Store& store) {
  return IsFile(store, path + "/.zarray") || IsFile(store, path + "/zarr.json") ||
         IsFile(store, path + "/.zgroup");
}

Result<std::unique_ptr<ArrayReader>> OpenArray(const std::string& path, FrameOpenOptions options,
                                               int ome_level) {
  std::string dir = path;
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  const storage::Store& store = *options.store;
  // A file is a `.b2nd` frame: a remote store answers that in one request, before any probe
  // for zarr's metadata.
  PATCHFEED_ASSIGN_OR_RETURN(const storage::EntryKind kind, store.Stat(dir));
  std::string level_path;
  if (kind == storage::EntryKind::kFile) {
    if (ome_level != 0) {
      return InvalidArgumentError(
          StrCat(path, ": an OME-Zarr level was asked for, but this is not a zarr group"));
    }
    PATCHFEED_ASSIGN_OR_RETURN(NdArrayReader r, NdArrayReader::Open(dir, options));
    return std::unique_ptr<ArrayReader>(std::make_unique<NdArrayReader>(std::move(r)));
  }
  if (IsFile(store, dir + "/.zarray")) {
    level_path = dir;
  } else if (IsFile(store, dir + "/zarr.json")) {
    PATCHFEED_ASSIGN_OR_RETURN(const std::string text,
                               ReadZarrMetadataFile(store, dir + "/zarr.json"));
    PATCHFEED_ASSIGN_OR_RETURN(const std::string node, ZarrV3NodeType(text), dir + "/zarr.json");
    if (node != "group") {
      level_path = dir;
    } else {
      PATCHFEED_ASSIGN_OR_RETURN(level_path,
                                 OmeLevelPath(dir, dir + "/zarr.json", text, ome_level));
      ome_level = 0;
    }
  } else if (IsFile(store, dir + "/.zgroup")) {
    std::string attrs = "{}";
    if (IsFile(store, dir + "/.zattrs")) {
      PATCHFEED_ASSIGN_OR_RETURN(attrs, ReadZarrMetadataFile(store, dir + "/.zattrs"));
    }
    PATCHFEED_ASSIGN_OR_RETURN(level_path, OmeLevelPath(dir, dir + "/.zattrs", attrs, ome_level));
    ome_level = 0;
  } else if (IsFile(store, dir + "/info")) {
    // A Neuroglancer precomputed layer: the level is the scale's index.
    PATCHFEED_ASSIGN_OR_RETURN(
        precomputed::PrecomputedReader r,
        precomputed::PrecomputedReader::Open(dir, options.store, ome_level, options.fill_missing));
    return std::unique_ptr<ArrayReader>(
        std::make_unique<precomputed::PrecomputedReader>(std::move(r)));
  } else if (const std::optional<std::string> layer = precomputed::LayerOfScaleFolder(dir, store);
             layer.has_value() && !IsFile(store, dir + "/chunks.b2frame")) {
    // `<layer>/<scale key>`: the folder of one scale's chunks names that scale.
    if (ome_level != 0) {
      return InvalidArgumentError(
          StrCat(path, ": names a precomputed scale by its key; a level cannot be added"));
    }
    PATCHFEED_ASSIGN_OR_RETURN(
        precomputed::PrecomputedReader r,
        precomputed::PrecomputedReader::Open(*layer, options.store, dir.substr(layer->size() + 1),
                                             options.fill_missing));
    return std::unique_ptr<ArrayReader>(
        std::make_unique<precomputed::PrecomputedReader>(std::move(r)));
  } else {
    if (ome_level != 0) {
      return InvalidArgumentError(
          StrCat(path, ": an OME-Zarr level was asked for, but this is not a zarr group"));
    }
    PATCHFEED_ASSIGN_OR_RETURN(NdArrayReader r, NdArrayReader::Open(path, options));
    return std::unique_ptr<ArrayReader>(std::make_unique<NdArrayReader>(std::move(r)));
  }
  if (ome_level != 0) {
    return InvalidArgumentError(
        StrCat(path, ": an OME-Zarr level was asked for, but this is a zarr array"));
  }
  // A level is an array in a subfolder (a multiscales path may itself name a deeper group).
  if (!IsFile(store, level_path + "/.zarray") && !IsFile(store, level_path + "/zarr.json"))
    return NotFoundError(StrCat(level_path, ": no zarr array there"));
  return OpenZarrArray(level_path, options.store);
}

}  // namespace patchfeed::codec
