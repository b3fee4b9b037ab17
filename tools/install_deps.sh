#!/usr/bin/env bash
# Installs what building and testing patchfeed needs on Debian/Ubuntu, skipping what is there:
# the C++ toolchain and libraries from apt, the Python reference packages from pip.
# Usage: tools/install_deps.sh [--with-tests]
set -euo pipefail

with_tests=0
[[ "${1:-}" == "--with-tests" ]] && with_tests=1

sudo_cmd=""
if [[ $(id -u) -ne 0 ]]; then sudo_cmd="sudo"; fi

apt_pkgs=(build-essential cmake ninja-build pkg-config liblz4-dev libzstd-dev zlib1g-dev
          libdeflate-dev libtbb-dev)
if (( with_tests )); then
  apt_pkgs+=(libgtest-dev libgmock-dev libbenchmark-dev pybind11-dev clang)
fi
missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if (( ${#missing[@]} )); then
  echo "install_deps: apt-get install ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if (( with_tests )); then
  py_pkgs=(numpy pytest hypothesis blosc2 blosc numcodecs pybind11)
  need=()
  for p in "${py_pkgs[@]}"; do
    python3 -c "import ${p}" 2>/dev/null || need+=("$p")
  done
  if (( ${#need[@]} )); then
    echo "install_deps: pip install ${need[*]}"
    python3 -m pip install -q "${need[@]}"
  fi
fi
