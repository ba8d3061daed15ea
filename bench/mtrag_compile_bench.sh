#!/usr/bin/env bash
# Uncompiled vs GEPA- vs MIPROv2-compiled program on the validation half of MTRAG-UN dev (issue 3).
# Usage: bash bench/mtrag_compile_bench.sh [N_QUESTIONS_BEFORE_SPLIT] [GEPA_METRIC_CALLS] [MIPRO_TRIALS]
# Every step is an MLflow run; the table is printed by bench/compile_report.py from the run folders.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-24}; GEPA_CALLS=${2:-36}; MIPRO_TRIALS=${3:-3}
CFG=bench/mtrag_compile.yaml
AF=.venv/bin/askfirst
LOG=runs/bench-mtrag-$(date -u +%Y%m%d-%H%M%S).log
mkdir -p runs
echo "log: $LOG"
step() { echo "== $* ($(date -u +%T))" | tee -a "$LOG"; }
run_dir() { grep -o 'run folder: [^ ]*' "$LOG" | tail -1 | cut -d' ' -f3; }

step "uncompiled eval"
$AF eval -c $CFG --limit "$N" --set data.split=validation 2>&1 | tee -a "$LOG"
step "GEPA compile"
$AF compile -c $CFG --limit "$N" --optimizer gepa --set compile.max_metric_calls="$GEPA_CALLS" 2>&1 | tee -a "$LOG"
GEPA_RUN=$(run_dir)
step "GEPA-compiled eval"
$AF eval -c "$GEPA_RUN/config.yaml" --program "$GEPA_RUN" --set data.split=validation 2>&1 | tee -a "$LOG"
step "MIPROv2 compile"
$AF compile -c $CFG --limit "$N" --optimizer miprov2 --set compile.num_trials="$MIPRO_TRIALS" --set compile.num_candidates=2 2>&1 | tee -a "$LOG"
MIPRO_RUN=$(run_dir)
step "MIPROv2-compiled eval"
$AF eval -c "$MIPRO_RUN/config.yaml" --program "$MIPRO_RUN" --set data.split=validation 2>&1 | tee -a "$LOG"
step "done"
