// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/internal/sample_reader.h"

#include <optional>
#include <string>
#include <utility>

#include "common/str_cat.h"
#include "loader/internal/nonfinite_count.h"

namespace patchfeed::loader::internal_loader {
namespace {

// The part of read.dst that `piece` (array coordinates) fills.
StridedView PieceView(const SampleRead& read, const codec::BoxPiece& piece) {
  StridedView v;
  v.data = read.dst.data;
  v.byte_strides = read.dst.byte_strides;
  for (size_t d = 0; d < read.box.start.size(); ++d) {
    v.data += (piece.lo[d] - read.box.start[d]) * read.dst.byte_strides[d];
    v.shape.push_back(piece.hi[d] - piece.lo[d]);
  }
  return v;
}

}  // namespace

template <typename ReadFn>
bool SampleReader::WithArray(ReadRound& round, const SampleRead& read,
                             const codec::BoxPiece* first_piece, ReadFn&& read_fn) {
  if (round.cancelled()) {
    return false;
  }
  const OutputArray& out = parts_.outputs[read.output];
  auto reader = parts_.files->Get(read.case_index, out.dataset_array);
  if (!reader.ok()) {
    Fail(round, read, first_piece, reader.status());
    return false;
  }
  codec::BoxReadScratch& scratch = scratch_.local();
  const int64_t read_before = scratch.compressed_bytes_read();
  const int64_t decoded_before = scratch.bytes_decoded();
  std::optional<codec::BoxPiece> failed_piece;
  scratch.source = read.fetched.get();
  scratch.store = read.fetched_store.get();
  const Status status = read_fn(**reader, scratch, &failed_piece);
  scratch.source = nullptr;
  scratch.store = nullptr;
  MetricsCounters::Add(counters_->bytes_decoded, scratch.bytes_decoded() - decoded_before);
  MetricsCounters::Add(counters_->bytes_read, scratch.compressed_bytes_read() - read_before);
  if (!status.ok()) {
    Fail(round, read, failed_piece ? &*failed_piece : nullptr, status);
    return false;
  }
  return true;
}

bool SampleReader::ReadRun(ReadRound& round, const SampleRead& read, const PieceRun& run) {
  if (run.begin >= run.end) {
    return true;
  }
  const OutputArray& out = parts_.outputs[read.output];
  const codec::BoxPiece first = run.Piece(read.plan, run.begin);
  int64_t nonfinite = 0;
  const bool ok =
      WithArray(round, read, &first,
                [&](const codec::ArrayReader& array, codec::BoxReadScratch& scratch,
                    std::optional<codec::BoxPiece>* failed) -> Status {
                  for (int64_t i = run.begin; i < run.end && !round.cancelled(); ++i) {
                    const codec::BoxPiece piece = run.Piece(read.plan, i);
                    Status st = array.ReadPiece(read.plan, piece, read.dst, out.pad_item, scratch);
                    if (!st.ok()) {
                      *failed = piece;
                      return st;
                    }
                    // Pad pieces hold the pad value, which Create checked is finite.
                    if (read.check_finite && piece.chunk >= 0) {
                      nonfinite += CountNonFinite(PieceView(read, piece), *out.nonfinite);
                    }
                  }
                  return Status::Ok();
                });
  if (nonfinite > 0) {
    round.AddNonFinite(read, nonfinite);
  }
  return ok;
}

std::string SampleReader::Context(const ReadRound& round, const SampleRead& read,
                                  const codec::BoxPiece* piece) const {
  const Dataset& ds = parts_.config.dataset;
  const OutputArray& out = parts_.outputs[read.output];
  std::string context =
      StrCat("epoch ", round.batch().epoch, ", batch ", round.batch().batch, ", sample ",
             read.sample, ": case '", ds.case_id(read.case_index), "' (#", read.case_index,
             "), array '", out.name, "', file ", ds.path(read.case_index, out.dataset_array),
             ", patch box ", codec::BoxToString(read.box));
  if (piece != nullptr) {
    context += piece->chunk >= 0 ? StrCat(", chunk ", piece->chunk) : ", no chunk";
    context += StrCat(
        " (part ",
        codec::RegionToString(static_cast<int>(read.box.start.size()), piece->lo, piece->hi), ")");
  }
  return context;
}

void SampleReader::Fail(ReadRound& round, const SampleRead& read, const codec::BoxPiece* piece,
                        const Status& status) const {
  MetricsCounters::Add(counters_->read_errors, 1);
  round.Fail(read.sample, status.WithContext(Context(round, read, piece)));
}

void SampleReader::FailNonFinite(ReadRound& round, const SampleRead& read, int64_t count) const {
  MetricsCounters::Add(counters_->samples_nonfinite, 1);
  const OutputArray& out = parts_.outputs[read.output];
  round.Fail(read.sample,
             DataLossError(StrCat(Context(round, read, nullptr), ": ", count,
                                  count == 1 ? " value is" : " values are", " NaN or infinite (",
                                  out.dtype,
                                  ", checked by check_finite); fix the case, or set "
                                  "error_policy to \"skip\" to leave such samples out")));
}

}  // namespace patchfeed::loader::internal_loader
