// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// The `.fgindex` file format of ForegroundIndex (version 1), all little endian:
//
//   magic "PFFGIDX\0", u32 version, u32 flags (bit 0: keys were the labels found),
//   u32 ndim, u32 num_keys, u64 seed, u64 source size, i64 source mtime (ns), i64 shape[ndim]
//   per key: u32 num_labels, u32 0, i64 labels[num_labels], i64 total, i64 count,
//            i32 coords[count * ndim] (row-major, random order)
//   u64 FNV-1a of every byte before it
//
// The checksum catches flipped coordinates that still lie inside the shape, which no
// structural check can.

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "common/byte_order.h"
#include "common/str_cat.h"
#include "loader/foreground_index.h"

namespace patchfeed::loader {
namespace {

constexpr char kMagic[8] = {'P', 'F', 'F', 'G', 'I', 'D', 'X', '\0'};
constexpr uint32_t kVersion = 1;
constexpr uint32_t kFlagKeysFound = 1;
constexpr int kMaxDims = 16;  // codec::kMaxDims

uint64_t Fnv1a(const char* data, size_t n) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (size_t i = 0; i < n; ++i) {
    h = (h ^ static_cast<uint8_t>(data[i])) * 0x100000001B3ull;
  }
  return h;
}

// Appends through a local buffer: resize-then-store trips a false GCC 12
// -Wstringop-overflow at -O3.
template <typename T>
void Put(std::vector<char>& out, T v) {
  char buf[sizeof(T)];
  StoreLE<T>(buf, v);
  out.insert(out.end(), buf, buf + sizeof(T));
}

/// Bounds-checked little-endian reads; every failure is a truncation.
class Cursor {
 public:
  explicit Cursor(const std::vector<char>& bytes) : bytes_(bytes) {}
  template <typename T>
  bool Read(T& v) {
    if (remaining() < sizeof(T)) {
      return false;
    }
    v = LoadLE<T>(bytes_.data() + pos_);
    pos_ += sizeof(T);
    return true;
  }
  size_t remaining() const { return bytes_.size() - pos_; }
  size_t pos() const { return pos_; }
  void Skip(size_t n) { pos_ += n; }

 private:
  const std::vector<char>& bytes_;
  size_t pos_ = 0;
};

}  // namespace

Status ForegroundIndex::Save(const std::string& path) const {
  std::vector<char> out;
  out.reserve(4096);
  out.insert(out.end(), kMagic, kMagic + sizeof(kMagic));
  Put<uint32_t>(out, kVersion);
  Put<uint32_t>(out, keys_found_ ? kFlagKeysFound : 0);
  Put<uint32_t>(out, static_cast<uint32_t>(ndim()));
  Put<uint32_t>(out, static_cast<uint32_t>(num_keys()));
  Put<uint64_t>(out, seed_);
  Put<uint64_t>(out, source_size_);
  Put<int64_t>(out, source_mtime_ns_);
  for (const int64_t s : shape_) {
    Put<int64_t>(out, s);
  }
  for (size_t k = 0; k < keys_.size(); ++k) {
    Put<uint32_t>(out, static_cast<uint32_t>(keys_[k].size()));
    Put<uint32_t>(out, 0);
    for (const int64_t label : keys_[k]) {
      Put<int64_t>(out, label);
    }
    Put<int64_t>(out, totals_[k]);
    Put<int64_t>(out, counts_[k]);
    for (const int32_t c : coords_[k]) {
      Put<int32_t>(out, c);
    }
  }
  Put<uint64_t>(out, Fnv1a(out.data(), out.size()));

  // A unique temporary name per process and call, renamed over the target: readers see the
  // old file or the new one, never a partial one.
  static std::atomic<uint64_t> counter{0};
  const std::string tmp =
      path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter.fetch_add(1));
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(out.data(), static_cast<std::streamsize>(out.size()));
    f.close();
    if (!f) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      return IoError(path + ": cannot write the foreground index: " + std::strerror(errno));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return IoError(path + ": cannot write the foreground index: " + ec.message());
  }
  return Status::Ok();
}

Result<ForegroundIndex> ForegroundIndex::Load(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return NotFoundError(path + ": no foreground index");
  }
  std::ifstream f(path, std::ios::binary);
  std::vector<char> bytes;
  if (f) {
    bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  if (!f && !f.eof()) {
    return IoError(path + ": cannot read the foreground index: " + std::strerror(errno));
  }
  return Parse(path, bytes);
}

Result<ForegroundIndex> ForegroundIndex::Parse(const std::string& path,
                                               const std::vector<char>& bytes) {
  const auto corrupt = [&path](std::string_view what) {
    return DataLossError(path + ": corrupt foreground index: " + std::string(what));
  };
  const auto truncated = [&path, &bytes](std::string_view where) {
    return DataLossError(StrCat(path, ": foreground index truncated (", bytes.size(), " bytes) in ",
                                std::string(where)));
  };
  if (bytes.size() < sizeof(kMagic)) {
    return truncated("the magic");
  }
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return corrupt("bad magic, not a patchfeed .fgindex file");
  }
  Cursor in(bytes);
  in.Skip(sizeof(kMagic));
  uint32_t version = 0, flags = 0, ndim = 0, num_keys = 0;
  ForegroundIndex index;
  if (!in.Read(version) || !in.Read(flags) || !in.Read(ndim) || !in.Read(num_keys) ||
      !in.Read(index.seed_) || !in.Read(index.source_size_) || !in.Read(index.source_mtime_ns_)) {
    return truncated("the header");
  }
  if (version != kVersion) {
    return corrupt(StrCat("version ", version, ", this build reads version ", kVersion));
  }
  if ((flags & ~kFlagKeysFound) != 0) {
    return corrupt(StrCat("unknown flags ", flags));
  }
  index.keys_found_ = (flags & kFlagKeysFound) != 0;
  if (ndim < 1 || ndim > kMaxDims) {
    return corrupt(StrCat(ndim, " dimensions"));
  }
  index.shape_.resize(ndim);
  for (int64_t& s : index.shape_) {
    if (!in.Read(s)) {
      return truncated("the shape");
    }
    if (s < 1 || s > std::numeric_limits<int32_t>::max()) {
      return corrupt(StrCat("axis size ", s));
    }
  }
  // Each key takes at least 24 bytes, which bounds num_keys before anything is allocated.
  if (num_keys > in.remaining() / 24) {
    return truncated(StrCat("the keys (", num_keys, " declared)"));
  }
  for (uint32_t k = 0; k < num_keys; ++k) {
    const std::string key_name = "key " + std::to_string(k);
    uint32_t num_labels = 0, reserved = 0;
    if (!in.Read(num_labels) || !in.Read(reserved)) {
      return truncated(key_name);
    }
    if (reserved != 0) {
      return corrupt(key_name + ": reserved field is not 0");
    }
    if (num_labels > in.remaining() / 8) {
      return truncated(key_name + " labels");
    }
    LabelSet labels(num_labels);
    for (int64_t& label : labels) {
      (void)in.Read(label);
    }
    int64_t total = 0, count = 0;
    if (!in.Read(total) || !in.Read(count)) {
      return truncated(key_name);
    }
    if (count < 0 || total < count) {
      return corrupt(StrCat(key_name, ": ", count, " of ", total, " voxels stored"));
    }
    if (static_cast<uint64_t>(count) > in.remaining() / (4 * ndim)) {
      return truncated(StrCat(key_name, " coordinates (", count, " declared)"));
    }
    std::vector<int32_t> coords(static_cast<size_t>(count) * ndim);
    for (size_t i = 0; i < coords.size(); ++i) {
      (void)in.Read(coords[i]);
      if (coords[i] < 0 || coords[i] >= index.shape_[i % ndim]) {
        return corrupt(StrCat(key_name, " voxel ", i / ndim, " lies outside the shape"));
      }
    }
    index.keys_.push_back(std::move(labels));
    index.totals_.push_back(total);
    index.counts_.push_back(count);
    index.coords_.push_back(std::move(coords));
  }
  const size_t body = in.pos();
  uint64_t checksum = 0;
  if (!in.Read(checksum)) {
    return truncated("the checksum");
  }
  if (in.remaining() != 0) {
    return corrupt(StrCat(in.remaining(), " bytes after the checksum"));
  }
  if (checksum != Fnv1a(bytes.data(), body)) {
    return corrupt("checksum mismatch");
  }
  return index;
}

}  // namespace patchfeed::loader
