// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/b2nd/frame_writer.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "codec/b2nd/b2nd_meta.h"
#include "codec/b2nd/internal/msgpack_put.h"
#include "codec/b2nd/nd_reader.h"
#include "codec/dtype.h"
#include "codec/internal/nd_copy.h"
#include "common/byte_order.h"
#include "common/str_cat.h"

namespace patchfeed::codec {
namespace {

using internal_codec::CopyRegion;
using internal_codec::ForEachIndex;
using internal_codec::Index;
using internal_codec::PutBE;
using internal_codec::PutByte;
using internal_codec::PutBytes;

constexpr int64_t kSpecialZerosOffset = static_cast<int64_t>(0x81ull << 56);

// The encoded chunks of an array and their index, before they are laid out in a file.
struct EncodedArray {
  std::vector<std::vector<std::byte>> stored;  // chunks with bytes, in storage order
  std::vector<int64_t> offsets;                // per chunk: byte offset / file number / special
  int64_t cbytes = 0;
  int64_t nbytes = 0;
  int32_t chunksize = 0;
  int32_t blocksize = 0;
  int32_t typesize = 0;
  std::vector<std::byte> meta;
};

Result<EncodedArray> EncodeChunks(std::span<const std::byte> data,
                                  const std::vector<int64_t>& shape, const std::string& dtype,
                                  const B2ndWriteOptions& options, bool byte_offsets) {
  B2ndMeta meta;
  meta.shape = shape;
  meta.dtype = dtype;
  const int n = meta.ndim();
  if (n > kMaxDims)
    return InvalidArgumentError("more than 16 dimensions");
  meta.chunkshape = options.chunkshape;
  meta.blockshape = options.blockshape;
  if (meta.chunkshape.empty()) {
    for (int64_t s : shape)
      meta.chunkshape.push_back(static_cast<int32_t>(std::max<int64_t>(s, 1)));
  }
  if (meta.blockshape.empty())
    meta.blockshape = meta.chunkshape;
  if (static_cast<int>(meta.chunkshape.size()) != n ||
      static_cast<int>(meta.blockshape.size()) != n) {
    return InvalidArgumentError("chunk and block shapes need one entry per dimension");
  }
  for (int d = 0; d < n; ++d) {
    const auto i = static_cast<size_t>(d);
    if (shape[i] < 0 || meta.chunkshape[i] <= 0 || meta.blockshape[i] <= 0 ||
        meta.blockshape[i] > meta.chunkshape[i]) {
      return InvalidArgumentError(
          StrCat("dimension ", d, ": need shape >= 0 and 0 < block <= chunk"));
    }
  }
  const int64_t itemsize = options.itemsize > 0 ? options.itemsize : ItemSizeOfDtype(dtype);
  if (itemsize <= 0)
    return InvalidArgumentError(StrCat("unsupported dtype '", dtype, "'"));
  PATCHFEED_ASSIGN_OR_RETURN(const NdGeometry g, B2ndGeometry(meta, itemsize));
  int64_t items = 1;
  for (int64_t s : shape)
    items *= s;
  if (static_cast<int64_t>(data.size()) != items * itemsize) {
    return InvalidArgumentError(
        StrCat("data holds ", data.size(), " bytes, the shape ", items * itemsize));
  }

  EncodedArray out;
  out.meta = SerializeB2ndMeta(meta);
  out.typesize = static_cast<int32_t>(itemsize);
  out.chunksize = static_cast<int32_t>(g.chunk_nitems * itemsize);
  out.blocksize = static_cast<int32_t>(g.block_nitems * itemsize);
  out.nbytes = g.nchunks * g.chunk_nitems * itemsize;
  EncodeOptions eo = options.encode;
  eo.typesize = out.typesize;
  eo.blocksize = out.blocksize;
  ChunkEncoder encoder;
  std::vector<std::byte> padded(static_cast<size_t>(out.chunksize));
  std::vector<std::byte> encoded(ChunkEncoder::MaxEncodedSize(padded.size()));
  const int64_t block_bytes = g.block_nitems * itemsize;
  Index zero{};
  Index qlo{}, qhi{};
  for (int d = 0; d < n; ++d)
    qhi[static_cast<size_t>(d)] = g.chunks_per_dim[static_cast<size_t>(d)];
  if (g.nchunks == 0)
    return out;
  PATCHFEED_RETURN_IF_ERROR(ForEachIndex(n, qlo.data(), qhi.data(), [&](const Index& q) -> Status {
    // Gather the chunk in block order; padding stays zero, as c-blosc2 writes it.
    std::fill(padded.begin(), padded.end(), std::byte{0});
    Index klo{}, khi{};
    for (int d = 0; d < n; ++d)
      khi[static_cast<size_t>(d)] = g.blocks_per_chunk[static_cast<size_t>(d)];
    int64_t nblock = 0;
    (void)ForEachIndex(n, klo.data(), khi.data(), [&](const Index& k) -> Status {
      Index blo{}, ilo{}, ihi{};
      for (int d = 0; d < n; ++d) {
        const auto i = static_cast<size_t>(d);
        const int64_t chunk_start = q[i] * g.chunkshape[i];
        blo[i] = chunk_start + k[i] * g.blockshape[i];
        ilo[i] = blo[i];
        ihi[i] = std::min({blo[i] + g.blockshape[i], chunk_start + g.chunkshape[i], g.shape[i]});
      }
      bool any = true;
      for (int d = 0; d < n; ++d)
        any &= ilo[static_cast<size_t>(d)] < ihi[static_cast<size_t>(d)];
      if (any) {
        NdView block =
            NdView::Contiguous(padded.data() + nblock * block_bytes, g.blockshape, itemsize);
        CopyRegion(n, itemsize, ilo.data(), ihi.data(), data.data(), zero.data(), g.shape.data(),
                   block, blo.data());
      }
      ++nblock;
      return Status::Ok();
    });
    PATCHFEED_ASSIGN_OR_RETURN(const size_t size, encoder.Encode(eo, padded, encoded));
    const bool zeros = size == static_cast<size_t>(kBlosc2HeaderSize) && !eo.blosc1 &&
                       ((static_cast<uint8_t>(encoded[31]) >> 4) & 7) == 1;
    if (zeros) {
      out.offsets.push_back(kSpecialZerosOffset);
    } else {
      out.offsets.push_back(byte_offsets ? out.cbytes : static_cast<int64_t>(out.stored.size()));
      out.stored.emplace_back(encoded.begin(), encoded.begin() + static_cast<ptrdiff_t>(size));
      out.cbytes += static_cast<int64_t>(size);
    }
    return Status::Ok();
  }));
  return out;
}

std::vector<std::byte> FrameHeader(const EncodedArray& a, const EncodeOptions& eo, bool sparse,
                                   uint64_t frame_len, int64_t cbytes) {
  std::vector<std::byte> h;
  PutByte(h, 0x9E);
  PutByte(h, 0xA8);
  PutBytes(h, "b2frame", 8);   // with its terminating zero
  PutBE<int32_t>(h, 0xD2, 0);  // header_len, patched below
  PutBE<uint64_t>(h, 0xCF, frame_len);
  PutByte(h, 0xA4);
  PutByte(h, 0x12);  // frame format 2, 64-bit offsets
  PutByte(h, sparse ? 1 : 0);
  PutByte(h, static_cast<uint8_t>((eo.clevel << 4) | static_cast<uint8_t>(eo.codec)));
  PutByte(h, static_cast<uint8_t>(static_cast<uint8_t>(eo.splitmode) - 1));
  PutBE<int64_t>(h, 0xD3, a.nbytes);
  PutBE<int64_t>(h, 0xD3, cbytes);
  PutBE<int32_t>(h, 0xD2, a.typesize);
  PutBE<int32_t>(h, 0xD2, a.blocksize);
  PutBE<int32_t>(h, 0xD2, a.chunksize);
  PutBE<int16_t>(h, 0xD1, 1);
  PutBE<int16_t>(h, 0xD1, 1);
  PutByte(h, 0xC2);  // no variable-length metalayers
  PutByte(h, 0xD8);
  PutByte(h, kMaxFilters);
  for (Filter f : eo.filters)
    PutByte(h, static_cast<uint8_t>(f));
  PutByte(h, static_cast<uint8_t>(eo.codec));
  PutByte(h, 0);
  for (uint8_t m : eo.filters_meta)
    PutByte(h, m);
  PutByte(h, 0);
  PutByte(h, 0);
  // Metalayers: an index {"b2nd": offset} then the contents.
  const size_t index_start = h.size();
  PutByte(h, 0x93);
  PutBE<uint16_t>(h, 0xCD, 0);  // index size, patched below
  PutBE<uint16_t>(h, 0xDE, 1);
  PutByte(h, 0xA0 | 4);
  PutBytes(h, "b2nd", 4);
  PutBE<int32_t>(h, 0xD2, 0);  // content offset, patched below
  StoreBE<uint16_t>(h.data() + index_start + 2, static_cast<uint16_t>(h.size() - index_start));
  PutBE<uint16_t>(h, 0xDC, 1);
  StoreBE<int32_t>(h.data() + h.size() - 3 - 4, static_cast<int32_t>(h.size()));
  PutBE<uint32_t>(h, 0xC6, static_cast<uint32_t>(a.meta.size()));
  PutBytes(h, a.meta.data(), a.meta.size());
  StoreBE<int32_t>(h.data() + 11, static_cast<int32_t>(h.size()));
  return h;
}

std::vector<std::byte> Trailer() {
  std::vector<std::byte> t;
  PutByte(t, 0x94);
  PutByte(t, 0x01);
  PutByte(t, 0x93);
  PutBE<uint16_t>(t, 0xCD, 6);
  PutBE<uint16_t>(t, 0xDE, 0);
  PutBE<uint16_t>(t, 0xDC, 0);
  PutBE<uint32_t>(t, 0xCE, 0);  // trailer_len, patched below
  PutByte(t, 0xD8);
  PutByte(t, 0);  // fingerprint type: none
  t.resize(t.size() + 16);
  StoreBE<uint32_t>(t.data() + 13, static_cast<uint32_t>(t.size()));
  return t;
}

Result<std::vector<std::byte>> OffsetsChunk(const std::vector<int64_t>& offsets) {
  if (offsets.empty())
    return std::vector<std::byte>{};
  EncodeOptions o;  // c-blosc2 uses BloscLZ with SHUFFLE; any codec reads the same
  o.codec = Codec::kLZ4;
  o.typesize = 8;
  o.filters[0] = Filter::kShuffle;
  o.splitmode = SplitMode::kNever;
  return CompressChunk(o, std::span(reinterpret_cast<const std::byte*>(offsets.data()),
                                    offsets.size() * sizeof(int64_t)));
}

// The frame around `a`; chunk data is appended only for contiguous frames.
Result<std::vector<std::byte>> AssembleFrame(const EncodedArray& a, const EncodeOptions& eo,
                                             bool sparse) {
  PATCHFEED_ASSIGN_OR_RETURN(const auto offsets, OffsetsChunk(a.offsets));
  const auto trailer = Trailer();
  auto header = FrameHeader(a, eo, sparse, 0, a.cbytes);
  const uint64_t data_len = sparse ? 0 : static_cast<uint64_t>(a.cbytes);
  const uint64_t frame_len = header.size() + data_len + offsets.size() + trailer.size();
  StoreBE<uint64_t>(header.data() + 16, frame_len);
  std::vector<std::byte> frame = std::move(header);
  frame.reserve(frame_len);
  if (!sparse) {
    for (const auto& c : a.stored)
      frame.insert(frame.end(), c.begin(), c.end());
  }
  frame.insert(frame.end(), offsets.begin(), offsets.end());
  frame.insert(frame.end(), trailer.begin(), trailer.end());
  return frame;
}

Status WriteFile(const std::string& path, std::span<const std::byte> bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr)
    return IoError(StrCat(path, ": cannot create: ", std::strerror(errno)));
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed)
    return IoError(StrCat(path, ": write failed: ", std::strerror(errno)));
  return Status::Ok();
}

}  // namespace

Result<std::vector<std::byte>> EncodeB2ndFrame(std::span<const std::byte> data,
                                               const std::vector<int64_t>& shape,
                                               const std::string& dtype,
                                               const B2ndWriteOptions& options) {
  PATCHFEED_ASSIGN_OR_RETURN(const EncodedArray a,
                             EncodeChunks(data, shape, dtype, options, /*byte_offsets=*/true));
  return AssembleFrame(a, options.encode, /*sparse=*/false);
}

Status WriteB2nd(const std::string& path, std::span<const std::byte> data,
                 const std::vector<int64_t>& shape, const std::string& dtype,
                 const B2ndWriteOptions& options) {
  auto a = EncodeChunks(data, shape, dtype, options, /*byte_offsets=*/!options.sparse);
  if (!a.ok())
    return a.status().WithContext(path);
  auto frame = AssembleFrame(*a, options.encode, options.sparse);
  if (!frame.ok())
    return frame.status().WithContext(path);
  if (!options.sparse)
    return WriteFile(path, *frame);
  if (mkdir(path.c_str(), 0777) != 0 && errno != EEXIST) {
    return IoError(StrCat(path, ": cannot create directory: ", std::strerror(errno)));
  }
  for (size_t i = 0; i < a->stored.size(); ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), "/%08zX.chunk", i);
    PATCHFEED_RETURN_IF_ERROR(WriteFile(path + name, a->stored[i]));
  }
  return WriteFile(path + "/chunks.b2frame", *frame);
}

}  // namespace patchfeed::codec
