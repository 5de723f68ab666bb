#!/usr/bin/env bash
# The whole test suite, as the README and CI run it: builds the development tree in build/
# (the Python extension and the Catch2 tests), runs the C++ tests with ctest, then the Python
# tests with pytest against build/python (so they test this working tree, never a stale install).
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
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMBER_BUILD_TESTS=ON \
  -DPython_EXECUTABLE="$("$python" -c 'import sys; print(sys.executable)')" \
  -Dpybind11_DIR="$("$python" -m pybind11 --cmakedir)" >/dev/null
cmake --build "$build" -j "$jobs"

echo "== C++ tests (ctest)"
ctest --test-dir "$build" --output-on-failure -j "$jobs"

echo "== Python tests (pytest)"
PYTHONPATH="$build/python" "$python" -m pytest tests/python -q -p no:cacheprovider
