#!/usr/bin/env bash
# Installs the system packages Ember's build needs that PyPI cannot provide (Debian/Ubuntu):
# a C++17 compiler, CMake, Ninja, ccache, Eigen (headers), SLEEF (vector math), Catch2 v2
# (C++ tests), for ember.data zlib (.tar.gz shards), libjpeg-turbo (JPEG fields) and libcurl
# (http(s) shards), and Gloo for ember.distributed's collectives.
# oneDNN and pybind11 come from PyPI instead (see docs/design/build.md).
#
# Idempotent and quiet: when everything is present it does nothing (no apt-get update), so it is
# cheap to run before every build. Needs root (or sudo) only when something is missing.
set -euo pipefail

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

missing=()
for p in g++ ninja-build ccache libeigen3-dev libsleef-dev catch2 zlib1g-dev libjpeg-dev \
  libcurl4-openssl-dev libgloo-dev; do
  installed "$p" || missing+=("$p")
done
# Any CMake >= 3.22 on PATH will do (Debian's, or one from pip); otherwise Debian's.
cmake_ok() {
  command -v cmake >/dev/null 2>&1 &&
    printf '3.22\n%s\n' "$(cmake --version | awk 'NR==1 {print $3}')" | sort -V -C
}
cmake_ok || missing+=(cmake)
# Debian splits venv/ensurepip into python3-venv; a python3 whose venv works needs nothing.
python3 -c "import ensurepip, venv" >/dev/null 2>&1 || missing+=(python3-venv)

if [ "${#missing[@]}" -eq 0 ]; then
  echo "setup-system: all system packages present"
  exit 0
fi

echo "setup-system: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "setup-system: root needed to install ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup-system: done"
