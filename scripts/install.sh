#!/usr/bin/env bash
# Sets up Cuvil from a clone: a virtualenv (.venv, or the active one), the
# pinned build requirements and the tested dependency set
# (scripts/constraints.txt), then `pip install .` (CMake build into ./build).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${VIRTUAL_ENV:-}" ]; then
  [ -x .venv/bin/python ] || python3 -m venv .venv
  # shellcheck disable=SC1091
  . .venv/bin/activate
fi
start=$(date +%s)
# The tested versions of everything pyproject.toml gives as a range.
python -m pip install -q -c scripts/constraints.txt $(python scripts/pins.py build) $(python scripts/pins.py test)
python -m pip install -q -c scripts/constraints.txt --no-build-isolation ".[test]"
echo "cuvil installed into ${VIRTUAL_ENV} in $(( $(date +%s) - start )) s"
# Optional, for the AArch64 AOT cross-build tests (test_aot.py skips them
# without it): the Debian/Ubuntu AArch64 cross compiler and libc, and qemu's
# user-mode emulator to run the cross-built model (about 60 MB to download,
# 270 MB on disk). Only as root with apt-get, only when missing,
# never failing the install; CUVIL_NO_APT=1 skips it.
if [ -z "${CUVIL_NO_APT:-}" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null \
    && ! { command -v aarch64-linux-gnu-gcc && command -v qemu-aarch64; } >/dev/null; then
  if { export DEBIAN_FRONTEND=noninteractive
       timeout 300 apt-get update -q && timeout 600 apt-get install -y -q --no-install-recommends \
         gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user; } >/tmp/cuvil-apt.log 2>&1; then
    echo "installed the AArch64 cross compiler and qemu-aarch64"
  else
    echo "note: could not install gcc-aarch64-linux-gnu (see /tmp/cuvil-apt.log); AArch64 AOT tests will skip"
  fi
fi
