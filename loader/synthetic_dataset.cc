// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/synthetic_dataset.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <span>
#include <system_error>

#include "codec/b2nd/frame_writer.h"
#include "loader/nnunet_layout.h"

namespace patchfeed::loader {
namespace {

codec::B2ndWriteOptions WriteOptions(const SyntheticDatasetOptions& o,
                                     const std::vector<int64_t>& shape, int64_t itemsize) {
  codec::B2ndWriteOptions w;
  if (!o.chunkshape.empty()) {
    w.chunkshape = o.chunkshape;
    w.blockshape = o.blockshape;
  } else if (shape.size() == 4 && o.patch_size.size() == 3) {
    ChunkBlockShapes cb = NnUNetChunkBlockShapes(shape, o.patch_size, itemsize);
    w.chunkshape = std::move(cb.chunkshape);
    w.blockshape = std::move(cb.blockshape);
  }
  w.encode.codec = o.codec;
  w.encode.clevel = o.clevel;
  w.encode.filters[0] = o.filter;
  return w;
}

}  // namespace

std::string SyntheticCaseId(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "case_%03d", i);
  return buf;
}

std::vector<int64_t> SyntheticCaseShape(const SyntheticDatasetOptions& o, int i) {
  std::vector<int64_t> s = o.spatial_shape;
  if (o.vary_shapes && !s.empty()) {
    s.front() += (i % 3) * 4;
    s.back() += (i % 2) * 4;
  }
  return s;
}

Result<Dataset> WriteSyntheticDataset(const std::string& folder, const SyntheticDatasetOptions& o) {
  if (o.num_cases < 1 || o.channels < 1 || o.spatial_shape.empty()) {
    return InvalidArgumentError("synthetic dataset: need cases, channels and a spatial shape");
  }
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) {
    return IoError("cannot create " + folder + ": " + ec.message());
  }
  for (int i = 0; i < o.num_cases; ++i) {
    const std::vector<int64_t> spatial = SyntheticCaseShape(o, i);
    int64_t voxels = 1;
    for (const int64_t s : spatial) {
      voxels *= s;
    }
    // Coordinates of voxel v along the first, middle and last axis (2-D and 3-D alike).
    const int64_t nx = spatial.back();
    const int64_t ny = spatial.size() >= 2 ? spatial[spatial.size() - 2] : 1;
    const auto coord = [&](int64_t v, double* z, double* y, double* x) {
      *x = static_cast<double>(v % nx);
      *y = static_cast<double>((v / nx) % ny);
      *z = static_cast<double>(v / (nx * ny));
    };
    const double cz = static_cast<double>(spatial.front()) * (0.4 + 0.05 * (i % 4));
    const double cy = static_cast<double>(ny) * 0.5, cx = static_cast<double>(nx) * 0.55;
    const double r = 0.25 * static_cast<double>(std::min(ny, nx));

    std::vector<float> image(static_cast<size_t>(voxels * o.channels));
    std::vector<int16_t> seg(static_cast<size_t>(voxels));
    for (int64_t v = 0; v < voxels; ++v) {
      double z, y, x;
      coord(v, &z, &y, &x);
      const double d2 = (z - cz) * (z - cz) + (y - cy) * (y - cy) + (x - cx) * (x - cx);
      seg[static_cast<size_t>(v)] = static_cast<int16_t>(d2 < r * r / 4 ? 2 : (d2 < r * r ? 1 : 0));
      for (int64_t c = 0; c < o.channels; ++c) {
        const double field =
            100.0 * std::sin(x / 9.0 + static_cast<double>(c)) * std::cos(y / 13.0) + 0.5 * z +
            60.0 * std::exp(-d2 / (2 * r * r)) + 7.0 * i;
        image[static_cast<size_t>(c * voxels + v)] = static_cast<float>(field);
      }
    }
    std::vector<int64_t> image_shape{o.channels}, seg_shape{1};
    image_shape.insert(image_shape.end(), spatial.begin(), spatial.end());
    seg_shape.insert(seg_shape.end(), spatial.begin(), spatial.end());
    const std::string base = (std::filesystem::path(folder) / SyntheticCaseId(i)).string();
    PATCHFEED_RETURN_IF_ERROR(codec::WriteB2nd(base + ".b2nd", std::as_bytes(std::span(image)),
                                               image_shape, "<f4",
                                               WriteOptions(o, image_shape, 4)));
    PATCHFEED_RETURN_IF_ERROR(codec::WriteB2nd(base + "_seg.b2nd", std::as_bytes(std::span(seg)),
                                               seg_shape, "<i2", WriteOptions(o, seg_shape, 2)));
  }
  return Dataset::FromNnUNetFolder(folder);
}

}  // namespace patchfeed::loader
