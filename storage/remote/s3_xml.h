// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_STORAGE_REMOTE_S3_XML_H_
#define PATCHFEED_STORAGE_REMOTE_S3_XML_H_

/// \file
/// The two XML documents an S3-compatible store sends that patchfeed reads: error bodies
/// (`<Error><Code>NoSuchKey</Code><Message>...`) and ListObjectsV2 pages.
///
/// A deliberately small XML reader, not a general one: elements, attributes (skipped), text,
/// CDATA, comments, processing instructions and the five predefined and numeric character
/// references. A DOCTYPE is refused (no entity expansion), nesting is bounded, and every
/// malformed document is an error, never a crash or an unbounded allocation: the bodies come
/// from a server and are untrusted. Stateless, safe from any thread.

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace patchfeed::storage {

/// Calls `on_leaf` for each element without child elements, in document order, with the
/// names from the root down to it and its text (character references decoded). kDataLoss
/// "malformed XML at byte N: ..." for anything that is not a well-formed document of one root
/// element, or that nests deeper than 32 elements; the first error `on_leaf` returns stops it.
Status ScanXmlLeaves(std::string_view document,
                     const std::function<Status(std::span<const std::string_view> path,
                                                std::string&& text)>& on_leaf);

struct S3ErrorBody {
  std::string code;     ///< "NoSuchKey", "AccessDenied", "SignatureDoesNotMatch", ...
  std::string message;  ///< the store's sentence
};

/// The code and message of an S3 `<Error>` document; nullopt when `body` is not one (empty,
/// HTML from a web server, malformed).
std::optional<S3ErrorBody> ParseS3Error(std::string_view body);

/// One page of a ListObjectsV2 answer.
struct ListPage {
  std::vector<std::string> keys;      ///< Contents/Key: objects
  std::vector<std::string> prefixes;  ///< CommonPrefixes/Prefix: "folders", ending in '/'
  bool truncated = false;             ///< IsTruncated: more pages follow
  std::string next_token;             ///< NextContinuationToken for the next page
};

/// Parses a `<ListBucketResult>`. kDataLoss naming `label` when the document is malformed, has
/// another root, an IsTruncated that is neither true nor false, or is truncated without a
/// continuation token.
Result<ListPage> ParseListObjectsV2(std::string_view body, std::string_view label);

}  // namespace patchfeed::storage

#endif  // PATCHFEED_STORAGE_REMOTE_S3_XML_H_
