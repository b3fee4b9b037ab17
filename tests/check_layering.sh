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
# codec/ is one folder per format and its includes point down (docs/architecture.md, "The
# codec's folders"): the root's shared parts (array_reader.h, box_plan.h, nd_geometry.h,
# dtype.h and codec/internal/) include no format; blosc/ is the chunk codec; b2nd/ and zarr/ are
# formats of Blosc chunks and may include blosc/'s public headers; precomputed/ includes only
# blosc/stream_codecs.h (its gzip streams); only open_array.{h,cc} opens every format. A
# folder's internal/ headers include only their own internal/ and the root's shared headers,
# and no public codec header includes an internal/ one (those are not installed).
root_shared='codec/[a-z0-9_]+\.h|codec/internal/[a-z0-9_]+\.h'
codec_layer() {  # codec_layer WHAT ALLOWED FILE...: each "codec/..." include must match ALLOWED
  local what=$1 allowed=$2 bad
  shift 2
  bad=$(grep -HnoE '#include "codec/[^"]+"' "$@" | grep -vE "#include \"(${allowed})\"" || true)
  if [[ -n $bad ]]; then
    echo "$bad" >&2
    echo "check_layering: $what" >&2
    exit 1
  fi
}
codec_layer "codec/'s root includes no format folder (open_array.{h,cc} excepted)" "$root_shared" \
  $(find codec -maxdepth 1 -name '*.h' -o -maxdepth 1 -name '*.cc' | grep -v '/open_array\.') \
  $(find codec/internal -name '*.h' -o -name '*.cc')
codec_layer "codec/blosc/ includes only itself and the root's shared headers" \
  "codec/blosc/[a-z0-9_/]+\\.h|$root_shared" $(find codec/blosc -name '*.h' -o -name '*.cc')
for format in b2nd zarr; do
  codec_layer "codec/$format/ includes only itself, blosc/'s public headers and the root's" \
    "codec/$format/[a-z0-9_/]+\\.h|codec/blosc/[a-z0-9_]+\\.h|$root_shared" \
    $(find "codec/$format" -name '*.h' -o -name '*.cc')
done
codec_layer "codec/precomputed/ includes only itself, blosc/stream_codecs.h and the root's" \
  "codec/precomputed/[a-z0-9_/]+\\.h|codec/blosc/stream_codecs\\.h|$root_shared" \
  $(find codec/precomputed -name '*.h' -o -name '*.cc')
for internal in $(find codec -mindepth 2 -type d -name internal); do
  codec_layer "$internal/ headers include only $internal/ and the root's shared headers" \
    "$internal/[a-z0-9_]+\\.h|$root_shared" $(find "$internal" -name '*.h')
done
if grep -rnE '#include "codec/open_array\.h"' codec | grep -v '^codec/open_array\.cc:'; then
  echo "check_layering: within codec/, only open_array.cc includes open_array.h" >&2
  exit 1
fi
if find codec -name '*.h' -not -path '*/internal/*' -print0 |
    xargs -0 grep -HnE '#include "[^"]*internal/'; then
  echo "check_layering: a public codec header includes an internal/ one (not installed)" >&2
  exit 1
fi
if grep -rnE '#include "codec/([a-z0-9_]+/)*internal/' common storage augment loader bindings cli \
    bench examples tools 2>/dev/null; then
  echo "check_layering: codec's internal/ headers are for codec/ (and its tests) only" >&2
  exit 1
fi
if grep -rnE '#include <thread>|std::thread|std::jthread' bindings; then
  echo "check_layering: bindings/ must not start threads (no <thread>, no std::thread)" >&2
  exit 1
fi
echo "check_layering: ok"
