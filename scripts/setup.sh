#!/usr/bin/env bash
# Create .venv and install askfirst with the offline LM and test tools. Safe to re-run: pip skips what is there.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# This machine's pip config names local index folders that do not all exist; pip warns about each one.
quiet() { "$@" 2>&1 | { grep -v "is ignored: it is neither a file nor a directory" || true; }; }
# torch first, pinned to the CPU build that lies on these machines: an unpinned torch pulls GBs of CUDA packages.
quiet .venv/bin/pip install --quiet torch==2.13.0
# llama-cpp-python builds from source (about 9 minutes the first time; pip caches the wheel afterwards).
quiet .venv/bin/pip install --quiet -e ".[local,dev]"
.venv/bin/askfirst --help > /dev/null
echo "askfirst installed in .venv"
