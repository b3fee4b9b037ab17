// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "storage/remote/s3_xml.h"

#include <cstdint>

#include "common/str_cat.h"

namespace patchfeed::storage {
namespace {

constexpr size_t kMaxDepth = 32;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool IsNameChar(char c) { return !IsSpace(c) && c != '/' && c != '>' && c != '<' && c != '='; }

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// A document cursor that knows how to fail with its position.
class XmlCursor {
 public:
  explicit XmlCursor(std::string_view doc) : doc_(doc) {}

  bool done() const { return pos_ >= doc_.size(); }
  size_t pos() const { return pos_; }
  bool LookingAt(std::string_view s) const { return doc_.substr(pos_, s.size()) == s; }
  std::string_view rest() const { return doc_.substr(pos_); }
  void Advance(size_t n) { pos_ += n; }

  Status Error(std::string_view what) const {
    return DataLossError(StrCat("malformed XML at byte ", pos_, ": ", what));
  }

  // Moves past the next `terminator`; an error when there is none.
  Status SkipPast(std::string_view terminator, std::string_view what) {
    const size_t end = doc_.find(terminator, pos_);
    if (end == std::string_view::npos)
      return Error(StrCat(what, " is not closed by '", terminator, "'"));
    pos_ = end + terminator.size();
    return Status::Ok();
  }

  // Decodes text up to the next '<' (or the end) into `out`.
  Status ReadText(std::string& out) {
    while (pos_ < doc_.size() && doc_[pos_] != '<') {
      const char c = doc_[pos_];
      if (c != '&') {
        out.push_back(c);
        ++pos_;
        continue;
      }
      const size_t semi = doc_.find(';', pos_);
      if (semi == std::string_view::npos || semi - pos_ > 12)
        return Error("a character reference ('&') is not closed by ';'");
      const std::string_view name = doc_.substr(pos_ + 1, semi - pos_ - 1);
      PATCHFEED_RETURN_IF_ERROR(AppendReference(name, out));
      pos_ = semi + 1;
    }
    return Status::Ok();
  }

 private:
  Status AppendReference(std::string_view name, std::string& out) const {
    if (name == "amp") {
      out.push_back('&');
    } else if (name == "lt") {
      out.push_back('<');
    } else if (name == "gt") {
      out.push_back('>');
    } else if (name == "quot") {
      out.push_back('"');
    } else if (name == "apos") {
      out.push_back('\'');
    } else if (name.size() >= 2 && name[0] == '#') {
      const bool hex = name[1] == 'x';
      const std::string_view digits = name.substr(hex ? 2 : 1);
      uint32_t cp = 0;
      for (const char d : digits) {
        uint32_t v = 0;
        if (d >= '0' && d <= '9') {
          v = static_cast<uint32_t>(d - '0');
        } else if (hex && d >= 'a' && d <= 'f') {
          v = static_cast<uint32_t>(d - 'a' + 10);
        } else if (hex && d >= 'A' && d <= 'F') {
          v = static_cast<uint32_t>(d - 'A' + 10);
        } else {
          return Error(StrCat("'&", name, ";' is not a character reference"));
        }
        cp = cp * (hex ? 16 : 10) + v;  // checked below each digit, so it cannot wrap
        if (cp > 0x10FFFF)
          return Error(StrCat("'&", name, ";' is past the last Unicode code point"));
      }
      if (digits.empty() || cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF))
        return Error(StrCat("'&", name, ";' is not a character XML allows"));
      AppendUtf8(out, cp);
    } else {
      return Error(StrCat("'&", name, ";' is not a predefined entity"));
    }
    return Status::Ok();
  }

  std::string_view doc_;
  size_t pos_ = 0;
};

struct Frame {
  std::string text;
  bool has_child = false;
};

}  // namespace

Status ScanXmlLeaves(std::string_view document,
                     const std::function<Status(std::span<const std::string_view> path,
                                                std::string&& text)>& on_leaf) {
  XmlCursor cursor(document);
  std::vector<std::string_view> path;
  std::vector<Frame> frames;
  bool root_seen = false;
  while (!cursor.done()) {
    if (!cursor.LookingAt("<")) {
      if (frames.empty()) {  // outside the root only white space may stand
        std::string stray;
        PATCHFEED_RETURN_IF_ERROR(cursor.ReadText(stray));
        for (const char c : stray) {
          if (!IsSpace(c))
            return cursor.Error("text outside the root element");
        }
      } else {
        PATCHFEED_RETURN_IF_ERROR(cursor.ReadText(frames.back().text));
      }
      continue;
    }
    if (cursor.LookingAt("<?")) {
      PATCHFEED_RETURN_IF_ERROR(cursor.SkipPast("?>", "a processing instruction"));
    } else if (cursor.LookingAt("<!--")) {
      PATCHFEED_RETURN_IF_ERROR(cursor.SkipPast("-->", "a comment"));
    } else if (cursor.LookingAt("<![CDATA[")) {
      if (frames.empty())
        return cursor.Error("CDATA outside the root element");
      cursor.Advance(9);
      const std::string_view rest = cursor.rest();
      const size_t end = rest.find("]]>");
      if (end == std::string_view::npos)
        return cursor.Error("CDATA is not closed by ']]>'");
      frames.back().text.append(rest.substr(0, end));
      cursor.Advance(end + 3);
    } else if (cursor.LookingAt("<!")) {
      return cursor.Error("document type declarations are not accepted");
    } else if (cursor.LookingAt("</")) {
      cursor.Advance(2);
      const std::string_view rest = cursor.rest();
      size_t n = 0;
      while (n < rest.size() && IsNameChar(rest[n]))
        ++n;
      const std::string_view name = rest.substr(0, n);
      if (frames.empty() || name != path.back())
        return cursor.Error(StrCat("'</", name, ">' closes no open element of that name"));
      cursor.Advance(n);
      while (!cursor.done() && IsSpace(cursor.rest()[0]))
        cursor.Advance(1);
      if (!cursor.LookingAt(">"))
        return cursor.Error(StrCat("'</", name, "' is not closed by '>'"));
      cursor.Advance(1);
      if (!frames.back().has_child)
        PATCHFEED_RETURN_IF_ERROR(on_leaf(path, std::move(frames.back().text)));
      frames.pop_back();
      path.pop_back();
    } else {
      cursor.Advance(1);
      const std::string_view rest = cursor.rest();
      size_t n = 0;
      while (n < rest.size() && IsNameChar(rest[n]))
        ++n;
      if (n == 0)
        return cursor.Error("'<' starts no element name");
      if (frames.empty() && root_seen)
        return cursor.Error("a second root element");
      const std::string_view name = rest.substr(0, n);
      cursor.Advance(n);
      // Attributes are skipped; '>' inside a quoted value does not end the tag.
      char quote = 0;
      size_t tag_end = 0;
      const std::string_view attrs = cursor.rest();
      for (; tag_end < attrs.size(); ++tag_end) {
        const char c = attrs[tag_end];
        if (quote != 0) {
          if (c == quote)
            quote = 0;
        } else if (c == '"' || c == '\'') {
          quote = c;
        } else if (c == '>' || c == '<') {
          break;
        }
      }
      if (tag_end == attrs.size() || attrs[tag_end] != '>')
        return cursor.Error(StrCat("the tag '<", name, "' is not closed by '>'"));
      const bool self_closing = tag_end > 0 && attrs[tag_end - 1] == '/';
      cursor.Advance(tag_end + 1);
      if (!frames.empty())
        frames.back().has_child = true;
      root_seen = true;
      if (path.size() == kMaxDepth)
        return cursor.Error(StrCat("elements nest deeper than ", kMaxDepth));
      path.push_back(name);
      if (self_closing) {
        PATCHFEED_RETURN_IF_ERROR(on_leaf(path, std::string()));
        path.pop_back();
      } else {
        frames.emplace_back();
      }
    }
  }
  if (!frames.empty())
    return cursor.Error(StrCat("the element '", path.back(), "' is not closed"));
  if (!root_seen)
    return cursor.Error("no root element");
  return Status::Ok();
}

std::optional<S3ErrorBody> ParseS3Error(std::string_view body) {
  S3ErrorBody error;
  const Status status = ScanXmlLeaves(
      body, [&](std::span<const std::string_view> path, std::string&& text) -> Status {
        if (path.size() == 2 && path[0] == "Error") {
          if (path[1] == "Code")
            error.code = std::move(text);
          else if (path[1] == "Message")
            error.message = std::move(text);
        }
        return Status::Ok();
      });
  if (!status.ok() || error.code.empty())
    return std::nullopt;
  return error;
}

Result<ListPage> ParseListObjectsV2(std::string_view body, std::string_view label) {
  ListPage page;
  std::string_view root;
  const Status status = ScanXmlLeaves(
      body, [&](std::span<const std::string_view> path, std::string&& text) -> Status {
        root = path[0];
        if (root != "ListBucketResult")
          return DataLossError(StrCat("the root element is <", root, ">, not <ListBucketResult>"));
        if (path.size() == 3 && path[1] == "Contents" && path[2] == "Key") {
          page.keys.push_back(std::move(text));
        } else if (path.size() == 3 && path[1] == "CommonPrefixes" && path[2] == "Prefix") {
          // A folder is a name up to the delimiter we sent ('/'), which it ends with.
          if (text.empty() || text.back() != '/') {
            return DataLossError(StrCat("a folder (CommonPrefixes) '", text.substr(0, 64),
                                        text.size() > 64 ? "...'" : "'",
                                        " does not end with the delimiter '/'"));
          }
          page.prefixes.push_back(std::move(text));
        } else if (path.size() == 2 && path[1] == "IsTruncated") {
          if (text != "true" && text != "false")
            return DataLossError(StrCat("IsTruncated is '", text, "', not true or false"));
          page.truncated = text == "true";
        } else if (path.size() == 2 && path[1] == "NextContinuationToken") {
          page.next_token = std::move(text);
        }
        return Status::Ok();
      });
  const std::string context = StrCat("the listing of ", label, " is not a ListObjectsV2 answer");
  PATCHFEED_RETURN_IF_ERROR(status, context);
  if (page.truncated && page.next_token.empty())
    return DataLossError(StrCat(context, ": it is truncated but names no continuation token"));
  return page;
}

}  // namespace patchfeed::storage
