#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install dependencies if missing, build (Release), run every test under CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
ctest --preset release -j "$(nproc)" "$@"
