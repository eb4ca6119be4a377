#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Replays vgg16, resnet50 and mobilenet_v2 plans (dp, paper cost model, SRAM limit) on the
# 4x4, 8x8 and 16x16 meshes and the 16-port crossbar, in dataflow and barrier modes; every run
# checks conservation (each message received once, network drained, credits back).
# PE SRAM is raised to 64 MiB (SRAM=...): with the configs' 1 MiB, vgg16's fc6 (205 MB of fp16
# weights) fits on no fewer than 256 PEs, and nocflow holds all of a layer's data on chip.
# Prints one line per run; outputs in out/replay_matrix/. Takes several minutes.
set -euo pipefail
source "$(dirname "$0")/script_setup.sh" replay_matrix "$@"
printf "%-14s %-11s %-9s %14s %14s %12s %10s %10s\n" network hardware mode "total cycles" "predicted" flits "wall s" "Mflits/s"
for net in vgg16 resnet50 mobilenet_v2; do
  for hw in mesh4x4 mesh8x8 mesh16x16 crossbar16; do
    sram=(--set pe.sram_bytes="${SRAM:-64MiB}")
    plan="$out/${net}_${hw}_plan"
    if ! "$nocflow" optimize --hw "configs/hw/$hw.yaml" "${sram[@]}" --network "zoo:$net" --solver dp \
         --cost-model paper --memory-limit --out "$plan" >"$plan.log" 2>&1; then
      printf "%-14s %-11s optimize FAILED (see %s)\n" "$net" "$hw" "$plan.log"
      continue
    fi
    for mode in dataflow barrier; do
      dir="$out/${net}_${hw}_${mode}"
      if ! "$nocflow" simulate --hw "configs/hw/$hw.yaml" "${sram[@]}" --network "zoo:$net" \
           --plan "$plan/plan.yaml" --mode "$mode" --quiet --out "$dir" >"$dir.log" 2>&1; then
        printf "%-14s %-11s %-9s FAILED (see %s)\n" "$net" "$hw" "$mode" "$dir.log"
        continue
      fi
      python3 - "$dir/summary.json" "$net" "$hw" "$mode" <<'PY2'
import json, sys
j = json.load(open(sys.argv[1]))
w = j["wall_seconds"]
print(f"{sys.argv[2]:<14} {sys.argv[3]:<11} {sys.argv[4]:<9} {j['total_cycles']:>14} "
      f"{j['predicted_total_cycles']:>14.0f} {j['flits']:>12} {w:>10.2f} {j['flits'] / w / 1e6 if w else 0:>10.2f}")
PY2
    done
  done
done
