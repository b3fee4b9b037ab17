#!/usr/bin/env bash
# The GPU check of issue 16: one prepared script for the lent device machine (an NVIDIA GPU,
# CUDA, PyTorch, CMake, ninja, pybind11, scikit-build-core, Python 3.12, no internet).
#
#   tools/gpu_check.sh --prepare       HERE (Debian/Ubuntu amd64, network): apt-get download the
#                                      C++ libraries patchfeed links into third_party_debs/
#                                      (git-ignored: the run tool carries it)
#   tools/gpu_check.sh                 ON THE DEVICE: unpack them, build the wheel, measure;
#                                      everything lands in $OUT (results.json, summary.md, logs)
#   tools/gpu_check.sh --cpu-dry-run   anywhere: no build, no GPU; the measurement code on a tiny
#                                      dataset with an importable patchfeed (tests/python runs it)
#   tools/gpu_check.sh --unpack DIR    unpack third_party_debs/ into DIR (used by the device run)
#
# The run tool's call, from bench/README.md (section "GPU"):
#   command "PYTHONUNBUFFERED=1 bash tools/gpu_check.sh", carry ["third_party_debs"], timeout_s 570
#
# Environment: OUT (default build/gpu_check/out), GPU_CHECK_BUDGET_S (seconds for the whole run,
# default 500), GPU_CHECK_STEPS (comma list, default all: build,dataset,pinned,fallback,equal,
# bandwidth,standin,cxx,unet). A failed step is reported loudly and the next ones still run
# (those that need the build stop when it fails); the exit status is 1 if any step failed.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEBS=$REPO/third_party_debs
WORK=$REPO/build/gpu_check
PY=${PYTHON:-python3}
CHECK=$REPO/tools/gpu_check/gpu_check.py
# What patchfeed builds against (CMakeLists.txt, augment/CMakeLists.txt, tools/install_deps.sh):
# lz4, zstd, libdeflate, zlib, oneTBB (its CMake config lists tbbmalloc and tbbbind too), Eigen,
# nlohmann/json (zarr metadata), ISA-L (crc32c), liburing (the loader's reads), plus pkgconf, since the device image may have no pkg-config.
DEB_PACKAGES=(liblz4-dev liblz4-1 libzstd-dev libzstd1 libdeflate-dev libdeflate0 zlib1g-dev
              zlib1g libtbb-dev libtbb12 libtbbmalloc2 libtbbbind-2-5 libeigen3-dev
              nlohmann-json3-dev libisal-dev libisal2 liburing-dev liburing2 pkgconf pkgconf-bin libpkgconf3)

die() { echo "gpu_check: ERROR: $*" >&2; exit 1; }

prepare() {
  [[ $(dpkg --print-architecture) == amd64 ]] ||
    die "--prepare downloads this machine's architecture; the device is amd64 (x86-64)"
  rm -rf "$DEBS" && mkdir -p "$DEBS"
  (cd "$DEBS" && apt-get download "${DEB_PACKAGES[@]}") ||
    die "apt-get download failed (as root, 'apt-get update' first may help)"
  (cd "$DEBS" && for f in *.deb; do
     printf '%s\t%s\t%s\n' "$(dpkg-deb -f "$f" Package)" "$(dpkg-deb -f "$f" Version)" \
       "$(stat -c %s "$f")"
   done) >"$DEBS/MANIFEST.tsv"
  cat "$DEBS/MANIFEST.tsv"
  echo "gpu_check: $(find "$DEBS" -name "*.deb" | wc -l) packages, $(du -sh "$DEBS" | cut -f1) in $DEBS;" \
       "name it in the run tool's carry"
}

# Unpacks the .debs into $1 (never into /: another distro's files there could break it), then
# makes the tree relocatable: absolute symlinks and the .pc files' /usr paths point into $1,
# and $1/bin/pkg-config runs the unpacked pkgconf.
unpack() {
  local dest=$1 f link target
  compgen -G "$DEBS/*.deb" >/dev/null || die "no .deb in $DEBS: run tools/gpu_check.sh --prepare here and carry third_party_debs"
  rm -rf "$dest" && mkdir -p "$dest/bin"
  dest=$(cd "$dest" && pwd)
  for f in "$DEBS"/*.deb; do
    if command -v dpkg-deb >/dev/null; then
      dpkg-deb -x "$f" "$dest"
    else  # a .deb is an ar archive holding data.tar.{xz,zst,gz}
      local member
      member=$(ar t "$f" | grep '^data\.tar')
      case $member in
        *.xz) ar p "$f" "$member" | tar -x -J -C "$dest" ;;
        *.zst) ar p "$f" "$member" | tar -x --zstd -C "$dest" ;;
        *) ar p "$f" "$member" | tar -x -z -C "$dest" ;;
      esac
    fi
  done
  while IFS= read -r link; do
    target=$(readlink "$link")
    ln -sfn "$dest$target" "$link"
  done < <(find "$dest" -type l -lname '/*')
  local multiarch=$dest/usr/lib/x86_64-linux-gnu
  for f in "$multiarch"/pkgconfig/*.pc "$dest"/usr/share/pkgconfig/*.pc; do
    [[ -e $f ]] || continue
    sed -i -e "s|=/usr|=$dest/usr|" "$f"
    # Debian's libdeflate.pc and libzstd.pc say /usr/lib; the libraries are in the multiarch dir.
    [[ $f == "$multiarch"/* ]] && sed -i -e "s|^libdir=.*|libdir=$multiarch|" "$f"
  done
  cat >"$dest/bin/pkg-config" <<WRAP
#!/bin/sh
LD_LIBRARY_PATH=$multiarch\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH} exec $dest/usr/bin/pkgconf "\$@"
WRAP
  chmod +x "$dest/bin/pkg-config"
  echo "gpu_check: unpacked $(find "$DEBS" -name "*.deb" | wc -l) packages into $dest"
}

# Where the C++ example finds libcudart (the Python steps get it from torch's own import).
find_cudart_dir() {
  local p
  p=$(ldconfig -p 2>/dev/null | awk '/libcudart\.so/ {print $NF; exit}')
  [[ -n $p ]] && { dirname "$p"; return; }
  for p in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    compgen -G "$p/libcudart.so*" >/dev/null && { echo "$p"; return; }
  done
  p=$("$PY" -c 'import glob, os, site, sys
for d in site.getsitepackages():
    for f in sorted(glob.glob(os.path.join(d, "nvidia", "**", "libcudart.so*"), recursive=True)):
        print(os.path.dirname(f)); sys.exit()' 2>/dev/null || true)
  [[ -n $p ]] && echo "$p"
}

# Builds the wheel into the image's python3 against the unpacked libraries, and the C++ example.
build() {
  local deps=$WORK/deps core dir
  mkdir -p "$OUT"
  unpack "$deps"
  local lib=$deps/usr/lib/x86_64-linux-gnu
  # CMake finds TBB, Eigen and zlib through CMAKE_PREFIX_PATH, lz4/zstd/libdeflate through
  # pkg-config limited to the unpacked .pc files; the extension finds the libraries at run
  # time through its RUNPATH. build-dir persists on a warm machine: a rerun rebuilds nothing.
  # pybind11's CMake config from the image's pybind11 package (named, not left to discovery).
  local pybind=()
  if dir=$("$PY" -m pybind11 --cmakedir 2>/dev/null); then pybind=(-C "cmake.define.pybind11_DIR=$dir"); fi
  echo "gpu_check: pip install . (log: $OUT/build.log)"
  PKG_CONFIG_LIBDIR=$lib/pkgconfig:$deps/usr/share/pkgconfig CMAKE_PREFIX_PATH=$deps/usr \
  CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
  "$PY" -m pip install -v --no-build-isolation --no-deps --no-cache-dir \
      -C build-dir="$WORK/build" \
      -C cmake.define.PKG_CONFIG_EXECUTABLE="$deps/bin/pkg-config" \
      -C cmake.define.CMAKE_INSTALL_RPATH="$lib;$deps/lib/x86_64-linux-gnu" \
      -C cmake.define.PATCHFEED_BUILD_EXAMPLES=ON "${pybind[@]}" "$REPO" >"$OUT/build.log" 2>&1 ||
    { tail -n 60 "$OUT/build.log"; die "the wheel did not build (all of it: $OUT/build.log)"; }
  grep -E "^ *-- (Found|Checking for module)|_DIR:" "$OUT/build.log" | head -20 || true
  cmake --build "$WORK/build" --target patchfeed_train_loop >>"$OUT/build.log" 2>&1 ||
    { tail -n 30 "$OUT/build.log"; die "examples/train_loop did not build"; }
  core=$(cd / && "$PY" -c 'import patchfeed._core as c; print(c.__file__)') ||
    die "the installed patchfeed does not import"
  echo "$core" >"$WORK/core_path.txt"
  echo "gpu_check: patchfeed._core is $core"
  ldd "$core" | grep -E "tbb|lz4|zstd|deflate|libz\.|not found" || true
}

OUT=${OUT:-$WORK/out}
mode=device
case "${1:-}" in
  --prepare) prepare; exit 0 ;;
  --unpack) [[ -n "${2:-}" ]] || die "--unpack DIR"; unpack "$2"; exit 0 ;;
  --build) build; exit 0 ;;  # run_step's entry for the build
  --cpu-dry-run) mode=dry ;;
  "") ;;
  *) die "unknown argument '$1' (see the comment at the top of $0)" ;;
esac

mkdir -p "$OUT"
[[ $mode == dry ]] && WORK=$OUT/dry_work  # a dry run never mixes with device results
STEPS=$WORK/steps
mkdir -p "$WORK"
rm -rf "$STEPS" && mkdir -p "$STEPS"
exec > >(tee -a "$OUT/gpu_check.log") 2>&1
TEE_PID=$!
# At exit, let tee write the last lines before the run tool collects $OUT.
trap 'exec 1>&- 2>&-; wait "$TEE_PID" 2>/dev/null || true' EXIT
START=$(date +%s)
BUDGET=${GPU_CHECK_BUDGET_S:-500}
DEADLINE=$((START + BUDGET))
WANT=${GPU_CHECK_STEPS:-build,dataset,pinned,fallback,equal,bandwidth,standin,cxx,unet}
FAILED=()
echo "gpu_check: $mode run, $(date -u +%FT%TZ), budget ${BUDGET}s, steps $WANT, results in $OUT"

wanted() { [[ ",$WANT," == *",$1,"* ]]; }
merge() { "$PY" "$CHECK" merge --steps-dir "$STEPS" --out "$OUT" || echo "gpu_check: ERROR: merge failed"; }
# run_step NAME MAX_SECONDS COMMAND...: runs COMMAND under a time limit (the smaller of
# MAX_SECONDS and the budget left), records its exit status, merges what it measured into $OUT.
run_step() {
  local name=$1 max=$2 left limit rc=0 t0
  shift 2
  wanted "$name" || return 0
  left=$((DEADLINE - $(date +%s) - 10))
  limit=$(( max < left ? max : left ))
  if (( limit < 10 )); then
    echo "gpu_check: ERROR: step $name not run: ${left}s of the budget left"
    printf '%s\t%s\t%s\n' "$name" no-time 0 >>"$STEPS/status.tsv"
    FAILED+=("$name(no time)"); merge; return 1
  fi
  echo "=== gpu_check step $name (limit ${limit}s) ==="
  t0=$(date +%s)
  timeout --kill-after=10 "$limit" "$@" || rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "$(( $(date +%s) - t0 ))" >>"$STEPS/status.tsv"
  if (( rc != 0 )); then
    if (( rc == 124 || rc == 137 )); then echo "gpu_check: ERROR: step $name ran past ${limit}s"; fi
    echo "gpu_check: ERROR: step $name FAILED (exit $rc); see the lines above and $OUT"
    FAILED+=("$name")
  fi
  merge
  return $rc
}

# A measurement step: tools/gpu_check/gpu_check.py STEP with the shared arguments.
step=("$PY" "$CHECK")
common=(--steps-dir "$STEPS" --data "$WORK/data" --deadline "$DEADLINE")
if [[ $mode == dry ]]; then
  common+=(--cpu-dry-run)
  echo "gpu_check: --cpu-dry-run: no build, no GPU; patchfeed from PYTHONPATH"
else
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  { c++ --version | head -n 1; cmake --version | head -n 1; nvcc --version | tail -n 1; } || true
  grep -E '^(PRETTY_NAME)=' /etc/os-release || true
  "$PY" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda,
"available", torch.cuda.is_available())' || true
  if wanted build; then
    run_step build 330 env OUT="$OUT" PYTHON="$PY" bash "$REPO/tools/gpu_check.sh" --build ||
      { echo "gpu_check: ERROR: FAILED STEPS: build; without it nothing is measured"; exit 1; }
  fi
  # The extension's RUNPATH should find the unpacked libraries; if it does not, say so and
  # fall back to LD_LIBRARY_PATH (the multiarch folder only: not its zlib, for the system's).
  core=$(cat "$WORK/core_path.txt" 2>/dev/null || true)
  if [[ -n $core ]] && ldd "$core" | grep -q "not found"; then
    echo "gpu_check: ERROR: _core's RUNPATH misses libraries; using LD_LIBRARY_PATH instead:"
    ldd "$core" | grep "not found" || true
    export LD_LIBRARY_PATH=$WORK/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    FAILED+=("build(runpath)")
  fi
fi

run_step dataset 90 "${step[@]}" dataset "${common[@]}" || true
run_step pinned 60 "${step[@]}" pinned "${common[@]}" || true
run_step fallback 60 "${step[@]}" fallback "${common[@]}" || true
run_step equal 90 "${step[@]}" equal "${common[@]}" || true
run_step bandwidth 90 "${step[@]}" bandwidth "${common[@]}" || true
run_step standin 90 "${step[@]}" standin "${common[@]}" || true
cxx=()
if [[ $mode == device ]]; then
  cxx=(--binary "$WORK/build/examples/train_loop/train_loop" --cudart-dir "$(find_cudart_dir || true)")
elif [[ -n ${GPU_CHECK_TRAIN_LOOP:-} ]]; then
  cxx=(--binary "$GPU_CHECK_TRAIN_LOOP")
fi
run_step cxx 90 "${step[@]}" cxx "${common[@]}" "${cxx[@]}" || true
run_step unet 300 "${step[@]}" unet "${common[@]}" || true

echo "gpu_check: done in $(( $(date +%s) - START ))s; results: $OUT/results.json, $OUT/summary.md"
if (( ${#FAILED[@]} )); then
  echo "gpu_check: ERROR: FAILED STEPS: ${FAILED[*]}"
  exit 1
fi
echo "gpu_check: every step passed"
