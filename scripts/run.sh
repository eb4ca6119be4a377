#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job: install dependencies if missing, build (Release), run the default example end
# to end. Output goes to out/ (override with NOCFLOW_OUT=DIR).
#
# Today's default job (it grows as capabilities land): check the shipped hardware configs,
# measure the BookSim-compatible 8x8 mesh under uniform traffic, and load ResNet-18 through
# the front end.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
nocflow=build/release/sim/nocflow
out=${NOCFLOW_OUT:-out}
mkdir -p "$out"

echo "== hardware configs"
for f in configs/hw/*.yaml; do "$nocflow" config --check "$f"; done
echo
echo "== NoC: uniform traffic, 0.2 flits/node/cycle, 4-flit packets (BookSim2's measurement)"
"$nocflow" traffic --hw configs/hw/booksim8x8.yaml --rate 0.2 --packet-flits 4 --out "$out/traffic"
echo
echo "== network: zoo:resnet18 after the default passes (table in $out/resnet18.txt)"
"$nocflow" inspect --network zoo:resnet18 --print-pass-stats --json "$out/resnet18.json" \
  --dot "$out/resnet18.dot" >"$out/resnet18.txt"
grep -E "^(pass|total)" "$out/resnet18.txt" || tail -3 "$out/resnet18.txt"
echo
echo "nocflow: output in $out/ (traffic/summary.json, traffic/links.csv, resnet18.{txt,json,dot})"
