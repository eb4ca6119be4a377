#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# nocflow's booksim preset beside BookSim2's published figures (../shared/reference/booksim2.md):
# 8x8 mesh, XY, 4 VCs x 4 flits, iSLIP, uniform traffic, seed 0. Takes ~2 minutes.
#   scripts/compare_booksim.sh [--quick]    (--quick: fewer points, no saturation search)
set -euo pipefail
script_flags=(--quick)
source "$(dirname "$0")/script_setup.sh" compare_booksim "$@"
quick=${1:-}

# BookSim2 reference (packet latency in cycles) at each offered load, flits/node/cycle.
ref_l1="0.005:32.98 0.01:33.39 0.05:33.52 0.10:33.83 0.15:34.37 0.20:35.08 0.25:36.18 0.30:37.90 0.35:41.20"
ref_l8="0.005:41.43 0.01:41.33 0.05:42.83 0.10:44.55 0.15:47.12 0.20:50.73 0.25:56.18 0.30:65.97"
if [[ $quick == --quick ]]; then ref_l1="0.005:32.98 0.10:33.83 0.30:37.90"; ref_l8="0.005:41.43 0.10:44.55 0.30:65.97"; fi

field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }

worst=0
for flits in 1 8; do
  refs=$ref_l1; [[ $flits == 8 ]] && refs=$ref_l8
  echo "== packet latency (cycles), L = $flits flit(s); offered and accepted in flits/node/cycle"
  printf "%-8s %12s %12s %8s %10s %8s\n" offered "nocflow" "BookSim2" "error" accepted hops
  for pair in $refs; do
    rate=${pair%%:*}; ref=${pair##*:}
    dir="$out/L${flits}_r${rate}"
    "$nocflow" traffic --hw configs/hw/booksim8x8.yaml --rate "$rate" --packet-flits "$flits" --out "$dir" --quiet >/dev/null
    lat=$(field "$dir/summary.json" avg_packet_latency)
    acc=$(field "$dir/summary.json" accepted_flits_per_node_per_cycle)
    hops=$(field "$dir/summary.json" avg_hops)
    err=$(python3 -c "print(f'{100*($lat-$ref)/$ref:+.2f}')")
    worst=$(python3 -c "print(max($worst, abs($err)))")
    printf "%-8s %12.2f %12.2f %7s%% %10.4f %8.2f\n" "$rate" "$lat" "$ref" "$err" "$acc" "$hops"
  done
done
echo "largest latency error: ${worst}% (target: within 5%)"
echo "zero-load formula: T0 = 5 R + 2 + (L - 1) (+1 when L > buffer depth); see the 0.005 rows"

if [[ $quick != --quick ]]; then
  for flits in 1 8; do
    ref=0.406; [[ $flits == 8 ]] && ref=0.366
    "$nocflow" traffic --hw configs/hw/booksim8x8.yaml --packet-flits "$flits" --find-saturation \
      --out "$out/saturation_L$flits" --quiet >/dev/null
    python3 - "$out/saturation_L$flits/saturation.json" "$flits" "$ref" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); ref = float(sys.argv[3])
lo, hi = j["latency_rule"]["last_stable"], j["latency_rule"]["first_unstable"]
mid = (lo + hi) / 2
print(f"== saturation, L = {sys.argv[2]}: last stable {lo:.4f}, first unstable {hi:.4f} "
      f"(BookSim2 last stable {ref}); difference {mid - ref:+.4f} (target within 0.01)")
print(f"   throughput rule (accepted < 0.95 x offered, or a source < 0.95 of its load; fixed-length runs): first saturated "
      f"{j['throughput_rule']['first_saturated']:.4f}")
PY
  done
fi
echo "nocflow: outputs in $out/"
