// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/dataset.h"

#include <algorithm>
#include <set>
#include <utility>

#include "codec/blosc/chunk_format.h"
#include "codec/open_array.h"
#include "common/str_cat.h"

namespace patchfeed::loader {

namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

Result<Dataset> Dataset::FromNnUNetFolder(const std::string& folder,
                                          std::shared_ptr<const storage::Store> store) {
  return FromFolder(folder, {{"image", ".b2nd"}, {"seg", "_seg.b2nd"}}, std::move(store));
}

Result<Dataset> Dataset::FromFolder(const std::string& folder, std::vector<ArrayNaming> naming,
                                    std::shared_ptr<const storage::Store> store) {
  if (naming.empty()) {
    return InvalidArgumentError("dataset: no arrays named");
  }
  for (size_t i = 0; i < naming.size(); ++i) {
    if (naming[i].name.empty() || naming[i].suffix.empty()) {
      return InvalidArgumentError(StrCat("dataset: array ", i, " needs a name and a suffix"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (naming[j].name == naming[i].name || naming[j].suffix == naming[i].suffix) {
        return InvalidArgumentError("dataset: arrays '" + naming[j].name + "' and '" +
                                    naming[i].name + "' share a name or suffix");
      }
    }
  }
  // One listing serves the whole folder: on an object store it is one paged request, where a
  // look at every case's files would be one request each.
  Result<std::vector<std::string>> listed = store->List(folder);
  if (!listed.ok()) {
    return listed.status().code() == StatusCode::kNotFound
               ? NotFoundError("dataset folder " + folder + " does not exist")
               : listed.status().WithContext("dataset folder " + folder);
  }
  // A sparse frame is a folder; its name is matched without the listing's trailing '/'.
  std::set<std::string> names;
  for (std::string& name : *listed) {
    if (!name.empty() && name.back() == '/')
      name.pop_back();
    names.insert(std::move(name));
  }
  // Entry name -> array by longest suffix; ids of the first array.
  std::vector<std::string> ids;
  for (const std::string& name : names) {
    int best = -1;
    for (size_t i = 0; i < naming.size(); ++i) {
      if (EndsWith(name, naming[i].suffix) &&
          (best < 0 || naming[i].suffix.size() > naming[static_cast<size_t>(best)].suffix.size())) {
        best = static_cast<int>(i);
      }
    }
    if (best == 0 && name.size() > naming[0].suffix.size()) {
      ids.push_back(name.substr(0, name.size() - naming[0].suffix.size()));
    }
  }
  if (ids.empty()) {
    return InvalidArgumentError("dataset folder " + folder + " has no '*" + naming[0].suffix +
                                "' cases");
  }
  Dataset ds;
  ds.store_ = std::move(store);
  for (const auto& n : naming) {
    ds.array_names_.push_back(n.name);
  }
  for (std::string& id : ids) {
    CaseFiles c;
    for (const auto& n : naming) {
      std::string path = storage::JoinPath(folder, id + n.suffix);
      if (names.count(id + n.suffix) == 0) {
        return NotFoundError("dataset: case '" + id + "' has no '" + n.name + "' array (" + path +
                             " is missing)");
      }
      c.paths.push_back(std::move(path));
    }
    c.id = std::move(id);
    ds.cases_.push_back(std::move(c));
  }
  return ds;
}

Result<Dataset> Dataset::FromZarrGroup(const std::string& group, std::vector<std::string> arrays,
                                       std::shared_ptr<const storage::Store> store) {
  Result<std::vector<std::string>> listed = store->List(group);
  if (!listed.ok()) {
    return listed.status().code() == StatusCode::kNotFound
               ? NotFoundError("zarr group " + group + " does not exist")
               : listed.status().WithContext("zarr group " + group);
  }
  std::vector<std::string> entries;
  for (const std::string& name : *listed) {
    if (name.size() > 1 && name.back() == '/' && name[0] != '.')
      entries.push_back(name.substr(0, name.size() - 1));
  }
  std::vector<CaseFiles> cases;
  for (const std::string& name : entries) {
    const std::string dir = storage::JoinPath(group, name);
    CaseFiles c;
    c.id = name;
    if (arrays.empty()) {
      if (codec::IsZarrPath(dir, *store))
        c.paths.push_back(dir);
    } else {
      std::vector<std::string> missing;
      for (const std::string& a : arrays) {
        const std::string path = storage::JoinPath(dir, a);
        if (codec::IsZarrPath(path, *store)) {
          c.paths.push_back(path);
        } else {
          missing.push_back(a);
        }
      }
      if (!c.paths.empty() && !missing.empty()) {
        return NotFoundError(StrCat("zarr group ", group, ": case '", name, "' has no array '",
                                    missing[0], "' (", dir, "/", missing[0], ")"));
      }
      if (!missing.empty())
        continue;  // not a case: an entry with none of the arrays (e.g. a metadata group)
    }
    if (!c.paths.empty())
      cases.push_back(std::move(c));
  }
  if (cases.empty()) {
    return InvalidArgumentError(
        StrCat("zarr group ", group, " has no entry holding ",
               arrays.empty() ? std::string("a zarr array") : "the arrays asked for"));
  }
  if (arrays.empty())
    arrays.push_back("image");
  return FromList(std::move(arrays), std::move(cases), std::move(store));
}

Result<Dataset> Dataset::FromList(std::vector<std::string> array_names,
                                  std::vector<CaseFiles> cases,
                                  std::shared_ptr<const storage::Store> store) {
  if (array_names.empty()) {
    return InvalidArgumentError("dataset: no arrays named");
  }
  if (cases.empty()) {
    return InvalidArgumentError("dataset: no cases");
  }
  for (size_t i = 0; i < array_names.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (array_names[i] == array_names[j]) {
        return InvalidArgumentError("dataset: array name '" + array_names[i] + "' repeats");
      }
    }
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    if (cases[i].paths.size() != array_names.size()) {
      return InvalidArgumentError(StrCat("dataset: case ", i, " ('", cases[i].id, "') has ",
                                         cases[i].paths.size(), " paths for ", array_names.size(),
                                         " arrays"));
    }
    if (cases[i].id.empty()) {
      cases[i].id = "case_" + std::to_string(i);
    }
  }
  Dataset ds;
  ds.store_ = std::move(store);
  ds.array_names_ = std::move(array_names);
  ds.cases_ = std::move(cases);
  return ds;
}

int Dataset::array_index(std::string_view name) const {
  for (size_t i = 0; i < array_names_.size(); ++i) {
    if (array_names_[i] == name) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

ArrayProbe DescribeArray(const codec::ArrayReader& array) {
  const codec::ArrayFootprint f = array.Footprint();
  ArrayProbe p;
  p.geometry = array.geometry();
  p.dtype = array.dtype();
  p.compression_ratio = f.compression_ratio;
  p.open_state_bytes = f.open_state_bytes;
  p.block_bytes = f.block_bytes;
  p.chunk_bytes = f.chunk_bytes;
  p.whole_chunks = f.whole_chunks;
  return p;
}

}  // namespace patchfeed::loader
