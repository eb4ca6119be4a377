#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Optimizer speed, median of 3 runs: choices, tabulation and solve seconds, ILP variables.
#   resnet50, mobilenet_v2  `optimize --solver dp --cost-model linkload` on a 16x16 mesh with
#                           64 MiB PEs (the mesh-size sweep's largest points: tabulation)
#   resnet50 greedy         the same with `--solver greedy`, which tabulates no edges
#   resnet50 greedy-layout  the same with `--solver greedy-layout`, which computes one row per
#                           edge (in its solve seconds)
#   resnet18 ilp            the default job's solve: 8x8, `--solver ilp --cost-model linkload
#                           --memory-limit`
#   resnet50 ilp paper      8x8, `--solver ilp --cost-model paper`
#   resnet18 train, mobilenet_v2 train
#                           8x8, `--train sgd --solver dp --cost-model linkload --memory-limit`:
#                           graphs that do not reduce, so dp hands them to the ILP
#   mobilenet_v2 4 stages   8x8, `--stages 4 --solver dp --cost-model linkload`: every band
#                           tabulated, then (range, rows) stage solves ("solve s" includes both;
#                           "ilp vars" shows the stage costs solved)
#   resnet50 4 st. resident 8x8, `--stages 4 --resident-weights` (not run by default: CASES=10):
#                           the search for stages whose weights fit the 1 MiB SRAM
#   (resnet50 greedy-layout, case 8, is not run by default either: CASES="1 2 3 4 5 6 7 8 9")
# Compare two builds side by side on one machine with NOCFLOW_BASE=path/to/other/nocflow
# (wall-clock figures are noisy; ratios within one run are not). CASES="1 3" runs some only.
# Settings (environment): NOCFLOW (the binary), NOCFLOW_BASE, CASES, NOCFLOW_OUT (output
# folder, default out/bench_optimizer), RUNS (runs per case, default 3).
set -euo pipefail
source "$(dirname "$0")/script_setup.sh" bench_optimizer "$@"
binaries=("$nocflow")
[[ -n ${NOCFLOW_BASE:-} ]] && binaries=("$NOCFLOW_BASE" "$nocflow")
big=(--set topology.rows=16 --set topology.cols=16 --set pe.sram_bytes=67108864)
cases=(
  "resnet50|zoo:resnet50 ${big[*]} --solver dp --cost-model linkload"
  "mobilenet_v2|zoo:mobilenet_v2 ${big[*]} --solver dp --cost-model linkload"
  "resnet18 ilp|zoo:resnet18 --solver ilp --cost-model linkload --memory-limit"
  "resnet50 ilp paper|zoo:resnet50 --solver ilp --cost-model paper"
  "resnet18 train|zoo:resnet18 --train sgd --solver dp --cost-model linkload --memory-limit"
  "mobilenet_v2 train|zoo:mobilenet_v2 --train sgd --solver dp --cost-model linkload --memory-limit"
  "resnet50 greedy|zoo:resnet50 ${big[*]} --solver greedy --cost-model linkload"
  "resnet50 g-layout|zoo:resnet50 ${big[*]} --solver greedy-layout --cost-model linkload"
  "mobilenet_v2 4 st.|zoo:mobilenet_v2 --stages 4 --solver dp --cost-model linkload"
  "resnet50 4st. res.|zoo:resnet50 --stages 4 --resident-weights --solver dp --cost-model linkload"
)

printf "%-18s %-34s %8s %8s %11s %9s %10s %16s\n" case binary choices kept "tabulate s" "solve s" \
  "ilp vars" "predicted cycles"
for k in ${CASES:-1 2 3 4 5 6 7 9}; do
  IFS='|' read -r label args <<<"${cases[k - 1]}"
  read -r -a args <<<"$args"
  for bin in "${binaries[@]}"; do
    name=$bin
    ((${#name} > 34)) && name="...${bin: -31}"
    tabs=(); solves=()
    for ((i = 0; i < runs; i++)); do
      if ! "$bin" optimize --hw configs/hw/mesh8x8.yaml --network "${args[@]}" --out "$out/case$k" \
        >"$out/case$k.log" 2>&1; then
        printf "%-18s %-34s failed: %s\n" "$label" "$name" "$(tail -1 "$out/case$k.log")"
        continue 2
      fi
      read -r choices kept tab solve vars total <<<"$(python3 - "$out/case$k/summary.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
if "stages" in j:  # a pipeline: tabulation inside its solve seconds
    print("-", "-", "-", j["solve_seconds"], f"{j['ranges_priced']}st",
          f"{j['pipeline_cycles']}/{j['micro_batches']}mb")
else:
    print(j["choices_before_pruning"], j["choices_after_pruning"], j["tabulate_seconds"],
          j["solve_seconds"], j.get("ilp", {}).get("variables", "-"), j["total_cost_cycles"])
PY
)"
      tabs+=("$tab"); solves+=("$solve")
    done
    # "-": not measured apart (a pipeline tabulates within its solve).
    med() { python3 -c "import statistics, sys; a = sys.argv[1:]; print('-' if '-' in a else f'{statistics.median(map(float, a)):.2f}')" "$@"; }
    printf "%-18s %-34s %8s %8s %11s %9s %10s %16s\n" "$label" "$name" "$choices" "$kept" \
      "$(med "${tabs[@]}")" "$(med "${solves[@]}")" "$vars" "$total"
  done
done
