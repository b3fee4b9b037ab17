#!/usr/bin/env bash
# The layering rule as a check: codec/, common/ and augment/ own no threads and know no Python;
# bindings/ starts no threads (threads belong to loader/ and storage/'s engines).
set -euo pipefail
cd "$(dirname "$0")/.."
pattern='#include <(tbb/|oneapi/|pybind11/|Python\.h|thread>|mutex>|atomic>|future>|condition_variable>)'
if grep -rnE "$pattern" codec common augment; then
  echo "check_layering: codec/, common/ and augment/ must not include threading or Python headers" >&2
  exit 1
fi
# storage/ owns the I/O engines' threads; the codec sees only the interfaces it reads through.
if grep -rnE '#include "storage/' codec | grep -vE '"storage/(byte_source|store)\.h"'; then
  echo "check_layering: codec/ may include only storage's interfaces (byte_source.h, store.h)" >&2
  exit 1
fi
if grep -rnE '#include <thread>|std::thread|std::jthread' bindings; then
  echo "check_layering: bindings/ must not start threads (no <thread>, no std::thread)" >&2
  exit 1
fi
echo "check_layering: ok"
