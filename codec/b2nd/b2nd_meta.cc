// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/b2nd/b2nd_meta.h"

#include <string>

#include "codec/b2nd/internal/msgpack_put.h"
#include "common/byte_order.h"
#include "common/str_cat.h"

namespace patchfeed::codec {
namespace {

using internal_codec::PutBE;
using internal_codec::PutByte;

class Reader {
 public:
  explicit Reader(std::span<const std::byte> b) : b_(b) {}
  Result<uint8_t> Byte() {
    if (pos_ >= b_.size())
      return Truncated();
    return static_cast<uint8_t>(b_[pos_++]);
  }
  template <typename T>
  Result<T> BE(uint8_t marker) {
    PATCHFEED_ASSIGN_OR_RETURN(const uint8_t m, Byte());
    if (m != marker)
      return DataLossError("b2nd metalayer: unexpected msgpack byte");
    if (pos_ + sizeof(T) > b_.size())
      return Truncated();
    pos_ += sizeof(T);
    return LoadBE<T>(b_.data() + pos_ - sizeof(T));
  }
  /// An array header. c-blosc2 writes 0x90 + n even for n == 16, where msgpack would need
  /// array16 (0x90 + 16 is the fixstr marker 0xA0), so both forms are read.
  Result<int> ArrayHeader() {
    PATCHFEED_ASSIGN_OR_RETURN(const uint8_t m, Byte());
    if (m >= 0x90 && m <= 0x90 + kMaxDims)
      return m - 0x90;
    if (m == 0xDC) {
      if (pos_ + 2 > b_.size())
        return Truncated();
      pos_ += 2;
      return static_cast<int>(LoadBE<uint16_t>(b_.data() + pos_ - 2));
    }
    return DataLossError("b2nd metalayer: expected an array");
  }
  bool done() const { return pos_ >= b_.size(); }
  Result<std::string> Str32() {
    PATCHFEED_ASSIGN_OR_RETURN(const int32_t len, BE<int32_t>(0xDB));
    if (len < 0 || pos_ + static_cast<size_t>(len) > b_.size())
      return Truncated();
    std::string s(reinterpret_cast<const char*>(b_.data() + pos_), static_cast<size_t>(len));
    pos_ += static_cast<size_t>(len);
    return s;
  }

 private:
  static Status Truncated() { return DataLossError("b2nd metalayer is truncated"); }
  std::span<const std::byte> b_;
  size_t pos_ = 0;
};

// As c-blosc2 writes it: 0x90 + n, also for n == 16 (see Reader::ArrayHeader).
void PutArrayHeader(std::vector<std::byte>& out, int n) {
  PutByte(out, static_cast<uint8_t>(0x90 + n));
}

}  // namespace

Result<B2ndMeta> ParseB2ndMeta(std::span<const std::byte> content) {
  Reader r(content);
  B2ndMeta m;
  PATCHFEED_ASSIGN_OR_RETURN(const int fields, r.ArrayHeader());
  PATCHFEED_ASSIGN_OR_RETURN(const uint8_t version, r.Byte());
  PATCHFEED_ASSIGN_OR_RETURN(const uint8_t ndim, r.Byte());
  if (version > 0x7F || ndim > kMaxDims) {
    return DataLossError(StrCat("b2nd metalayer: ndim ", ndim, " exceeds ", kMaxDims));
  }
  m.version = version;
  for (int pass = 0; pass < 3; ++pass) {
    PATCHFEED_ASSIGN_OR_RETURN(const int n, r.ArrayHeader());
    if (n != ndim)
      return DataLossError("b2nd metalayer: shape arrays disagree with ndim");
    for (int d = 0; d < n; ++d) {
      if (pass == 0) {
        PATCHFEED_ASSIGN_OR_RETURN(const int64_t v, r.BE<int64_t>(0xD3));
        m.shape.push_back(v);
      } else {
        PATCHFEED_ASSIGN_OR_RETURN(const int32_t v, r.BE<int32_t>(0xD2));
        (pass == 1 ? m.chunkshape : m.blockshape).push_back(v);
      }
    }
  }
  if (fields >= 7 && !r.done()) {
    PATCHFEED_ASSIGN_OR_RETURN(const uint8_t format, r.Byte());
    if (format != 0) {
      return UnimplementedError(
          StrCat("b2nd dtype format ", format, " (only NumPy dtype strings are known)"));
    }
    PATCHFEED_ASSIGN_OR_RETURN(m.dtype, r.Str32());
    if (m.dtype.empty()) {
      // c-blosc2 writes "|u1" when given no dtype; an empty string is no dtype at all.
      return DataLossError("b2nd metalayer: the dtype string is empty");
    }
  }
  for (int d = 0; d < ndim; ++d) {
    const auto i = static_cast<size_t>(d);
    if (m.shape[i] < 0)
      return DataLossError("b2nd metalayer: negative shape");
    if (m.shape[i] == 0)
      continue;  // an empty array; chunks and blocks are irrelevant
    if (m.chunkshape[i] <= 0 || m.blockshape[i] <= 0 || m.blockshape[i] > m.chunkshape[i]) {
      return DataLossError(StrCat("b2nd metalayer: dimension ", d, " has chunk ", m.chunkshape[i],
                                  " and block ", m.blockshape[i]));
    }
  }
  return m;
}

std::vector<std::byte> SerializeB2ndMeta(const B2ndMeta& m) {
  std::vector<std::byte> out;
  PutByte(out, 0x97);
  PutByte(out, static_cast<uint8_t>(m.version));
  PutByte(out, static_cast<uint8_t>(m.ndim()));
  PutArrayHeader(out, m.ndim());
  for (int64_t v : m.shape)
    PutBE<int64_t>(out, 0xD3, v);
  PutArrayHeader(out, m.ndim());
  for (int32_t v : m.chunkshape)
    PutBE<int32_t>(out, 0xD2, v);
  PutArrayHeader(out, m.ndim());
  for (int32_t v : m.blockshape)
    PutBE<int32_t>(out, 0xD2, v);
  PutByte(out, 0);  // dtype format: NumPy
  PutBE<int32_t>(out, 0xDB, static_cast<int32_t>(m.dtype.size()));
  for (char c : m.dtype)
    PutByte(out, static_cast<uint8_t>(c));
  return out;
}

Result<NdGeometry> B2ndGeometry(const B2ndMeta& meta, int64_t itemsize) {
  NdGeometry g;
  g.ndim = meta.ndim();
  g.itemsize = itemsize;
  if (itemsize <= 0)
    return DataLossError(StrCat("b2nd array with item size ", itemsize));
  g.nchunks = 1;
  g.chunk_nitems = 1;
  g.block_nitems = 1;
  bool empty = false;
  for (int d = 0; d < g.ndim; ++d) {
    const auto i = static_cast<size_t>(d);
    const int64_t s = meta.shape[i];
    const int64_t c = meta.chunkshape[i];
    const int64_t b = meta.blockshape[i];
    g.shape.push_back(s);
    g.chunkshape.push_back(c);
    g.blockshape.push_back(b);
    if (s == 0) {
      empty = true;
      g.chunks_per_dim.push_back(0);
      g.extchunk.push_back(0);
      g.blocks_per_chunk.push_back(0);
      continue;
    }
    const int64_t ext = (c + b - 1) / b * b;  // c, b < 2^31: no overflow
    g.chunks_per_dim.push_back((s - 1) / c + 1);
    g.extchunk.push_back(ext);
    g.blocks_per_chunk.push_back(ext / b);
    // Untrusted shapes: products that overflow are corrupt metadata, not arithmetic to wrap.
    if (__builtin_mul_overflow(g.nchunks, g.chunks_per_dim.back(), &g.nchunks) ||
        __builtin_mul_overflow(g.chunk_nitems, ext, &g.chunk_nitems) ||
        __builtin_mul_overflow(g.block_nitems, b, &g.block_nitems) ||
        g.chunk_nitems > INT32_MAX / itemsize) {
      return DataLossError("b2nd shape, chunks and blocks give sizes beyond the format's limits");
    }
  }
  if (empty)
    g.nchunks = 0;
  return g;
}

}  // namespace patchfeed::codec
