#!/usr/bin/env bash
# The layering rule as a check: codec/, common/ and augment/ own no threads and know no Python;
# bindings/ starts no threads (threads belong to loader/).
set -euo pipefail
cd "$(dirname "$0")/.."
pattern='#include <(tbb/|oneapi/|pybind11/|Python\.h|thread>|mutex>|atomic>|future>|condition_variable>)'
# mapping_fault_guard.cc keeps a lock-free registry its SIGBUS handler reads: atomics, no threads.
allowed="^codec/mapping_fault_guard.cc:[0-9]+:#include <atomic>$"
if grep -rnE "$pattern" codec common augment | grep -vE "$allowed"; then
  echo "check_layering: codec/, common/ and augment/ must not include threading or Python headers" >&2
  exit 1
fi
if grep -rnE '#include <thread>|std::thread|std::jthread' bindings; then
  echo "check_layering: bindings/ must not start threads (no <thread>, no std::thread)" >&2
  exit 1
fi
echo "check_layering: ok"
