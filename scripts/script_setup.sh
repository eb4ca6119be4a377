# SPDX-License-Identifier: MIT
# Sourced by the benchmark and replay scripts (`source "$(dirname "$0")/script_setup.sh" NAME`):
# runs from the repository root with the built binary in $nocflow (NOCFLOW, default
# build/release/sim/nocflow), the output folder $out (NOCFLOW_OUT, default out/NAME, created)
# and the repeat count $runs (RUNS, default 3) for medians. A script that takes no arguments
# passes its own after NAME: --help prints its header comment, anything else is refused.
if (($# > 1)); then
  case $2 in
    -h | --help)
      sed -n '3,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
      exit 0
      ;;
    *)
      echo "$1: unknown argument '$2': settings are environment variables (--help lists them)" >&2
      exit 2
      ;;
  esac
fi
cd "$(dirname "${BASH_SOURCE[0]}")/.."
nocflow=${NOCFLOW:-build/release/sim/nocflow}
[[ -x $nocflow ]] || { echo "build first: cmake --preset release && cmake --build --preset release" >&2; exit 1; }
out=${NOCFLOW_OUT:-out/$1}
runs=${RUNS:-3}
mkdir -p "$out"
