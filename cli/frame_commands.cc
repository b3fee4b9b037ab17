// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// `patchfeed info PATH` (metadata as JSON) and `patchfeed read PATH --box ... --out OUT`, for
// `.b2nd` frames and zarr arrays (codec::OpenArray).

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/array_stats.h"
#include "cli/commands.h"
#include "cli/file_io.h"
#include "codec/b2nd/nd_reader.h"
#include "codec/dtype.h"
#include "codec/open_array.h"
#include "codec/precomputed/reader.h"
#include "codec/zarr/zarr_reader.h"
#include "common/str_cat.h"
#include "loader/box_read.h"
#include "storage/remote/store_for.h"

namespace patchfeed::cli {
namespace {

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

template <typename T>
std::string JsonList(const std::vector<T>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i)
    out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}

std::string JsonStrings(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i)
    out += (i ? ", " : "") + JsonString(v[i]);
  return out + "]";
}

std::string CodecNameOf(uint8_t compcode) {
  switch (compcode) {
    case 0:
    case 1:
    case 2:
    case 4:
    case 5:
      return std::string(codec::CodecName(static_cast<codec::Codec>(compcode)));
    default:
      return StrCat("codec ", compcode);
  }
}

// "a:b,c:d" with empty ends meaning the array's bounds; fewer entries than dimensions leave
// the rest whole. The ranges are in coordinates whose index 0 is at `origin` (zeros: indexes;
// a precomputed scale's voxel_offset for --absolute); the box returned is in indexes.
Result<codec::Box> ParseBox(const std::string& spec, const std::vector<int64_t>& shape,
                            const std::vector<int64_t>& origin) {
  codec::Box box;
  box.start = origin;
  box.stop = origin;
  for (size_t d = 0; d < shape.size(); ++d)
    box.stop[d] += shape[d];
  const auto to_indexes = [&]() {
    for (size_t d = 0; d < shape.size(); ++d) {
      box.start[d] -= origin[d];
      box.stop[d] -= origin[d];
    }
    return box;
  };
  if (spec.empty())
    return to_indexes();
  std::stringstream ss(spec);
  std::string part;
  size_t d = 0;
  while (std::getline(ss, part, ',')) {
    if (d >= shape.size())
      return InvalidArgumentError("--box has more ranges than dimensions");
    const auto colon = part.find(':');
    if (colon == std::string::npos) {
      return InvalidArgumentError("--box range '" + part + "' is not start:stop");
    }
    try {
      const std::string a = part.substr(0, colon), b = part.substr(colon + 1);
      size_t used = 0;
      if (!a.empty()) {
        box.start[d] = std::stoll(a, &used);
        if (used != a.size())
          throw std::invalid_argument(a);
      }
      if (!b.empty()) {
        box.stop[d] = std::stoll(b, &used);
        if (used != b.size())
          throw std::invalid_argument(b);
      }
    } catch (const std::exception&) {
      return InvalidArgumentError("--box range '" + part + "' is not start:stop");
    }
    if (box.stop[d] < box.start[d]) {
      return InvalidArgumentError("--box range '" + part + "' ends before it starts");
    }
    ++d;
  }
  return to_indexes();
}

std::vector<std::byte> NpyHeader(const std::string& dtype, const std::vector<int64_t>& shape) {
  std::string dict = "{'descr': '" + dtype + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) {
    dict +=
        std::to_string(shape[i]) + (shape.size() == 1 ? "," : (i + 1 < shape.size() ? ", " : ""));
  }
  dict += "), }";
  // Magic (6) + version (2) + length (2) + dict + padding + '\n', a multiple of 64 bytes.
  const size_t total = (10 + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - 10 - dict.size() - 1, ' ');
  dict += '\n';
  std::vector<std::byte> h;
  const char magic[] = "\x93NUMPY\x01\x00";
  for (int i = 0; i < 8; ++i)
    h.push_back(static_cast<std::byte>(magic[i]));
  h.push_back(static_cast<std::byte>(dict.size() & 0xFF));
  h.push_back(static_cast<std::byte>(dict.size() >> 8));
  for (char c : dict)
    h.push_back(static_cast<std::byte>(c));
  return h;
}

// --level N: an OME-Zarr group's level or a precomputed layer's scale; or --scale KEY|X,Y,Z: a
// precomputed layer's scale by key or resolution.
Result<int> ParseLevel(const ParsedArgs& args, const std::string& path,
                       const storage::Store& store) {
  const auto text = args.Get("level");
  if (const auto scale = args.Get("scale")) {
    if (text)
      return InvalidArgumentError("give a precomputed scale by --level or --scale, not both");
    PATCHFEED_ASSIGN_OR_RETURN(const codec::precomputed::Info info,
                               codec::precomputed::ReadInfo(path, store));
    Result<int> index = codec::precomputed::FindScale(info, *scale);
    if (!index.ok())
      return index.status().WithContext(storage::JoinPath(path, "info"));
    return index;
  }
  if (!text)
    return 0;
  try {
    size_t used = 0;
    const int level = std::stoi(*text, &used);
    if (used == text->size() && level >= 0)
      return level;
  } catch (const std::exception&) {
  }
  return InvalidArgumentError("--level expects a level number (0, 1, ...), got '" + *text + "'");
}

// The "stats" entry of `info --stats` (opening the array through the normal read path), or
// nothing without the flag.
Result<std::string> StatsEntry(const ParsedArgs& args, const codec::FrameOpenOptions& options,
                               int level) {
  if (!args.has_flag("stats"))
    return std::string();
  PATCHFEED_ASSIGN_OR_RETURN(const auto array,
                             codec::OpenArray(args.positional[0], options, level));
  PATCHFEED_ASSIGN_OR_RETURN(const std::string stats, ArrayStatsJson(*array));
  return ",\n  \"stats\": " + stats;
}

// What every array says about itself: the zarr arrays' `info`.
Status PrintArrayInfo(const codec::ArrayReader& array, const std::string& stats) {
  const codec::NdGeometry& g = array.geometry();
  std::string json = "{\n";
  auto add = [&](const std::string& key, const std::string& value) {
    json += (json.size() > 2 ? ",\n" : "") + std::string("  ") + JsonString(key) + ": " + value;
  };
  add("path", JsonString(array.path()));
  add("format", JsonString(array.format()));
  add("shape", JsonList(g.shape));
  add("dtype", JsonString(array.dtype()));
  add("chunks", JsonList(g.chunkshape));
  if (const auto* zarr = dynamic_cast<const codec::ZarrArrayReader*>(&array)) {
    add("sharded", zarr->sharded() ? "true" : "false");
    if (zarr->sharded())
      add("inner_chunks", JsonList(g.blockshape));
  }
  if (const auto* layer = dynamic_cast<const codec::precomputed::PrecomputedReader*>(&array)) {
    // The view is (C, z, y, x); the layer's own vectors are x first, as its info writes them.
    const codec::precomputed::Scale& s = layer->scale();
    add("axes", "[\"c\", \"z\", \"y\", \"x\"]");
    add("scale_key", JsonString(s.key));
    add("scales", std::to_string(layer->info().scales.size()));
    add("encoding", JsonString(s.encoding));
    add("origin", JsonList(array.origin()));
    add("voxel_offset_xyz",
        JsonList(std::vector<int64_t>(s.voxel_offset.begin(), s.voxel_offset.end())));
    std::string resolution = "[";
    for (size_t d = 0; d < 3; ++d) {
      resolution += d > 0 ? ", " : "";
      resolution += std::to_string(s.resolution[d]);
    }
    add("resolution_xyz", resolution + "]");
  }
  add("nchunks", std::to_string(g.nchunks));
  json += stats + "\n}\n";
  std::fputs(json.c_str(), stdout);
  return Status::Ok();
}

}  // namespace

Status RunInfo(const std::vector<std::string>& argv) {
  PATCHFEED_ASSIGN_OR_RETURN(const ParsedArgs args, ParseArgs(argv, {"level", "scale"}, {"stats"}));
  if (args.positional.size() != 1)
    return InvalidArgumentError("usage: patchfeed info PATH [--level N | --scale S] [--stats]");
  // A URL's credentials and endpoint come from the environment (docs/storage.md).
  codec::FrameOpenOptions options;
  PATCHFEED_ASSIGN_OR_RETURN(options.store, storage::StoreFor(args.positional[0]));
  PATCHFEED_ASSIGN_OR_RETURN(const int level, ParseLevel(args, args.positional[0], *options.store));
  if (codec::IsZarrPath(args.positional[0], *options.store) ||
      codec::precomputed::IsPrecomputedLayer(args.positional[0], *options.store) ||
      codec::precomputed::LayerOfScaleFolder(args.positional[0], *options.store) || level != 0) {
    // Zarr arrays and OME-Zarr groups; frames (b2nd or not) get the frame's own fields below.
    PATCHFEED_ASSIGN_OR_RETURN(const auto array,
                               codec::OpenArray(args.positional[0], options, level));
    PATCHFEED_ASSIGN_OR_RETURN(const std::string stats, StatsEntry(args, options, level));
    return PrintArrayInfo(*array, stats);
  }
  PATCHFEED_ASSIGN_OR_RETURN(const codec::FrameReader frame,
                             codec::FrameReader::Open(args.positional[0], options));
  const codec::FrameInfo& f = frame.info();
  std::vector<std::string> filters, metalayers;
  std::vector<int> filters_meta;
  for (size_t i = 0; i < f.filters.size(); ++i) {
    if (f.filters[i] == 0)
      continue;
    filters.push_back(codec::FilterName(f.filters[i]));
    filters_meta.push_back(f.filters_meta[i]);
  }
  for (const auto& m : f.metalayers)
    metalayers.push_back(m.first);
  std::string json = "{\n";
  auto add = [&](const std::string& key, const std::string& value) {
    json += (json.size() > 2 ? ",\n" : "") + std::string("  ") + JsonString(key) + ": " + value;
  };
  add("path", JsonString(frame.path()));
  add("sparse", f.sparse ? "true" : "false");
  if (const auto* content = f.metalayer("b2nd")) {
    auto parsed = codec::ParseB2ndMeta(*content);
    if (!parsed.ok())
      return parsed.status().WithContext(frame.path());
    const codec::B2ndMeta& meta = *parsed;
    add("shape", JsonList(meta.shape));
    add("dtype", JsonString(meta.dtype));
    add("chunks", JsonList(meta.chunkshape));
    add("blocks", JsonList(meta.blockshape));
  }
  add("typesize", std::to_string(f.typesize));
  add("codec", JsonString(CodecNameOf(f.compcode)));
  add("clevel", std::to_string(f.clevel));
  add("filters", JsonStrings(filters));
  add("filters_meta", JsonList(filters_meta));
  add("nchunks", std::to_string(f.nchunks));
  add("chunksize", std::to_string(f.chunksize));
  add("blocksize", std::to_string(f.blocksize));
  add("nbytes", std::to_string(f.nbytes));
  add("cbytes", std::to_string(f.cbytes));
  add("metalayers", JsonStrings(metalayers));
  add("vlmetalayers", JsonStrings(f.vlmetalayer_names));
  PATCHFEED_ASSIGN_OR_RETURN(const std::string stats, StatsEntry(args, options, level));
  json += stats + "\n}\n";
  std::fputs(json.c_str(), stdout);
  return Status::Ok();
}

Status RunRead(const std::vector<std::string>& argv) {
  PATCHFEED_ASSIGN_OR_RETURN(const ParsedArgs args,
                             ParseArgs(argv, {"box", "pad", "out", "io", "level", "scale"},
                                       {"npy", "absolute", "no-fill-missing"}));
  const auto out_path = args.Get("out");
  if (args.positional.size() != 1 || !out_path) {
    return InvalidArgumentError(
        "usage: patchfeed read PATH [--box a:b,c:d,...] [--absolute] [--pad V] "
        "--out OUT|- [--npy] [--io mmap|pread] [--level N | --scale S] [--no-fill-missing]");
  }
  const std::string io = args.Get("io").value_or("mmap");
  if (io != "mmap" && io != "pread")
    return InvalidArgumentError("--io must be mmap or pread");
  codec::FrameOpenOptions options;
  options.io_mode = io == "pread" ? storage::IoMode::kPread : storage::IoMode::kMmap;
  options.fill_missing = !args.has_flag("no-fill-missing");
  PATCHFEED_ASSIGN_OR_RETURN(options.store, storage::StoreFor(args.positional[0]));
  PATCHFEED_ASSIGN_OR_RETURN(const int level, ParseLevel(args, args.positional[0], *options.store));
  PATCHFEED_ASSIGN_OR_RETURN(std::shared_ptr<const codec::ArrayReader> opened,
                             codec::OpenArray(args.positional[0], options, level));
  const codec::ArrayReader& array = *opened;
  const std::vector<int64_t>& shape = array.geometry().shape;
  PATCHFEED_ASSIGN_OR_RETURN(
      const codec::Box box,
      ParseBox(args.Get("box").value_or(""), shape,
               args.has_flag("absolute") ? array.origin() : std::vector<int64_t>(shape.size())));
  double pad = 0;
  if (const auto p = args.Get("pad")) {
    try {
      pad = std::stod(*p);
    } catch (const std::exception&) {
      return InvalidArgumentError("--pad expects a number, got '" + *p + "'");
    }
  }
  auto pad_item = codec::ItemFromDouble(array.dtype(), array.itemsize(), pad);
  if (!pad_item.ok())
    return pad_item.status().WithContext(args.positional[0]);
  std::vector<int64_t> extent;
  PATCHFEED_ASSIGN_OR_RETURN(std::vector<std::byte> data,
                             codec::AllocateBox(array.path(), box, array.itemsize(), &extent));
  codec::BoxReadScratch scratch;
  // Over a network, every chunk the box needs is requested at once.
  PATCHFEED_RETURN_IF_ERROR(loader::ReadBoxFetched(
      opened, box, codec::NdView::Contiguous(data.data(), extent, array.itemsize()), *pad_item,
      scratch));
  std::vector<std::byte> head;
  if (args.has_flag("npy"))
    head = NpyHeader(array.dtype(), extent);
  return WriteWholeFile(*out_path, data, head);
}

}  // namespace patchfeed::cli
