// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/internal/sample_reader.h"

#include <optional>
#include <string>
#include <utility>

#include "common/str_cat.h"

namespace patchfeed::loader::internal_loader {

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
  const int64_t read_before = scratch.decoder.compressed_bytes_read();
  const int64_t decoded_before = scratch.decoder.bytes_decoded();
  std::optional<codec::BoxPiece> failed_piece;
  scratch.source = read.fetched.get();
  const Status status = read_fn(**reader, scratch, &failed_piece);
  scratch.source = nullptr;
  MetricsCounters::Add(counters_->bytes_decoded, scratch.decoder.bytes_decoded() - decoded_before);
  MetricsCounters::Add(counters_->bytes_read,
                       scratch.decoder.compressed_bytes_read() - read_before);
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
  return WithArray(round, read, &first,
                   [&](const codec::ArrayReader& array, codec::BoxReadScratch& scratch,
                       std::optional<codec::BoxPiece>* failed) -> Status {
                     for (int64_t i = run.begin; i < run.end && !round.cancelled(); ++i) {
                       const codec::BoxPiece piece = run.Piece(read.plan, i);
                       Status st =
                           array.ReadPiece(read.plan, piece, read.dst, out.pad_item, scratch);
                       if (!st.ok()) {
                         *failed = piece;
                         return st;
                       }
                     }
                     return Status::Ok();
                   });
}

void SampleReader::Fail(ReadRound& round, const SampleRead& read, const codec::BoxPiece* piece,
                        const Status& status) const {
  MetricsCounters::Add(counters_->read_errors, 1);
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
  round.Fail(read.sample, status.WithContext(context));
}

}  // namespace patchfeed::loader::internal_loader
