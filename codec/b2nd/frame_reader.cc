// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/b2nd/frame_reader.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "codec/blosc/block_decoder.h"
#include "codec/blosc/partial_chunk_read.h"
#include "common/byte_order.h"
#include "common/str_cat.h"

namespace patchfeed::codec {
namespace {

constexpr int32_t kFixedHeaderLen = 87;
constexpr int32_t kTrailerTailLen = 23;  // 0xCE + u32 trailer_len + 0xD8 + type + 16 bytes
constexpr int32_t kMinTrailerLen = 25;
constexpr char kMagic[8] = {'b', '2', 'f', 'r', 'a', 'm', 'e', '\0'};

uint8_t U8(std::span<const std::byte> b, size_t i) { return static_cast<uint8_t>(b[i]); }

// A bounds-checked cursor over msgpack bytes with the few fixed-width forms frames use.
class MsgpackCursor {
 public:
  MsgpackCursor(std::span<const std::byte> bytes, size_t pos, std::string what)
      : bytes_(bytes), pos_(pos), what_(std::move(what)) {}

  size_t pos() const { return pos_; }

  Status Expect(uint8_t marker) {
    PATCHFEED_RETURN_IF_ERROR(Need(1));
    const uint8_t got = U8(bytes_, pos_);
    if (got != marker) {
      return DataLossError(StrCat(what_, ": expected msgpack byte 0x", Hex(marker), " at offset ",
                                  pos_, ", found 0x", Hex(got)));
    }
    ++pos_;
    return Status::Ok();
  }
  Result<uint16_t> BE16() {
    PATCHFEED_RETURN_IF_ERROR(Need(2));
    pos_ += 2;
    return LoadBE<uint16_t>(bytes_.data() + pos_ - 2);
  }
  Result<int32_t> BE32() {
    PATCHFEED_RETURN_IF_ERROR(Need(4));
    pos_ += 4;
    return LoadBE<int32_t>(bytes_.data() + pos_ - 4);
  }
  /// A fixstr (0xA0 | len) of at most 31 bytes.
  Result<std::string> FixStr() {
    PATCHFEED_RETURN_IF_ERROR(Need(1));
    const uint8_t m = U8(bytes_, pos_);
    if ((m & 0xE0) != 0xA0) {
      return DataLossError(StrCat(what_, ": expected a short string at offset ", pos_));
    }
    const size_t len = m & 0x1F;
    ++pos_;
    PATCHFEED_RETURN_IF_ERROR(Need(len));
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), len);
    pos_ += len;
    return s;
  }

 private:
  static std::string Hex(uint8_t v) {
    char buf[4];
    std::snprintf(buf, sizeof(buf), "%02X", v);
    return buf;
  }
  Status Need(size_t n) const {
    if (pos_ > bytes_.size() || n > bytes_.size() - pos_) {
      return DataLossError(
          StrCat(what_, ": ends at offset ", bytes_.size(), ", inside an entry at ", pos_));
    }
    return Status::Ok();
  }

  std::span<const std::byte> bytes_;
  size_t pos_;
  std::string what_;
};

// Reads the names of a metalayer index: 0x93, 0xCD u16 size, 0xDE u16 n, n x (name, 0xD2 i32
// offset). Returns (name, offset) pairs.
Result<std::vector<std::pair<std::string, int32_t>>> ReadMetaIndex(MsgpackCursor& c) {
  PATCHFEED_RETURN_IF_ERROR(c.Expect(0x93));
  PATCHFEED_RETURN_IF_ERROR(c.Expect(0xCD));
  PATCHFEED_RETURN_IF_ERROR(c.BE16().status());
  PATCHFEED_RETURN_IF_ERROR(c.Expect(0xDE));
  PATCHFEED_ASSIGN_OR_RETURN(const uint16_t n, c.BE16());
  if (n > 64)
    return DataLossError(StrCat("metalayer index lists ", n, " entries"));
  std::vector<std::pair<std::string, int32_t>> entries;
  for (uint16_t i = 0; i < n; ++i) {
    PATCHFEED_ASSIGN_OR_RETURN(std::string name, c.FixStr());
    PATCHFEED_RETURN_IF_ERROR(c.Expect(0xD2));
    PATCHFEED_ASSIGN_OR_RETURN(const int32_t offset, c.BE32());
    entries.emplace_back(std::move(name), offset);
  }
  return entries;
}

// Reads the 0xC6 + u32 length + content at `offset` of `bytes`.
Result<std::vector<std::byte>> ReadBin32(std::span<const std::byte> bytes, int64_t offset,
                                         const std::string& what) {
  if (offset < 0 || static_cast<uint64_t>(offset) + 5 > bytes.size() ||
      U8(bytes, static_cast<size_t>(offset)) != 0xC6) {
    return DataLossError(StrCat(what, ": no metalayer content at offset ", offset));
  }
  const uint32_t len = LoadBE<uint32_t>(bytes.data() + offset + 1);
  if (static_cast<uint64_t>(offset) + 5 + len > bytes.size()) {
    return DataLossError(StrCat(what, ": content of ", len, " bytes runs past the header"));
  }
  const auto* p = bytes.data() + offset + 5;
  return std::vector<std::byte>(p, p + len);
}

// The codec defaults for new chunks do not affect reading, but c-blosc2 builds a compression
// context from them when it opens a frame and refuses the frame if that fails: more than 6
// filters (byte 70), or a filter id no release defines (5-31, 37-159; 160+ are user ids).
Status CheckDefaultPipeline(std::span<const std::byte> h) {
  const uint8_t nfilters = U8(h, 70);
  if (nfilters > kMaxFilters) {
    return DataLossError(
        StrCat("frame header lists ", nfilters, " filters (at most ", kMaxFilters, ")"));
  }
  for (size_t i = 0; i < nfilters; ++i) {
    const uint8_t id = U8(h, 71 + i);
    if ((id >= 5 && id <= 31) || (id >= 37 && id <= 159)) {
      return DataLossError(StrCat("frame header: default filter ", i, " is ", id,
                                  ", an id no Blosc release defines"));
    }
  }
  return Status::Ok();
}

}  // namespace

const std::vector<std::byte>* FrameInfo::metalayer(std::string_view name) const {
  for (const auto& [n, content] : metalayers) {
    if (n == name)
      return &content;
  }
  return nullptr;
}

Status FrameReader::ParseHeader(std::span<const std::byte> h) {
  if (U8(h, 0) != 0x9E || U8(h, 1) != 0xA8 || std::memcmp(h.data() + 2, kMagic, 8) != 0) {
    return DataLossError("not a Blosc2 frame (no 'b2frame' magic at the start)");
  }
  if (U8(h, 10) != 0xD2 || U8(h, 15) != 0xCF || U8(h, 24) != 0xA4 || U8(h, 29) != 0xD3 ||
      U8(h, 38) != 0xD3 || U8(h, 47) != 0xD2 || U8(h, 52) != 0xD2 || U8(h, 57) != 0xD2 ||
      U8(h, 69) != 0xD8) {
    return DataLossError("frame header is corrupt (msgpack markers of the fixed part are wrong)");
  }
  FrameInfo& f = info_;
  f.header_len = LoadBE<int32_t>(h.data() + 11);
  f.frame_len = LoadBE<uint64_t>(h.data() + 16);
  const uint8_t general = U8(h, 25);
  f.version = general & 0x0F;
  const uint8_t frame_type = U8(h, 26);
  f.sparse = frame_type == 1;
  f.compcode = U8(h, 27) & 0x0F;
  f.clevel = U8(h, 27) >> 4;
  f.splitmode = (U8(h, 28) & 0x03) + 1;
  f.nbytes = LoadBE<int64_t>(h.data() + 30);
  f.cbytes = LoadBE<int64_t>(h.data() + 39);
  f.typesize = LoadBE<int32_t>(h.data() + 48);
  f.blocksize = LoadBE<int32_t>(h.data() + 53);
  f.chunksize = LoadBE<int32_t>(h.data() + 58);
  for (int i = 0; i < kMaxFilters; ++i) {
    f.filters[static_cast<size_t>(i)] = U8(h, static_cast<size_t>(71 + i));
    f.filters_meta[static_cast<size_t>(i)] = U8(h, static_cast<size_t>(79 + i));
  }
  if (f.compcode == 6)
    f.compcode = U8(h, 77);
  f.use_dict = (U8(h, 85) & 0x01) != 0;

  if (f.version < 1 || f.version > 3) {
    return UnimplementedError(StrCat("frame format version ", f.version));
  }
  if (frame_type > 1) {
    return DataLossError(
        StrCat("frame type ", frame_type, " is neither contiguous (0) nor sparse (1)"));
  }
  PATCHFEED_RETURN_IF_ERROR(CheckDefaultPipeline(h));
  if (((general >> 4) & 0x03) != 1) {
    return UnimplementedError(
        StrCat("frame offsets that are not 64-bit (general flags 0x", general, ")"));
  }
  if (f.header_len < kFixedHeaderLen || static_cast<uint64_t>(f.header_len) > f.frame_len) {
    return DataLossError(
        StrCat("header length ", f.header_len, " is inconsistent with frame length ", f.frame_len));
  }
  if (f.typesize <= 0)
    return DataLossError(StrCat("typesize ", f.typesize));
  if (f.nbytes < 0 || f.cbytes < 0 || f.chunksize < 0) {
    return DataLossError("negative sizes in the frame header");
  }
  if (f.chunksize == 0 && f.nbytes > 0) {
    return UnimplementedError("frames with chunks of variable size");
  }
  // (nbytes - 1) / chunksize + 1, not (nbytes + chunksize - 1): nbytes comes from the file and
  // may sit near INT64_MAX.
  f.nchunks = f.nbytes == 0 ? 0 : (f.nbytes - 1) / f.chunksize + 1;
  if (f.nchunks > (int64_t{1} << 31) / 8) {
    return DataLossError(StrCat(f.nchunks, " chunks exceed the format's limit"));
  }
  return Status::Ok();
}

Status FrameReader::ReadOffsetsAndTrailer() {
  FrameInfo& f = info_;
  std::vector<std::byte> scratch;
  // The whole header, metalayers included.
  PATCHFEED_ASSIGN_OR_RETURN(const auto header,
                             source_->Get(0, static_cast<size_t>(f.header_len), scratch));
  if (f.header_len > kFixedHeaderLen) {
    MsgpackCursor c(header, kFixedHeaderLen, "metalayer index");
    PATCHFEED_ASSIGN_OR_RETURN(const auto index, ReadMetaIndex(c));
    for (const auto& [name, offset] : index) {
      PATCHFEED_ASSIGN_OR_RETURN(auto content, ReadBin32(header, offset, "metalayer " + name));
      f.metalayers.emplace_back(name, std::move(content));
    }
  }
  // Trailer: its length sits in the last 23 bytes.
  PATCHFEED_ASSIGN_OR_RETURN(const auto tail,
                             source_->Get(f.frame_len - kTrailerTailLen, kTrailerTailLen, scratch));
  if (U8(tail, 0) != 0xCE)
    return DataLossError("frame trailer is corrupt (no 0xCE marker)");
  const uint32_t trailer_len = LoadBE<uint32_t>(tail.data() + 1);
  if (trailer_len < kMinTrailerLen || trailer_len > f.frame_len - kFixedHeaderLen) {
    return DataLossError(StrCat("trailer length ", trailer_len, " is impossible"));
  }
  const uint64_t trailer_start = f.frame_len - trailer_len;
  PATCHFEED_ASSIGN_OR_RETURN(const auto trailer, source_->Get(trailer_start, trailer_len, scratch));
  {
    MsgpackCursor c(trailer, 0, "trailer");
    PATCHFEED_RETURN_IF_ERROR(c.Expect(0x94));
    c = MsgpackCursor(trailer, 2, "trailer");  // skip the version byte
    PATCHFEED_ASSIGN_OR_RETURN(const auto index, ReadMetaIndex(c));
    for (const auto& entry : index)
      f.vlmetalayer_names.push_back(entry.first);
  }
  if (f.nchunks == 0)
    return Status::Ok();

  const uint64_t offsets_start =
      static_cast<uint64_t>(f.header_len) + (f.sparse ? 0 : static_cast<uint64_t>(f.cbytes));
  if (!f.sparse &&
      static_cast<uint64_t>(f.cbytes) > f.frame_len - static_cast<uint64_t>(f.header_len)) {
    return DataLossError(StrCat("chunk data of ", f.cbytes, " bytes does not fit in the frame"));
  }
  if (offsets_start >= trailer_start) {
    return DataLossError("chunk data and trailer overlap: no room for the offsets chunk");
  }
  PATCHFEED_ASSIGN_OR_RETURN(
      const auto offsets_chunk,
      source_->Get(offsets_start, static_cast<size_t>(trailer_start - offsets_start), scratch));
  // Check the size the offsets chunk claims before decoding it: a 40-byte chunk can claim 2 GB.
  auto offsets_sizes = ReadChunkSizes(offsets_chunk);
  if (!offsets_sizes.ok())
    return offsets_sizes.status().WithContext("offsets chunk");
  // c-blosc2 reads entries with the chunk's typesize (blosc2_getitem): it must be 8.
  if (static_cast<uint8_t>(offsets_chunk[3]) != 8) {
    return DataLossError(
        StrCat("offsets chunk has typesize ", static_cast<uint8_t>(offsets_chunk[3]), ", not 8"));
  }
  if (offsets_sizes->nbytes != f.nchunks * 8) {
    return DataLossError(StrCat("offsets chunk holds ", offsets_sizes->nbytes / 8, " entries for ",
                                f.nchunks, " chunks"));
  }
  auto decoded = DecompressChunk(offsets_chunk);
  if (!decoded.ok())
    return decoded.status().WithContext("offsets chunk");
  if (decoded->size() != static_cast<size_t>(f.nchunks) * 8) {
    return DataLossError(
        StrCat("offsets chunk holds ", decoded->size() / 8, " entries for ", f.nchunks, " chunks"));
  }
  offsets_.resize(static_cast<size_t>(f.nchunks));
  std::memcpy(offsets_.data(), decoded->data(), decoded->size());
  for (int64_t i = 0; i < f.nchunks; ++i) {
    const int64_t off = offsets_[static_cast<size_t>(i)];
    if (IsSpecialOffset(off)) {
      const auto type = static_cast<uint8_t>((static_cast<uint64_t>(off) >> 56) & 0x7F);
      if (type != 1 && type != 2 && type != 4) {
        return DataLossError(StrCat("chunk ", i, ": invalid special offset"));
      }
    } else if (!f.sparse && off > f.cbytes - kBlosc2HeaderSize) {
      // As c-blosc2 (validate_offsets_chunk): every stored chunk is at least 32 bytes.
      return DataLossError(StrCat("chunk ", i, ": offset ", off, " lies outside the chunk data (",
                                  f.cbytes, " bytes)"));
    }
  }
  return Status::Ok();
}

Result<FrameReader> FrameReader::FromSource(std::shared_ptr<storage::ByteSource> source) {
  FrameReader r;
  r.path_ = source->name();
  r.source_ = std::move(source);
  std::vector<std::byte> scratch;
  if (r.source_->size() < static_cast<uint64_t>(kFixedHeaderLen)) {
    return DataLossError(
        StrCat(r.path_, ": too short for a Blosc2 frame (", r.source_->size(), " bytes)"));
  }
  // A file long enough whose read fails (an I/O error, an object gone from its store) says
  // why itself.
  auto fixed = r.source_->Get(0, kFixedHeaderLen, scratch);
  if (!fixed.ok()) {
    return fixed.status();
  }
  Status st = r.ParseHeader(*fixed);
  if (st.ok() && r.info_.frame_len > r.source_->size()) {
    st = DataLossError(StrCat("frame is truncated: header says ", r.info_.frame_len,
                              " bytes, the file has ", r.source_->size()));
  }
  if (st.ok())
    st = r.ReadOffsetsAndTrailer();
  if (Status mapping = r.source_->CheckMapping(); !mapping.ok())
    return mapping;
  if (!st.ok())
    return st.WithContext(r.path_);
  return r;
}

Result<FrameReader> FrameReader::Open(const std::string& path, FrameOpenOptions options) {
  const storage::Store& store = *options.store;
  // Nothing there: the open below says so in the store's words.
  PATCHFEED_ASSIGN_OR_RETURN(const storage::EntryKind kind, store.Stat(path));
  const bool dir = kind == storage::EntryKind::kFolder;
  PATCHFEED_ASSIGN_OR_RETURN(const storage::EntryKind index_kind,
                             dir ? store.Stat(path + "/chunks.b2frame")
                                 : Result<storage::EntryKind>(storage::EntryKind::kNone));
  if (dir && index_kind != storage::EntryKind::kFile) {
    return NotFoundError(StrCat(path,
                                " is a folder but not a zarr array, OME-Zarr image or sparse .b2nd "
                                "frame (no .zarray, zarr.json or chunks.b2frame in it)"));
  }
  PATCHFEED_ASSIGN_OR_RETURN(auto source,
                             store.Open(dir ? path + "/chunks.b2frame" : path, options.io_mode));
  PATCHFEED_ASSIGN_OR_RETURN(FrameReader r, FromSource(std::move(source)));
  r.path_ = path;
  r.store_ = std::move(options.store);
  if (r.info_.sparse != dir) {
    return DataLossError(
        StrCat(path, (dir ? ": chunks.b2frame is not marked as a sparse frame"
                          : ": a sparse frame's index found outside its directory")));
  }
  return r;
}

int32_t FrameReader::chunk_nbytes(int64_t index) const {
  const int64_t rest = info_.nbytes - index * int64_t{info_.chunksize};
  return static_cast<int32_t>(std::min<int64_t>(rest, info_.chunksize));
}

std::string FrameReader::ChunkContext(int64_t index) const {
  return StrCat(path_, ": chunk ", index);
}

Result<std::span<const std::byte>> FrameReader::GetChunk(int64_t index,
                                                         std::vector<std::byte>& scratch,
                                                         const storage::ByteSource* via) const {
  const storage::ByteSource& source = via != nullptr ? *via : *source_;
  if (index < 0 || index >= info_.nchunks) {
    return InvalidArgumentError(
        StrCat(path_, ": chunk index ", index, " is outside [0, ", info_.nchunks, ")"));
  }
  const int64_t off = offsets_[static_cast<size_t>(index)];
  if (IsSpecialOffset(off)) {
    // Synthesize the equivalent 32-byte special chunk so callers handle one form only.
    const auto type = static_cast<uint8_t>((static_cast<uint64_t>(off) >> 56) & 0x7F);
    const int32_t nbytes = chunk_nbytes(index);
    scratch.assign(kBlosc2HeaderSize, std::byte{0});
    scratch[0] = std::byte{5};
    scratch[1] = std::byte{1};
    scratch[2] = std::byte{0x05 | 0x10};
    scratch[3] = std::byte{static_cast<uint8_t>(info_.typesize > 255 ? 1 : info_.typesize)};
    StoreLE<int32_t>(scratch.data() + 4, nbytes);
    StoreLE<int32_t>(scratch.data() + 8, info_.blocksize > 0 ? info_.blocksize : nbytes);
    StoreLE<int32_t>(scratch.data() + 12, kBlosc2HeaderSize);
    scratch[31] = std::byte{static_cast<uint8_t>(type << 4)};
    return std::span<const std::byte>(scratch.data(), kBlosc2HeaderSize);
  }
  Result<std::span<const std::byte>> bytes = InternalError("unset");
  if (info_.sparse) {
    char name[32];
    std::snprintf(name, sizeof(name), "/%08llX.chunk", static_cast<unsigned long long>(off));
    auto file = store_->Open(path_ + name, storage::IoMode::kPread);
    if (!file.ok())
      return file.status().WithContext(ChunkContext(index));
    const uint64_t size = (*file)->size();
    scratch.resize(size);
    Status st = (*file)->ReadAt(0, scratch);
    if (!st.ok())
      return st.WithContext(ChunkContext(index));
    bytes = std::span<const std::byte>(scratch.data(), size);
  } else {
    const uint64_t pos = static_cast<uint64_t>(info_.header_len) + static_cast<uint64_t>(off);
    // The chunk's own header says how long it is.
    std::byte head[kBlosc1HeaderSize];
    Status st = source.ReadAt(pos, head);
    if (!st.ok())
      return st.WithContext(ChunkContext(index));
    const int32_t cbytes = LoadLE<int32_t>(head + 12);
    if (cbytes < kBlosc2HeaderSize) {  // c-blosc2 stores no chunk shorter than 32 bytes
      return DataLossError(
          StrCat(ChunkContext(index), ": a stored chunk of ", cbytes, " bytes (at least 32)"));
    }
    if (off + cbytes > info_.cbytes) {
      return DataLossError(StrCat(ChunkContext(index), ": its ", cbytes, " bytes at offset ", off,
                                  " run past the chunk data section"));
    }
    bytes = source.Get(pos, static_cast<size_t>(cbytes), scratch);
    if (!bytes.ok())
      return bytes.status().WithContext(ChunkContext(index));
  }
  return bytes;
}

Result<std::span<const std::byte>> FrameReader::GetChunkBlocks(
    int64_t index, std::span<const int32_t> blocks, std::vector<std::byte>& scratch,
    ChunkHeader* header, const storage::ByteSource* via) const {
  // The whole chunk, parsed: mapped frames (nothing to save), special and small or odd chunks,
  // and any whose header fails, so that the error is the one a mapped file gives.
  const auto whole = [&]() -> Result<std::span<const std::byte>> {
    PATCHFEED_ASSIGN_OR_RETURN(const auto chunk, GetChunk(index, scratch, via));
    PATCHFEED_RETURN_IF_ERROR(ParseChunkHeader(chunk, header), ChunkContext(index));
    return chunk;
  };
  if (index < 0 || index >= info_.nchunks || info_.sparse ||
      IsSpecialOffset(offsets_[static_cast<size_t>(index)])) {
    return whole();
  }
  const int64_t off = offsets_[static_cast<size_t>(index)];
  const uint64_t pos = static_cast<uint64_t>(info_.header_len) + static_cast<uint64_t>(off);
  std::vector<int32_t> picked;
  PATCHFEED_ASSIGN_OR_RETURN(const auto image,
                             ReadChunkBlocksAt(
                                 via != nullptr ? *via : *source_, pos, info_.cbytes - off,
                                 [&](const ChunkHeader&, std::vector<int32_t>* out) {
                                   out->assign(blocks.begin(), blocks.end());
                                 },
                                 &picked, scratch, header),
                             ChunkContext(index));
  if (!image)
    return whole();
  return *image;
}

}  // namespace patchfeed::codec
