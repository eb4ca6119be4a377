#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Optimizer speed: choices, tabulation and solve seconds of `optimize --solver dp --cost-model
# linkload` for resnet50 and mobilenet_v2 on a 16x16 mesh with 64 MiB PEs (the mesh-size sweep's
# largest points); median of 3 runs. Compare two builds side by side on one machine with
# NOCFLOW_BASE=path/to/other/nocflow (wall-clock figures are noisy; ratios within one run are not).
set -euo pipefail
cd "$(dirname "$0")/.."
nocflow=${NOCFLOW:-build/release/sim/nocflow}
[[ -x $nocflow ]] || { echo "build first: cmake --preset release && cmake --build --preset release" >&2; exit 1; }
out=${NOCFLOW_OUT:-out/bench_optimizer}
runs=${RUNS:-3}
binaries=("$nocflow")
[[ -n ${NOCFLOW_BASE:-} ]] && binaries=("$NOCFLOW_BASE" "$nocflow")
mkdir -p "$out"

printf "%-14s %-34s %9s %9s %12s %10s %16s\n" network binary choices pruned "tabulate s" "solve s" "predicted cycles"
for net in resnet50 mobilenet_v2; do
  for bin in "${binaries[@]}"; do
    tabs=(); solves=()
    for ((i = 0; i < runs; i++)); do
      "$bin" optimize --hw configs/hw/mesh8x8.yaml --set topology.rows=16 --set topology.cols=16 \
        --set pe.sram_bytes=67108864 --network "zoo:$net" --solver dp --cost-model linkload \
        --out "$out/$net" >"$out/$net.log" 2>&1 || { cat "$out/$net.log" >&2; exit 1; }
      read -r choices pruned tab solve total <<<"$(python3 - "$out/$net/summary.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(j["choices_before_pruning"], j["choices_after_pruning"], j["tabulate_seconds"],
      j["solve_seconds"], j["total_cost_cycles"])
PY
)"
      tabs+=("$tab"); solves+=("$solve")
    done
    med() { python3 -c "import statistics, sys; print(f'{statistics.median(map(float, sys.argv[1:])):.2f}')" "$@"; }
    label=$bin
    ((${#label} > 34)) && label="...${bin: -31}"
    printf "%-14s %-34s %9s %9s %12s %10s %16s\n" "$net" "$label" "$choices" "$pruned" \
      "$(med "${tabs[@]}")" "$(med "${solves[@]}")" "$total"
  done
done
