// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// `patchfeed compress` and `patchfeed decompress`: one chunk file in, one file out.

#include <sstream>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/file_io.h"
#include "codec/blosc/block_decoder.h"
#include "codec/blosc/chunk_encoder.h"

namespace patchfeed::cli {
namespace {

// --filter takes one name or a comma-separated pipeline ("delta,shuffle"), filled from slot 0
// as python-blosc2 does; repeating --filter appends.
Status ParseFilters(const ParsedArgs& args, codec::EncodeOptions& o) {
  auto it = args.options.find("filter");
  if (it == args.options.end()) {
    o.filters[0] = codec::Filter::kShuffle;
    return Status::Ok();
  }
  size_t slot = 0;
  for (const std::string& value : it->second) {
    std::stringstream ss(value);
    std::string name;
    while (std::getline(ss, name, ',')) {
      PATCHFEED_ASSIGN_OR_RETURN(const codec::Filter f, codec::ParseFilterName(name));
      if (f == codec::Filter::kNone)
        continue;
      if (slot >= o.filters.size())
        return InvalidArgumentError("more than 6 filters");
      o.filters[slot++] = f;
    }
  }
  return Status::Ok();
}

}  // namespace

Status RunCompress(const std::vector<std::string>& argv) {
  PATCHFEED_ASSIGN_OR_RETURN(
      const ParsedArgs args,
      ParseArgs(argv, {"typesize", "codec", "clevel", "filter", "split", "blocksize"},
                {"blosc1", "dict"}));
  if (args.positional.size() != 2) {
    return InvalidArgumentError(
        "usage: patchfeed compress IN OUT --typesize N --codec C "
        "--clevel L --filter F [--blosc1] [--split MODE] "
        "[--blocksize B] [--dict]");
  }
  codec::EncodeOptions o;
  PATCHFEED_ASSIGN_OR_RETURN(const long long typesize, args.GetInt("typesize", 1));
  PATCHFEED_ASSIGN_OR_RETURN(const long long clevel, args.GetInt("clevel", 5));
  PATCHFEED_ASSIGN_OR_RETURN(const long long blocksize, args.GetInt("blocksize", 0));
  if (typesize < 1 || typesize > (1 << 20))
    return InvalidArgumentError("bad --typesize");
  if (blocksize < 0 || blocksize > codec::kMaxBlockSize) {
    return InvalidArgumentError("bad --blocksize");
  }
  o.typesize = static_cast<int32_t>(typesize);
  o.clevel = static_cast<int>(clevel);
  o.blocksize = static_cast<int32_t>(blocksize);
  PATCHFEED_ASSIGN_OR_RETURN(o.codec, codec::ParseCodecName(args.Get("codec").value_or("lz4")));
  PATCHFEED_ASSIGN_OR_RETURN(o.splitmode,
                             codec::ParseSplitModeName(args.Get("split").value_or("auto")));
  PATCHFEED_RETURN_IF_ERROR(ParseFilters(args, o));
  o.blosc1 = args.has_flag("blosc1");
  o.use_dict = args.has_flag("dict");

  PATCHFEED_ASSIGN_OR_RETURN(const std::vector<std::byte> input, ReadWholeFile(args.positional[0]));
  auto chunk = codec::CompressChunk(o, input);
  if (!chunk.ok())
    return chunk.status().WithContext(args.positional[0]);
  return WriteWholeFile(args.positional[1], *chunk);
}

Status RunDecompress(const std::vector<std::string>& argv) {
  PATCHFEED_ASSIGN_OR_RETURN(const ParsedArgs args, ParseArgs(argv, {"max-bytes"}, {}));
  if (args.positional.size() != 2) {
    return InvalidArgumentError("usage: patchfeed decompress IN OUT [--max-bytes N]");
  }
  PATCHFEED_ASSIGN_OR_RETURN(const long long max_bytes,
                             args.GetInt("max-bytes", codec::kDefaultMaxDecompressedBytes));
  if (max_bytes < 0)
    return InvalidArgumentError("bad --max-bytes");
  PATCHFEED_ASSIGN_OR_RETURN(const std::vector<std::byte> chunk, ReadWholeFile(args.positional[0]));
  // The output is allocated only once the header is checked and its size is within the limit.
  auto data = codec::DecompressChunk(chunk, max_bytes);
  if (!data.ok())
    return data.status().WithContext(args.positional[0]);
  return WriteWholeFile(args.positional[1], *data);
}

}  // namespace patchfeed::cli
