#!/usr/bin/env bash
# Everything the test suite needs: the system packages, then a virtual environment (.venv, or
# $VENV) holding Ember's build requirements (pinned in pyproject.toml) and Ember itself installed
# in editable mode with its test extra. Safe to run again; it only adds what is missing.
#
# The editable build happens in build/, the development tree that scripts/test.sh builds and tests
# (scikit-build-core's build-dir setting): test.sh then only adds the C++ tests, so the library is
# compiled once, not twice (on a 2-core machine with no ccache that is 18 minutes saved). It runs
# without pip's build isolation for the same reason: both builds see the same pybind11 and oneDNN
# paths, so neither configure invalidates the other's objects.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup-system.sh

venv=${VENV:-.venv}
if [ ! -x "$venv/bin/python" ]; then
  echo "setup-dev: creating $venv"
  python3 -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)
mapfile -t build_reqs < <("$venv/bin/python" scripts/build_requirements.py)
echo "setup-dev: installing build requirements: ${build_reqs[*]}"
"${pip[@]}" "${build_reqs[@]}"
echo "setup-dev: installing ember (editable) with its test extra"
"${pip[@]}" --no-build-isolation --config-settings=build-dir=build -e ".[test]"
echo "setup-dev: done ($("$venv/bin/python" -c 'import ember; print("ember", ember.__version__)'))"
