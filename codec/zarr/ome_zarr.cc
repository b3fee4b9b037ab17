// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/zarr/ome_zarr.h"

#include <algorithm>
#include <set>
#include <string>

#include "codec/internal/metadata_json.h"
#include "common/str_cat.h"

namespace patchfeed::codec {
namespace {

using internal_codec::Find;
using internal_codec::Json;
using internal_codec::Quoted;

Status Bad(std::string_view what) { return DataLossError(StrCat("OME-Zarr attributes: ", what)); }

// Why `path` is not a relative path inside the group (an empty string when it is one).
std::string_view PathProblem(std::string_view path) {
  if (path.empty()) {
    return "is empty";
  }
  if (path.front() == '/') {
    return "is absolute";
  }
  if (path.find('\\') != std::string_view::npos) {
    return "holds a backslash";
  }
  if (path.find('\0') != std::string_view::npos) {
    return "holds a NUL character";
  }
  size_t start = 0;
  while (true) {
    const size_t end = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") {
      return "has an empty, \".\" or \"..\" component";
    }
    if (end == path.size()) {
      return "";
    }
    start = end + 1;
  }
}

}  // namespace

Result<std::vector<std::string>> ParseOmeMultiscalePaths(std::string_view attrs_json) {
  PATCHFEED_ASSIGN_OR_RETURN(const Json doc,
                             internal_codec::ParseJsonObject(attrs_json, "OME-Zarr attributes"));
  // v0.4 and older: .zattrs holds "multiscales"; v0.5: zarr.json's attributes.ome does.
  std::string field = "multiscales";
  const Json* multiscales = Find(doc, "multiscales");
  if (multiscales == nullptr) {
    const Json* attributes = Find(doc, "attributes");
    const Json* ome = attributes != nullptr ? Find(*attributes, "ome") : nullptr;
    multiscales = ome != nullptr ? Find(*ome, "multiscales") : nullptr;
    field = "attributes.ome.multiscales";
  }
  if (multiscales == nullptr) {
    return NotFoundError("OME-Zarr attributes: no multiscales (not an OME-Zarr image group)");
  }
  if (!multiscales->is_array() || multiscales->empty()) {
    return Bad(StrCat(field, " must be a non-empty list"));
  }
  const Json* datasets = Find((*multiscales)[0], "datasets");
  field += "[0].datasets";
  if (datasets == nullptr || !datasets->is_array() || datasets->empty()) {
    return Bad(StrCat(field, " must be a non-empty list"));
  }
  std::vector<std::string> paths;
  std::set<std::string_view> seen;
  for (size_t i = 0; i < datasets->size(); ++i) {
    const Json* path = Find((*datasets)[i], "path");
    const std::string at = StrCat(field, "[", i, "].path");
    if (path == nullptr || !path->is_string()) {
      return Bad(StrCat(at, " must be a string"));
    }
    const auto& p = path->get_ref<const std::string&>();
    if (const std::string_view problem = PathProblem(p); !problem.empty()) {
      return Bad(StrCat(at, " ", Quoted(p, '"'), " ", problem));
    }
    if (!seen.insert(p).second) {
      return Bad(StrCat(at, " ", Quoted(p, '"'), " repeats an earlier dataset"));
    }
    paths.push_back(p);
  }
  return paths;
}

}  // namespace patchfeed::codec
