#!/usr/bin/env bash
# The layering rule as a check: codec/, common/ and augment/ own no threads and know no Python.
set -euo pipefail
cd "$(dirname "$0")/.."
pattern='#include <(tbb/|oneapi/|pybind11/|Python\.h|thread>|mutex>|atomic>|future>|condition_variable>)'
if grep -rnE "$pattern" codec common augment; then
  echo "check_layering: codec/, common/ and augment/ must not include threading or Python headers" >&2
  exit 1
fi
echo "check_layering: ok"
