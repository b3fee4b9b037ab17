// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// libFuzzer target: what an object store or web server sends back is untrusted. Any byte
// string as an S3 error body, a ListObjectsV2 page or a Content-Range value must parse or be
// refused, never crash, hang or read out of bounds (ASan/UBSan); what parses must be
// consistent: a listing's folders end with '/', a truncated page carries its continuation
// token, a parsed range lies inside its total. Seed corpus: tests/fuzz/s3_answer_corpus (answers
// SeaweedFS and S3's documentation show). CI runs it for a bounded number of inputs.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "storage/remote/http_headers.h"
#include "storage/remote/s3_xml.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace patchfeed::storage;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ParseS3Error(text);
  const auto page = ParseListObjectsV2(text, "fuzz");
  if (page.ok()) {
    for (const auto& prefix : page->prefixes) {
      if (prefix.empty() || prefix.back() != '/')
        std::abort();
    }
    if (page->truncated && page->next_token.empty())
      std::abort();
  }
  if (const auto range = ParseContentRange(text)) {
    if (range->first && range->last && *range->last < *range->first)
      std::abort();
    if (range->last && range->total && *range->last >= *range->total)
      std::abort();
  }
  (void)CheckContentRange(text, 0, 100, "fuzz");
  return 0;
}
