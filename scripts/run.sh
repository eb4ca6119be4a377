#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job: install dependencies if missing, build (Release), run the default example end
# to end. Output goes to out/ (override with NOCFLOW_OUT=DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
nocflow=build/release/sim/nocflow
out=${NOCFLOW_OUT:-out}

echo "== hardware: configs/hw/booksim8x8.yaml"
"$nocflow" config --check configs/hw/booksim8x8.yaml --out "$out/config"
echo
echo "nocflow: output in $out/"
