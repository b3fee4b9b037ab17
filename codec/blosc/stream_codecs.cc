// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/blosc/stream_codecs.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <lz4.h>
#include <lz4hc.h>
#include <zlib.h>
#define ZDICT_STATIC_LINKING_ONLY
#include <zdict.h>

#include <zstd.h>
#ifdef PATCHFEED_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include "codec/blosc/blosclz.h"
#include "codec/blosc/internal/zstd_frame_check.h"
#include "common/str_cat.h"

namespace patchfeed::codec {
namespace {

const char* Chars(const std::byte* p) { return reinterpret_cast<const char*>(p); }
char* Chars(std::byte* p) { return reinterpret_cast<char*>(p); }

// Every size handed to LZ4 and zlib is an int32 in the chunk format; these casts are exact.
int Int(size_t n) { return static_cast<int>(n); }

// c-blosc2's mapping of the Blosc level onto zstd's: 2c - 1 below 9, the maximum at 9.
int ZstdLevel(int clevel) { return clevel < 9 ? 2 * clevel - 1 : ZSTD_maxCLevel(); }

Status Corrupt(const char* codec, const std::string& what) {
  return DataLossError(StrCat(codec, " stream is corrupt: ", what));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Decoding

struct StreamDecoder::Contexts {
  ZSTD_DCtx* zstd = nullptr;
  // Older libzstd lets some corrupt frames decode; they are then checked bit for bit.
  bool check_zstd_frames = internal_codec::LinkedZstdMissesCorruption();
  // The last zstd dictionary seen, digested once: chunks of one frame usually share none, but
  // a block-wise reader decodes many blocks of one chunk in a row.
  ZSTD_DDict* ddict = nullptr;
  std::vector<std::byte> ddict_bytes;
#ifdef PATCHFEED_HAVE_LIBDEFLATE
  libdeflate_decompressor* deflate = nullptr;
#endif

  ~Contexts() {
    ZSTD_freeDCtx(zstd);
    ZSTD_freeDDict(ddict);
#ifdef PATCHFEED_HAVE_LIBDEFLATE
    if (deflate != nullptr)
      libdeflate_free_decompressor(deflate);
#endif
  }

  const ZSTD_DDict* DictFor(std::span<const std::byte> dict) {
    if (ddict != nullptr && ddict_bytes.size() == dict.size() &&
        std::memcmp(ddict_bytes.data(), dict.data(), dict.size()) == 0) {
      return ddict;
    }
    ZSTD_freeDDict(ddict);
    ddict = ZSTD_createDDict(dict.data(), dict.size());
    ddict_bytes.assign(dict.begin(), dict.end());
    return ddict;
  }
};

StreamDecoder::StreamDecoder() : ctx_(std::make_unique<Contexts>()) {}
StreamDecoder::~StreamDecoder() = default;
StreamDecoder::StreamDecoder(StreamDecoder&&) noexcept = default;
StreamDecoder& StreamDecoder::operator=(StreamDecoder&&) noexcept = default;

Status StreamDecoder::Decode(CodecFormat format, std::span<const std::byte> src,
                             std::span<std::byte> dst, std::span<const std::byte> dict) {
  switch (format) {
    case CodecFormat::kBloscLZ:
      if (!BloscLZDecode(src.data(), src.size(), dst.data(), dst.size())) {
        return Corrupt("blosclz", StrCat("does not decode to ", dst.size(), " bytes"));
      }
      return Status::Ok();

    case CodecFormat::kLZ4: {
      const int n = dict.empty() ? LZ4_decompress_safe(Chars(src.data()), Chars(dst.data()),
                                                       Int(src.size()), Int(dst.size()))
                                 : LZ4_decompress_safe_usingDict(
                                       Chars(src.data()), Chars(dst.data()), Int(src.size()),
                                       Int(dst.size()), Chars(dict.data()), Int(dict.size()));
      if (n != Int(dst.size())) {
        return Corrupt("lz4", StrCat("decoded ", n, " bytes, expected ", dst.size()));
      }
      return Status::Ok();
    }

    case CodecFormat::kZlib: {
#ifdef PATCHFEED_HAVE_LIBDEFLATE
      // libdeflate decodes whole buffers 2-3x faster than zlib's streaming inflate.
      if (ctx_->deflate == nullptr)
        ctx_->deflate = libdeflate_alloc_decompressor();
      size_t actual = 0;
      const libdeflate_result r = libdeflate_zlib_decompress(ctx_->deflate, src.data(), src.size(),
                                                             dst.data(), dst.size(), &actual);
      if (r != LIBDEFLATE_SUCCESS || actual != dst.size()) {
        return Corrupt("zlib", StrCat("libdeflate result ", static_cast<int>(r)));
      }
#else
      uLongf actual = static_cast<uLongf>(dst.size());
      const int r =
          uncompress(reinterpret_cast<Bytef*>(dst.data()), &actual,
                     reinterpret_cast<const Bytef*>(src.data()), static_cast<uLong>(src.size()));
      if (r != Z_OK || actual != dst.size()) {
        return Corrupt("zlib", StrCat("inflate result ", r));
      }
#endif
      return Status::Ok();
    }

    case CodecFormat::kZstd: {
      if (ctx_->zstd == nullptr)
        ctx_->zstd = ZSTD_createDCtx();
      size_t n;
      if (dict.empty()) {
        n = ZSTD_decompressDCtx(ctx_->zstd, dst.data(), dst.size(), src.data(), src.size());
      } else {
        const ZSTD_DDict* ddict = ctx_->DictFor(dict);
        if (ddict == nullptr)
          return Corrupt("zstd", "the chunk's dictionary is invalid");
        n = ZSTD_decompress_usingDDict(ctx_->zstd, dst.data(), dst.size(), src.data(), src.size(),
                                       ddict);
      }
      if (ZSTD_isError(n))
        return Corrupt("zstd", ZSTD_getErrorName(n));
      if (n != dst.size()) {
        return Corrupt("zstd", StrCat("decoded ", n, " bytes, expected ", dst.size()));
      }
      if (ctx_->check_zstd_frames) {
        const Status st = internal_codec::CheckZstdFrames(src, dict);
        if (!st.ok())
          return Corrupt("zstd", std::string(st.message()));
      }
      return Status::Ok();
    }

    case CodecFormat::kSnappy:
    case CodecFormat::kUserDefined:
      break;
  }
  return UnimplementedError(StrCat("codec format ", static_cast<int>(format)));
}

Status StreamDecoder::DecodeGzip(std::span<const std::byte> src, std::span<std::byte> dst) {
#ifdef PATCHFEED_HAVE_LIBDEFLATE
  if (ctx_->deflate == nullptr)
    ctx_->deflate = libdeflate_alloc_decompressor();
  size_t actual = 0;
  const libdeflate_result r = libdeflate_gzip_decompress(ctx_->deflate, src.data(), src.size(),
                                                         dst.data(), dst.size(), &actual);
  if (r != LIBDEFLATE_SUCCESS || actual != dst.size())
    return Corrupt("gzip", StrCat("libdeflate result ", static_cast<int>(r)));
  return Status::Ok();
#else
  z_stream z{};
  // 16 + MAX_WBITS: a gzip wrapper, not zlib's.
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
    return ResourceExhaustedError("gzip: inflateInit2 failed");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(src.data()));
  z.avail_in = static_cast<uInt>(src.size());
  z.next_out = reinterpret_cast<Bytef*>(dst.data());
  z.avail_out = static_cast<uInt>(dst.size());
  const int r = inflate(&z, Z_FINISH);
  const size_t actual = z.total_out;
  inflateEnd(&z);
  if (r != Z_STREAM_END || actual != dst.size())
    return Corrupt("gzip", StrCat("inflate result ", r));
  return Status::Ok();
#endif
}

// ---------------------------------------------------------------------------------------------
// Encoding

struct StreamEncoder::Contexts {
  ZSTD_CCtx* zstd = nullptr;
  ZSTD_CDict* cdict = nullptr;
  std::vector<std::byte> dict;
  Codec dict_codec = Codec::kBloscLZ;
  std::unique_ptr<LZ4_stream_t> lz4;
  std::unique_ptr<LZ4_streamHC_t> lz4hc;
#ifdef PATCHFEED_HAVE_LIBDEFLATE
  libdeflate_compressor* deflate = nullptr;
  int deflate_level = -1;
#endif

  ~Contexts() {
    ZSTD_freeCCtx(zstd);
    ZSTD_freeCDict(cdict);
#ifdef PATCHFEED_HAVE_LIBDEFLATE
    if (deflate != nullptr)
      libdeflate_free_compressor(deflate);
#endif
  }
};

StreamEncoder::StreamEncoder() : ctx_(std::make_unique<Contexts>()) {}
StreamEncoder::~StreamEncoder() = default;
StreamEncoder::StreamEncoder(StreamEncoder&&) noexcept = default;
StreamEncoder& StreamEncoder::operator=(StreamEncoder&&) noexcept = default;

Status StreamEncoder::SetDictionary(Codec codec, int clevel, std::span<const std::byte> dict) {
  ZSTD_freeCDict(ctx_->cdict);
  ctx_->cdict = nullptr;
  ctx_->dict.assign(dict.begin(), dict.end());
  ctx_->dict_codec = codec;
  if (dict.empty())
    return Status::Ok();
  switch (codec) {
    case Codec::kZstd:
      ctx_->cdict = ZSTD_createCDict(dict.data(), dict.size(), ZstdLevel(clevel));
      if (ctx_->cdict == nullptr)
        return InvalidArgumentError("zstd rejected the dictionary");
      return Status::Ok();
    case Codec::kLZ4:
    case Codec::kLZ4HC:
      return Status::Ok();
    case Codec::kBloscLZ:
    case Codec::kZlib:
      break;
  }
  return InvalidArgumentError(
      StrCat("codec ", CodecName(codec), " has no dictionary support (use zstd, lz4 or lz4hc)"));
}

size_t StreamEncoder::Encode(Codec codec, int clevel, std::span<const std::byte> src,
                             std::span<std::byte> dst) {
  if (dst.empty())
    return 0;
  const bool with_dict = !ctx_->dict.empty();
  switch (codec) {
    case Codec::kBloscLZ:
      return BloscLZEncode(clevel, src.data(), src.size(), dst.data(), dst.size());

    case Codec::kLZ4: {
      const int accel = std::max(1, 10 - clevel);  // c-blosc2's choice
      int n;
      if (with_dict) {
        if (!ctx_->lz4)
          ctx_->lz4 = std::make_unique<LZ4_stream_t>();
        LZ4_initStream(ctx_->lz4.get(), sizeof(LZ4_stream_t));
        LZ4_loadDict(ctx_->lz4.get(), Chars(ctx_->dict.data()), Int(ctx_->dict.size()));
        n = LZ4_compress_fast_continue(ctx_->lz4.get(), Chars(src.data()), Chars(dst.data()),
                                       Int(src.size()), Int(dst.size()), accel);
      } else {
        n = LZ4_compress_fast(Chars(src.data()), Chars(dst.data()), Int(src.size()),
                              Int(dst.size()), accel);
      }
      return n > 0 ? static_cast<size_t>(n) : 0;
    }

    case Codec::kLZ4HC: {
      int n;
      if (with_dict) {
        if (!ctx_->lz4hc)
          ctx_->lz4hc = std::make_unique<LZ4_streamHC_t>();
        LZ4_initStreamHC(ctx_->lz4hc.get(), sizeof(LZ4_streamHC_t));
        LZ4_resetStreamHC_fast(ctx_->lz4hc.get(), clevel);
        LZ4_loadDictHC(ctx_->lz4hc.get(), Chars(ctx_->dict.data()), Int(ctx_->dict.size()));
        n = LZ4_compress_HC_continue(ctx_->lz4hc.get(), Chars(src.data()), Chars(dst.data()),
                                     Int(src.size()), Int(dst.size()));
      } else {
        n = LZ4_compress_HC(Chars(src.data()), Chars(dst.data()), Int(src.size()), Int(dst.size()),
                            clevel);
      }
      return n > 0 ? static_cast<size_t>(n) : 0;
    }

    case Codec::kZlib: {
#ifdef PATCHFEED_HAVE_LIBDEFLATE
      if (ctx_->deflate == nullptr || ctx_->deflate_level != clevel) {
        if (ctx_->deflate != nullptr)
          libdeflate_free_compressor(ctx_->deflate);
        ctx_->deflate = libdeflate_alloc_compressor(clevel);
        ctx_->deflate_level = clevel;
      }
      return libdeflate_zlib_compress(ctx_->deflate, src.data(), src.size(), dst.data(),
                                      dst.size());
#else
      uLongf n = static_cast<uLongf>(dst.size());
      const int r = compress2(reinterpret_cast<Bytef*>(dst.data()), &n,
                              reinterpret_cast<const Bytef*>(src.data()),
                              static_cast<uLong>(src.size()), clevel);
      return r == Z_OK ? static_cast<size_t>(n) : 0;
#endif
    }

    case Codec::kZstd: {
      if (ctx_->zstd == nullptr)
        ctx_->zstd = ZSTD_createCCtx();
      const size_t n = with_dict && ctx_->cdict != nullptr
                           ? ZSTD_compress_usingCDict(ctx_->zstd, dst.data(), dst.size(),
                                                      src.data(), src.size(), ctx_->cdict)
                           : ZSTD_compressCCtx(ctx_->zstd, dst.data(), dst.size(), src.data(),
                                               src.size(), ZstdLevel(clevel));
      return ZSTD_isError(n) ? 0 : n;
    }
  }
  return 0;
}

std::vector<std::byte> TrainZstdDictionary(std::span<const std::byte> samples,
                                           std::span<const size_t> sample_sizes, size_t max_size) {
  std::vector<std::byte> dict(max_size);
  const size_t n =
      ZDICT_trainFromBuffer(dict.data(), dict.size(), samples.data(), sample_sizes.data(),
                            static_cast<unsigned>(sample_sizes.size()));
  if (ZDICT_isError(n))
    return {};
  dict.resize(n);
  return dict;
}

}  // namespace patchfeed::codec
