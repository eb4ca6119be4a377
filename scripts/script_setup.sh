# SPDX-License-Identifier: MIT
# Sourced by the benchmark and replay scripts (`source "$(dirname "$0")/script_setup.sh" NAME`):
# runs from the repository root with the built binary in $nocflow (NOCFLOW, default
# build/release/sim/nocflow), the output folder $out (NOCFLOW_OUT, default out/NAME, created)
# and the repeat count $runs (RUNS, default 3) for medians. A script passes its arguments after
# NAME: --help prints its header comment, and any other is refused unless the script listed it
# in script_flags before sourcing this.
for arg in "${@:2}"; do
  case $arg in
    -h | --help)
      sed -n '3,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
      echo "Environment (paths given relative to where you run it; the defaults in the repository):"
      echo "NOCFLOW, the binary (default build/release/sim/nocflow); NOCFLOW_OUT, the output folder"
      echo "(default out/$1); RUNS, repeats for medians where the script takes them (3)."
      exit 0
      ;;
    *)
      if [[ " ${script_flags[*]:-} " != *" $arg "* ]]; then
        echo "$1: unknown argument '$arg': settings are environment variables (--help lists them)" >&2
        exit 2
      fi
      ;;
  esac
done
# NOCFLOW and NOCFLOW_OUT as given are relative to where the script was started.
[[ -n ${NOCFLOW:-} ]] && NOCFLOW=$(realpath -m -- "$NOCFLOW")
[[ -n ${NOCFLOW_OUT:-} ]] && NOCFLOW_OUT=$(realpath -m -- "$NOCFLOW_OUT")
cd "$(dirname "${BASH_SOURCE[0]}")/.."
nocflow=${NOCFLOW:-build/release/sim/nocflow}
if [[ ! -x $nocflow ]]; then
  if [[ -n ${NOCFLOW:-} ]]; then
    echo "NOCFLOW=$NOCFLOW: no executable there" >&2
  else
    echo "build first: cmake --preset release && cmake --build --preset release" >&2
  fi
  exit 1
fi
out=${NOCFLOW_OUT:-out/$1}
runs=${RUNS:-3}
mkdir -p "$out"
