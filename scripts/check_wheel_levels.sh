#!/usr/bin/env bash
# Runs part of the test suite against an installed Ember on emulated CPUs of lower levels
# (docs/building-wheels.md): QEMU's user-mode emulation of a Haswell (AVX2, no AVX-512) and of a
# Nehalem (x86-64-v2: no AVX at all). An instruction of a higher level anywhere in what runs is
# an illegal instruction there, which a native run on a bigger CPU cannot show.
#
#   bash scripts/check_wheel_levels.sh /path/to/venv/bin/python [pytest args...]
#
# The interpreter must have ember installed (not from this source tree) and pytest. Emulation is
# 10-50x slower than the machine, hence a subset by default.
set -euo pipefail
cd "$(dirname "$0")/.."

python=${1:?usage: check_wheel_levels.sh PYTHON [pytest args]}
shift
tests=("$@")
if [ "${#tests[@]}" -eq 0 ]; then
  tests=(tests/python/test_op_db.py -k "exp or log or sin or tanh or sigmoid or erf or softmax")
fi
command -v qemu-x86_64 >/dev/null || {
  echo "check_wheel_levels: qemu-x86_64 missing (Debian: apt-get install qemu-user)" >&2
  exit 1
}
run_dir=$(mktemp -d)  # outside the source tree: the installed package is what gets imported
for cpu_level in "Haswell avx2 AVX2" "Nehalem default DEFAULT"; do
  read -r cpu level expected <<<"$cpu_level"
  got=$(cd "$run_dir" && qemu-x86_64 -cpu "$cpu" "$python" -c \
    "import ember; print(ember.backends.cpu.get_cpu_capability())" 2>/dev/null)
  echo "check_wheel_levels: emulated $cpu: ember runs at $got"
  [ "$got" = "$expected" ] || { echo "expected $expected" >&2; exit 1; }
  (cd "$run_dir" && qemu-x86_64 -cpu "$cpu" "$python" -m pytest -q -p no:cacheprovider \
    --rootdir "$OLDPWD" "${tests[@]/#tests/$OLDPWD/tests}" 2>/dev/null | tail -3)
  echo "check_wheel_levels: $level level on emulated $cpu: passed"
done
