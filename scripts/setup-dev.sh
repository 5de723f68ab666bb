#!/usr/bin/env bash
# Everything the test suite needs: the system packages, then a virtual environment (.venv, or
# $VENV) holding Ember's build requirements (pinned in pyproject.toml) and Ember itself installed
# in editable mode with its test extra. Safe to run again; it only adds what is missing.
#
# The build runs without pip's build isolation on purpose: the editable build and the CMake build
# of scripts/test.sh then compile with the same header paths, so ccache serves the second one, and
# repeated runs on one machine hit the cache instead of a fresh temporary environment each time.
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
"${pip[@]}" --no-build-isolation -e ".[test]"
echo "setup-dev: done ($("$venv/bin/python" -c 'import ember; print("ember", ember.__version__)'))"
