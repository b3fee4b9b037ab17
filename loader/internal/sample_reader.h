// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_INTERNAL_SAMPLE_READER_H_
#define PATCHFEED_LOADER_INTERNAL_SAMPLE_READER_H_

/// \file
/// The one read sequence every sample task runs, plain or augmented: the case's open frame from
/// the cache, ArrayReader::ReadPiece with this worker's scratch, the bytes read and decoded
/// added to the metrics, and a failure recorded in the round with where it happened (epoch,
/// batch, sample, case, array, file, patch box, chunk). Thread-safe: scratch is per worker.

#include <cstdint>
#include <string>

#include <oneapi/tbb/enumerable_thread_specific.h>

#include "codec/array_reader.h"
#include "loader/internal/loader_setup.h"
#include "loader/internal/metrics_counters.h"
#include "loader/internal/read_round.h"

namespace patchfeed::loader::internal_loader {

class SampleReader {
 public:
  SampleReader(const LoaderParts& parts, MetricsCounters* counters)
      : parts_(parts), counters_(counters) {}

  /// Reads the pieces of read.plan in `run` into read.dst; false after recording an error (the
  /// pieces after a failed one are not read) or when the round was cancelled. With
  /// read.check_finite, counts the NaN and infinite items of each piece read from a chunk
  /// while it is in cache, into the round.
  bool ReadRun(ReadRound& round, const SampleRead& read, const PieceRun& run);

  /// Records `status` as the sample's error, with the context of `read` (and of the piece it
  /// was reading, if any: its chunk and its part of the box).
  void Fail(ReadRound& round, const SampleRead& read, const codec::BoxPiece* piece,
            const Status& status) const;

  /// Records that `read`'s sample holds `count` NaN or infinite items in its array (the
  /// sample's error unless it has one; LoaderConfig::check_finite).
  void FailNonFinite(ReadRound& round, const SampleRead& read, int64_t count) const;

 private:
  // Opens the array of `read` (a failure is reported at `first_piece`), runs
  // read_fn(reader, scratch, &failed_piece) and counts the decoder's bytes.
  template <typename ReadFn>
  bool WithArray(ReadRound& round, const SampleRead& read, const codec::BoxPiece* first_piece,
                 ReadFn&& read_fn);
  /// Where `read` happened (epoch, batch, sample, case, array, file, box; the piece's chunk
  /// and part), for its errors.
  std::string Context(const ReadRound& round, const SampleRead& read,
                      const codec::BoxPiece* piece) const;

  const LoaderParts& parts_;
  MetricsCounters* const counters_;
  tbb::enumerable_thread_specific<codec::BoxReadScratch> scratch_;
};

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_INTERNAL_SAMPLE_READER_H_
