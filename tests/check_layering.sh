#!/usr/bin/env bash
# The layering rule as a check: codec/ and common/ own no threads and know no Python.
set -euo pipefail
cd "$(dirname "$0")/.."
pattern='#include <(tbb/|oneapi/|pybind11/|Python\.h|thread>|mutex>|atomic>|future>|condition_variable>)'
if grep -rnE "$pattern" codec common; then
  echo "check_layering: codec/ and common/ must not include threading or Python headers" >&2
  exit 1
fi
echo "check_layering: ok"
