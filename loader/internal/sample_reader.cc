// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/internal/sample_reader.h"

#include <string>
#include <utility>

namespace patchfeed::loader::internal_loader {

template <typename ReadFn>
bool SampleReader::WithArray(ReadRound& round, const SampleRead& read, const ReadCell* first_cell,
                             ReadFn&& read_fn) {
  if (round.cancelled()) {
    return false;
  }
  const OutputArray& out = parts_.outputs[read.output];
  auto reader = parts_.files->Get(read.case_index, out.dataset_array);
  if (!reader.ok()) {
    Fail(round, read, first_cell, reader.status());
    return false;
  }
  codec::BoxReadScratch& scratch = scratch_.local();
  const int64_t read_before = scratch.decoder.compressed_bytes_read();
  const int64_t decoded_before = scratch.decoder.bytes_decoded();
  const ReadCell* failed_cell = nullptr;
  const Status status = read_fn(**reader, scratch, &failed_cell);
  MetricsCounters::Add(counters_->bytes_decoded, scratch.decoder.bytes_decoded() - decoded_before);
  MetricsCounters::Add(counters_->bytes_read,
                       scratch.decoder.compressed_bytes_read() - read_before);
  if (!status.ok()) {
    Fail(round, read, failed_cell, status);
    return false;
  }
  return true;
}

bool SampleReader::ReadCells(ReadRound& round, const SampleRead& read,
                             std::span<const ReadCell> cells) {
  const OutputArray& out = parts_.outputs[read.output];
  return WithArray(
      round, read, cells.empty() ? nullptr : &cells.front(),
      [&](const codec::NdArrayReader& array, codec::BoxReadScratch& scratch,
          const ReadCell** failed) -> Status {
        for (const ReadCell& cell : cells) {
          if (round.cancelled()) {
            break;
          }
          const codec::NdView dst{read.base + cell.dst_offset, cell.shape, read.strides};
          Status st = array.ReadBox(cell.box, dst, out.pad_item, scratch);
          if (!st.ok()) {
            *failed = &cell;
            return st;
          }
        }
        return Status::Ok();
      });
}

bool SampleReader::ReadBox(ReadRound& round, const SampleRead& read, const codec::NdView& dst,
                           const codec::BlockFilter& filter) {
  const OutputArray& out = parts_.outputs[read.output];
  return WithArray(
      round, read, nullptr,
      [&](const codec::NdArrayReader& array, codec::BoxReadScratch& scratch, const ReadCell**) {
        return array.ReadBox(read.box, dst, out.pad_item, scratch, filter);
      });
}

void SampleReader::Fail(ReadRound& round, const SampleRead& read, const ReadCell* cell,
                        const Status& status) const {
  MetricsCounters::Add(counters_->read_errors, 1);
  const Dataset& ds = parts_.config.dataset;
  const OutputArray& out = parts_.outputs[read.output];
  std::string context = "epoch " + std::to_string(round.batch().epoch) + ", batch " +
                        std::to_string(round.batch().batch) + ", sample " +
                        std::to_string(read.sample) + ": case '" + ds.case_id(read.case_index) +
                        "' (#" + std::to_string(read.case_index) + "), array '" + out.name +
                        "', file " + ds.path(read.case_index, out.dataset_array) + ", patch box " +
                        BoxToString(read.box);
  if (cell != nullptr) {
    context += cell->chunk >= 0 ? ", chunk " + std::to_string(cell->chunk) : ", no chunk";
    context += " (part " + BoxToString(cell->box) + ")";
  }
  round.Fail(read.sample, status.WithContext(context));
}

}  // namespace patchfeed::loader::internal_loader
