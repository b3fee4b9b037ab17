// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/precomputed/png_chunk.h"

#include <png.h>

#include <csetjmp>
#include <cstring>
#include <string>
#include <vector>

#include "common/str_cat.h"

namespace patchfeed::codec::precomputed {
namespace {

struct Reader {
  std::span<const std::byte> bytes;
  size_t at = 0;
  std::string error;
};

void ReadBytes(png_structp png, png_bytep out, png_size_t n) {
  auto* r = static_cast<Reader*>(png_get_io_ptr(png));
  if (n > r->bytes.size() - r->at)
    png_error(png, "the image is cut short");
  std::memcpy(out, r->bytes.data() + r->at, n);
  r->at += n;
}

void OnError(png_structp png, png_const_charp message) {
  static_cast<Reader*>(png_get_error_ptr(png))->error = message;
  png_longjmp(png, 1);
}

void OnWarning(png_structp, png_const_charp) {}

// The decode proper, rows into `pixels`; "" or what went wrong. No C++ object with a
// destructor is created in this frame after setjmp.
std::string Decode(Reader* reader, const Vec3& size, int channels, int bits,
                   unsigned char* pixels) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, reader, OnError, OnWarning);
  if (png == nullptr)
    return "libpng could not start";
  png_infop info = png_create_info_struct(png);
  if (info == nullptr || setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, info != nullptr ? &info : nullptr, nullptr);
    return reader->error.empty() ? "libpng failed" : reader->error;
  }
  png_set_read_fn(png, reader, ReadBytes);
  png_read_info(png, info);
  const auto width = static_cast<int64_t>(png_get_image_width(png, info));
  const auto height = static_cast<int64_t>(png_get_image_height(png, info));
  const int color = png_get_color_type(png, info);
  if (color == PNG_COLOR_TYPE_PALETTE)
    png_set_palette_to_rgb(png);
  if (color == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(png, info) < 8)
    png_set_expand_gray_1_2_4_to_8(png);
  if (png_get_bit_depth(png, info) == 16)
    png_set_swap(png);  // PNG stores 16-bit samples big-endian
  png_read_update_info(png, info);
  if (width != size[0] || height != size[1] * size[2] || png_get_channels(png, info) != channels ||
      png_get_bit_depth(png, info) != bits) {
    png_destroy_read_struct(&png, &info, nullptr);
    return StrCat("not ", size[0], " x ", size[1] * size[2], " pixels of ", channels, " ", bits,
                  "-bit channels");
  }
  const size_t row = static_cast<size_t>(width) * static_cast<size_t>(channels * bits / 8);
  for (int64_t y = 0; y < height; ++y)
    png_read_row(png, pixels + row * static_cast<size_t>(y), nullptr);
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return "";
}

}  // namespace

void InterleavedToPlanes(const std::byte* interleaved, size_t voxels, int64_t channels,
                         int64_t itemsize, std::byte* out) {
  const auto c = static_cast<size_t>(channels);
  const auto n = static_cast<size_t>(itemsize);
  for (size_t i = 0; i < voxels; ++i) {
    for (size_t k = 0; k < c; ++k)
      std::memcpy(out + (k * voxels + i) * n, interleaved + (i * c + k) * n, n);
  }
}

Status DecodePngChunk(std::span<const std::byte> png, const Vec3& size, int64_t channels,
                      int64_t itemsize, std::span<std::byte> out) {
  if (channels < 1 || channels > 4 || (itemsize != 1 && itemsize != 2)) {
    return DataLossError(StrCat("png chunks hold 1 to 4 channels of uint8 or uint16, not ",
                                channels, " of ", itemsize, " bytes"));
  }
  const size_t voxels = static_cast<size_t>(size[0] * size[1] * size[2]);
  if (out.size() != voxels * static_cast<size_t>(channels * itemsize))
    return InvalidArgumentError("png chunk: the output is not the chunk's size");
  std::vector<std::byte> interleaved(channels == 1 ? 0 : out.size());
  auto* pixels = reinterpret_cast<unsigned char*>(channels == 1 ? out.data() : interleaved.data());
  Reader reader{png, 0, {}};
  const std::string failed =
      Decode(&reader, size, static_cast<int>(channels), static_cast<int>(8 * itemsize), pixels);
  if (!failed.empty())
    return DataLossError(StrCat("png chunk: ", failed));
  if (channels > 1)
    InterleavedToPlanes(interleaved.data(), voxels, channels, itemsize, out.data());
  return Status::Ok();
}

}  // namespace patchfeed::codec::precomputed
