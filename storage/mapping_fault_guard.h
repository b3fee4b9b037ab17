// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_STORAGE_MAPPING_FAULT_GUARD_H_
#define PATCHFEED_STORAGE_MAPPING_FAULT_GUARD_H_

/// \file
/// Turns the SIGBUS of reading a mapped file that another process truncated into an error.
///
/// A read from a page of a shared file mapping that lies past the file's current end raises
/// SIGBUS, whose default action kills the process: one dataset file rewritten during a training
/// run would end the run. Every mapping a ByteSource makes is registered here. On a SIGBUS at an
/// address inside a registered mapping, the handler maps a page of zeros over the faulting page,
/// so the interrupted read (a memcpy, a decompressor) completes with zeros, and marks the
/// mapping faulted. Readers check the mark after reading (`faulted()`) and return kDataLoss
/// instead of what they decoded; the mark stays, so a faulted mapping never serves data again
/// (reopen the file). A SIGBUS anywhere else goes to the handler installed before ours, or gets
/// the default action.
///
/// The handler is installed once, when the first mapping is registered. The registry is a fixed
/// table of lock-free slots that the handler scans (async-signal-safe); when it is full,
/// Register returns null and the caller reads that file with pread instead. This file is the
/// one place in codec/ that uses atomics (tests/check_layering.sh lists it): a signal handler
/// cannot take a lock, and codec objects are shared by the loader's threads.

#include <cstddef>
#include <memory>

namespace patchfeed::storage {

class MappingFaultGuard {
 public:
  /// Registers the mapping [base, base + length); null when the registry is full or the
  /// handler cannot be installed. The registration ends with the returned object, which must
  /// be destroyed before the mapping is unmapped.
  static std::unique_ptr<MappingFaultGuard> Register(const void* base, size_t length);

  ~MappingFaultGuard();
  MappingFaultGuard(const MappingFaultGuard&) = delete;
  MappingFaultGuard& operator=(const MappingFaultGuard&) = delete;

  /// True once a read in the mapping touched a page past the file's end. Thread-safe.
  bool faulted() const;

 private:
  explicit MappingFaultGuard(int slot) : slot_(slot) {}
  int slot_;
};

}  // namespace patchfeed::storage

#endif  // PATCHFEED_STORAGE_MAPPING_FAULT_GUARD_H_
