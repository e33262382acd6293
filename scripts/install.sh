#!/usr/bin/env bash
# Sets up Cuvil from a clone: a virtualenv (.venv, or the active one), the
# pinned build requirements, then `pip install .` (CMake build into ./build).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${VIRTUAL_ENV:-}" ]; then
  [ -x .venv/bin/python ] || python3 -m venv .venv
  # shellcheck disable=SC1091
  . .venv/bin/activate
fi
start=$(date +%s)
python -m pip install -q $(python scripts/pins.py build) $(python scripts/pins.py test)
python -m pip install -q --no-build-isolation ".[test]"
echo "cuvil installed into ${VIRTUAL_ENV} in $(( $(date +%s) - start )) s"
