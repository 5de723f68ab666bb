#!/usr/bin/env bash
# The whole test suite, as the README and CI run it: builds the development tree in build/
# (the Python extension and the Catch2 tests), runs the C++ tests with ctest, then the Python
# tests with pytest against build/python (so they test this working tree, never a stale install).
# After scripts/setup-dev.sh, build/ already holds the library (the editable install builds there),
# so this adds only the C++ tests.
#
#   bash scripts/test.sh                           # uses .venv (made by scripts/setup-dev.sh)
#   PYTHON=/path/to/python bash scripts/test.sh    # any environment with the test requirements
#   BUILD_DIR=build-debug JOBS=4 bash scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-.venv/bin/python}
if ! "$python" -c "import pybind11, pytest, numpy" >/dev/null 2>&1; then
  echo "test.sh: $python lacks the test requirements; run: bash scripts/setup-dev.sh" >&2
  exit 1
fi
build=${BUILD_DIR:-build}
jobs=${JOBS:-2}

echo "== build ($build)"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMBER_BUILD_TESTS=ON -DEMBER_NATIVE=OFF \
  -DPython_EXECUTABLE="$("$python" -c 'import sys; print(sys.executable)')" \
  -Dpybind11_DIR="$("$python" -m pybind11 --cmakedir)" >/dev/null
cmake --build "$build" -j "$jobs"

echo "== C++ tests (ctest)"
ctest --test-dir "$build" --output-on-failure -j "$jobs"

echo "== ISA check: no AVX code can run outside the dispatched kernels"
"$python" scripts/check_isa_leaks.py "$build"

# The SIMD kernels again at the two levels every x86-64 CI machine can run, forced: a kernel
# that is wrong at one level only fails here (docs/design/cpu-dispatch.md, "Testing every level").
# The machine's own level is the full run below.
level_tests=(tests/python/test_op_db.py tests/python/test_elementwise.py tests/python/test_reduce.py
  tests/python/nn/test_nn_activation.py tests/python/nn/test_nn_softmax.py
  tests/python/nn/test_nn_norm.py tests/python/nn/test_nn_loss.py tests/python/test_optim.py
  tests/python/test_matmul.py tests/python/linalg/test_linalg_misc.py
  tests/python/nn/test_nn_sdpa_fused.py tests/python/nn/test_nn_transformer_fastpath.py
  tests/python/quantization)
for level in default avx2; do
  echo "== Python tests of the SIMD kernels at EMBER_CPU_CAPABILITY=$level"
  level_log=$(mktemp)
  if ! EMBER_CPU_CAPABILITY=$level PYTHONPATH="$build/python" "$python" -m pytest \
    "${level_tests[@]}" -q -p no:cacheprovider >"$level_log" 2>&1; then
    cat "$level_log"
    exit 1
  fi
  echo "$level level: $(tail -1 "$level_log")"
  rm -f "$level_log"
done

echo "== Python tests (pytest)"
PYTHONPATH="$build/python" "$python" -m pytest tests/python -q -p no:cacheprovider
