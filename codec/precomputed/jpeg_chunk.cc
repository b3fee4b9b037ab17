// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/precomputed/jpeg_chunk.h"

#include <jpeglib.h>

#include <csetjmp>
#include <cstdio>
#include <string_view>
#include <vector>

#include "codec/precomputed/png_chunk.h"
#include "common/str_cat.h"

namespace patchfeed::codec::precomputed {
namespace {

// libjpeg reports errors by calling error_exit, which must not return: it jumps back to the
// decode with the message kept. No C++ object with a destructor lives in the frame that calls
// setjmp across the jump (Decode below keeps them in its caller).
struct ErrorManager {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void OnError(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

void OnWarning(j_common_ptr, int) {}  // corrupt-data warnings: the row check below decides

// The decode proper: rows into `pixels` (rows * width * components). Returns an empty string,
// or what went wrong.
const char* Decode(std::span<const std::byte> jpeg, const Vec3& size, int channels,
                   unsigned char* pixels, ErrorManager* err) {
  jpeg_decompress_struct cinfo;
  cinfo.err = jpeg_std_error(&err->pub);
  err->pub.error_exit = OnError;
  err->pub.emit_message = OnWarning;
  err->message[0] = '\0';
  if (setjmp(err->jump)) {
    jpeg_destroy_decompress(&cinfo);
    return err->message;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char*>(jpeg.data()),
               static_cast<unsigned long>(jpeg.size()));
  jpeg_read_header(&cinfo, TRUE);
  if (static_cast<int64_t>(cinfo.image_width) != size[0] ||
      static_cast<int64_t>(cinfo.image_height) != size[1] * size[2] ||
      cinfo.num_components != channels) {
    jpeg_destroy_decompress(&cinfo);
    return "size";
  }
  cinfo.out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_start_decompress(&cinfo);
  const size_t row = static_cast<size_t>(size[0]) * static_cast<size_t>(channels);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW at = pixels + row * cinfo.output_scanline;
    jpeg_read_scanlines(&cinfo, &at, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return "";
}

}  // namespace

Status DecodeJpegChunk(std::span<const std::byte> jpeg, const Vec3& size, int64_t channels,
                       std::span<std::byte> out) {
  if (channels != 1 && channels != 3) {
    return DataLossError(StrCat("jpeg chunks hold 1 or 3 channels, the volume has ", channels));
  }
  const size_t voxels = static_cast<size_t>(size[0] * size[1] * size[2]);
  if (out.size() != voxels * static_cast<size_t>(channels))
    return InvalidArgumentError("jpeg chunk: the output is not the chunk's size");
  // Interleaved components as decoded (z, y, x, c); one channel is already the raw layout.
  std::vector<unsigned char> interleaved(channels == 1 ? 0 : out.size());
  unsigned char* pixels =
      channels == 1 ? reinterpret_cast<unsigned char*>(out.data()) : interleaved.data();
  ErrorManager err;
  const char* failed = Decode(jpeg, size, static_cast<int>(channels), pixels, &err);
  if (std::string_view(failed) == "size") {
    return DataLossError(StrCat("a jpeg chunk that is not ", size[0], " x ", size[1] * size[2],
                                " pixels of ", channels, " components"));
  }
  if (failed[0] != '\0')
    return DataLossError(StrCat("jpeg chunk: ", failed));
  if (channels == 3) {
    InterleavedToPlanes(reinterpret_cast<const std::byte*>(interleaved.data()), voxels, 3, 1,
                        out.data());
  }
  return Status::Ok();
}

}  // namespace patchfeed::codec::precomputed
