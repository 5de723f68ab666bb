#!/usr/bin/env bash
# Packs a Python 3.12 build of Ember, with the shared libraries it loads, for a GPU machine
# that has Python 3.12, CUDA, PyTorch and pytest but no package registry (CONTRIBUTING.md, "On
# a GPU machine"). Writes .gpu/site.tar.xz (the ember package: Python files and binaries),
# .gpu/libs.tar.xz (libdnnl, OpenBLAS, SLEEF, Gloo and what they load) and .gpu/setup, which
# unpacks both on the GPU machine and registers the libraries behind the system's own.
#
#   PY312=/path/to/python3.12 bash scripts/gpu_bundle.sh
#
# The build happens in build-py312/, one level deep like build/, so that with ccache's base_dir
# the two share compiled objects: after a build/ build only the bindings compile again.
set -euo pipefail
cd "$(dirname "$0")/.."

py312=${PY312:-python3.12}
venv=${VENV312:-build-py312-venv}  # build-*/ is git-ignored
if [ ! -x "$venv/bin/python" ]; then
  "$py312" -m venv "$venv"
fi
mapfile -t build_reqs < <(.venv/bin/python scripts/build_requirements.py)
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${build_reqs[@]}" numpy
# oneDNN and OpenBLAS from .venv, as build/ uses them: the same paths keep ccache's keys equal.
cmake -S . -B build-py312 -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMBER_BUILD_TESTS=OFF \
  -DEMBER_NATIVE=OFF -DPython_EXECUTABLE="$venv/bin/python" \
  -DPython3_EXECUTABLE="$venv/bin/python" \
  -Dpybind11_DIR="$("$venv/bin/python" -c 'import pybind11; print(pybind11.get_cmake_dir())')" \
  -Ddnnl_DIR="$(.venv/bin/python scripts/find_onednn.py)" \
  -DOpenBLAS_DIR="$(.venv/bin/python scripts/find_openblas.py)" > /dev/null
ninja -C build-py312

rm -rf .gpu/site .gpu/libs
mkdir -p .gpu/site .gpu/libs
grep -qx '/.gpu/' .git/info/exclude || echo '/.gpu/' >> .git/info/exclude
cp -rL python/ember .gpu/site/ember
find .gpu/site -name __pycache__ -prune -exec rm -rf {} +
cp build-py312/python/ember/*.so .gpu/site/ember/
strip --strip-unneeded .gpu/site/ember/*.so
# Every library the binaries load except the C runtime and the GPU's own (libcuda comes with
# the driver, libnccl with PyTorch there). setup.sh lists this folder after the system's, so a
# library the machine has is taken from the machine.
for f in .gpu/site/ember/*.so; do ldd "$f"; done | awk '/=>/ {print $3}' | sort -u |
  grep -v -E '/\.gpu/|/build-py312/|lib(c|m|pthread|dl|rt|stdc\+\+|gcc_s|cuda|nccl)\.so|ld-linux' |
  xargs -I{} cp -L {} .gpu/libs/
strip --strip-unneeded .gpu/libs/*.so* 2>/dev/null || true
(cd .gpu && tar -cJf site.tar.xz site && tar -cJf libs.tar.xz libs)
cat > .gpu/setup <<'EOF'
# Sourced on the GPU machine from the repository root: unpacks the bundle and sets PYTHONPATH.
mkdir -p /opt/ember && tar -xJf .gpu/libs.tar.xz -C /opt/ember && tar -xJf .gpu/site.tar.xz -C /opt/ember
nccl=$(find /opt /usr/local /usr/lib -name 'libnccl.so.2*' 2>/dev/null | head -1)
printf "/opt/ember/site/ember\n/opt/ember/libs\n%s\n" "$(dirname "${nccl:-/}")" \
  > /etc/ld.so.conf.d/zz-ember.conf
ldconfig
export PYTHONPATH=/opt/ember/site PYTHONUNBUFFERED=1
EOF
ls -l .gpu/*.tar.xz .gpu/setup
echo "gpu_bundle: carry .gpu/site.tar.xz .gpu/libs.tar.xz .gpu/setup; run 'source .gpu/setup; ...'"
