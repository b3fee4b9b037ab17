// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_BOX_READ_H_
#define PATCHFEED_LOADER_BOX_READ_H_

/// \file
/// One box read with every file and byte range it needs requested at once, for readers
/// outside the loader's batches (Python's `read_box`, `patchfeed read`, a C++ cutout): over a
/// network a box of many chunks costs three or four round trips (open, header, blocks; a
/// shard's index), not one or more per chunk. Arrays read through a remote store or a source
/// that reads asynchronously are fetched so (loader/internal/box_fetch.h); the rest (mapped and
/// local files) are read as codec::ArrayReader::ReadBox reads them.
///
///   PATCHFEED_ASSIGN_OR_RETURN(auto array, codec::OpenArray("gs://bucket/em/image", options));
///   codec::BoxReadScratch scratch;
///   PATCHFEED_RETURN_IF_ERROR(loader::ReadBoxFetched(std::move(array), box, dst, pad, scratch));

#include <cstddef>
#include <memory>
#include <span>

#include "codec/array_reader.h"
#include "common/status.h"

namespace patchfeed::loader {

/// ArrayReader::ReadBox of `box` into `dst` (its shape the box's extents), with the bytes
/// fetched ahead where the array's store or file reads asynchronously. Errors as ReadBox's,
/// naming the file (or URL), chunk and range.
Status ReadBoxFetched(std::shared_ptr<const codec::ArrayReader> array, const codec::Box& box,
                      const codec::NdView& dst, std::span<const std::byte> pad_item,
                      codec::BoxReadScratch& scratch);

}  // namespace patchfeed::loader

#endif  // PATCHFEED_LOADER_BOX_READ_H_
