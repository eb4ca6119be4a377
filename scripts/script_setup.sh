# SPDX-License-Identifier: MIT
# Sourced by the benchmark and replay scripts (`source "$(dirname "$0")/script_setup.sh" NAME`):
# runs from the repository root with the built binary in $nocflow (NOCFLOW, default
# build/release/sim/nocflow), the output folder $out (NOCFLOW_OUT, default out/NAME, created)
# and the repeat count $runs (RUNS, default 3) for medians.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
nocflow=${NOCFLOW:-build/release/sim/nocflow}
[[ -x $nocflow ]] || { echo "build first: cmake --preset release && cmake --build --preset release" >&2; exit 1; }
out=${NOCFLOW_OUT:-out/$1}
runs=${RUNS:-3}
mkdir -p "$out"
