#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job: install dependencies if missing, build (Release), run the default example end
# to end. Output goes to out/ (override with NOCFLOW_OUT=DIR).
#
# The default example: ResNet-18 on the 8x8 mesh (configs/hw/mesh8x8.yaml): partition every
# layer with the ILP under the linkload cost model and the per-PE SRAM limit, replay the plan
# cycle by cycle on the SystemC PEs and NoC, print the summary and the transfers table
# (predicted vs simulated), and write a Perfetto trace.
set -euo pipefail
case "${1:-}" in
  "") ;;
  -h | --help) sed -n '3,9s/^# \{0,1\}//p' "$0"; exit 0 ;;
  *) echo "run.sh: takes no arguments (--help; NOCFLOW_OUT=DIR sets the output folder)" >&2; exit 2 ;;
esac
[[ -n ${NOCFLOW_OUT:-} ]] && NOCFLOW_OUT=$(realpath -m -- "$NOCFLOW_OUT")  # as given, from here
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
nocflow=build/release/sim/nocflow
out=${NOCFLOW_OUT:-out}
hw=configs/hw/mesh8x8.yaml
mkdir -p "$out"

echo "== optimize: zoo:resnet18 on $hw (ilp, linkload cost model, SRAM limit)"
"$nocflow" optimize --hw "$hw" --network zoo:resnet18 --solver ilp --cost-model linkload --memory-limit \
  --out "$out/optimize"
echo
echo "== simulate: replay the plan (dataflow), with a Perfetto trace"
"$nocflow" simulate --hw "$hw" --network zoo:resnet18 --plan "$out/optimize/plan.yaml" \
  --trace perfetto --out "$out/simulate"
echo
echo "nocflow: output in $out/ (optimize/plan.yaml, plan.dot; simulate/summary.json, layers.csv,"
echo "         transfers.csv, links.csv, memory.csv, trace.json: open it at https://ui.perfetto.dev)"
