#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs every Debian package nocflow's build, tests and scripts need. Idempotent: does nothing
# when all are present. Run as root (or with sudo available).
#   --with-torch   also install python3-torch/torchvision (only scripts/export_onnx.py needs them)
set -euo pipefail
if (($# > 1)); then echo "install-deps.sh: one argument at most (--with-torch or --help)" >&2; exit 2; fi
case "${1:-}" in
  "" | --with-torch) ;;
  -h | --help) sed -n '3,5s/^# \{0,1\}//p' "$0"; exit 0 ;;
  *) echo "install-deps.sh: unknown argument '$1' (--with-torch or --help)" >&2; exit 2 ;;
esac

packages=(
  build-essential cmake pkg-config git
  libsystemc-dev libboost-graph-dev liblpsolve55-dev libsuitesparse-dev libyaml-cpp-dev
  libgtest-dev libgmock-dev libcli11-dev nlohmann-json3-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  libopenmpi-dev openmpi-bin
  valgrind time python3-matplotlib
)
[[ "${1:-}" == "--with-torch" ]] && packages+=(python3-torch python3-torchvision python3-onnx)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: run as root (missing: ${missing[*]})" >&2; exit 1; }
  sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
