#!/usr/bin/env bash
# Uncompiled vs GEPA- vs MIPROv2-compiled program on the validation half of MTRAG-UN dev (issue 3).
# Usage: bash bench/mtrag_compile_bench.sh [N_QUESTIONS_BEFORE_SPLIT] [GEPA_METRIC_CALLS] [MIPRO_TRIALS]
#   STEPS="gepa mipro" bash bench/mtrag_compile_bench.sh ...   runs only those steps (default: base gepa mipro)
# Each step is an MLflow run with its own folder; a compile step also evaluates its program on the
# validation half. The log is runs/bench-mtrag-<time>.log.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-24}; GEPA_CALLS=${2:-36}; MIPRO_TRIALS=${3:-3}
STEPS=${STEPS:-base gepa mipro}
CFG=bench/mtrag_compile.yaml
AF=.venv/bin/askfirst
LOG=runs/bench-mtrag-$(date -u +%Y%m%d-%H%M%S).log
mkdir -p runs
echo "log: $LOG"
step() { echo "== $* ($(date -u +%T))" | tee -a "$LOG"; }
last_run_dir() { grep -o 'run folder: [^ ]*' "$LOG" | tail -1 | cut -d' ' -f3; }
compiled_eval() {
  local run; run=$(last_run_dir)
  step "$1-compiled eval of $run"
  $AF eval -c "$run/config.yaml" --program "$run" --set data.split=validation 2>&1 | tee -a "$LOG"
}

for s in $STEPS; do
  case $s in
    base)
      step "uncompiled eval"
      $AF eval -c $CFG --limit "$N" --set data.split=validation 2>&1 | tee -a "$LOG" ;;
    gepa)
      step "GEPA compile"
      $AF compile -c $CFG --limit "$N" --optimizer gepa --set compile.max_metric_calls="$GEPA_CALLS" 2>&1 | tee -a "$LOG"
      compiled_eval GEPA ;;
    mipro)
      step "MIPROv2 compile"
      $AF compile -c $CFG --limit "$N" --optimizer miprov2 --set compile.num_trials="$MIPRO_TRIALS" \
        --set compile.num_candidates=2 2>&1 | tee -a "$LOG"
      compiled_eval MIPROv2 ;;
    *) echo "unknown step $s" >&2; exit 2 ;;
  esac
done
step "done"
