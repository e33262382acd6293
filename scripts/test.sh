#!/usr/bin/env bash
# Runs every test: lit (IR + Python FileCheck tests), pytest, then mypy over
# Cuvil's Python modules (scripts/typecheck.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
if [ -z "${VIRTUAL_ENV:-}" ] && [ -x .venv/bin/python ]; then . .venv/bin/activate; fi
lit -sv test "$@"; lit_rc=$?
python -m pytest -q --durations=25 test/pytest; py_rc=$?
bash scripts/typecheck.sh; mypy_rc=$?
# pytest exits 5 when it collected nothing: that is a failure here.
[ $lit_rc -eq 0 ] && [ $py_rc -eq 0 ] && [ $mypy_rc -eq 0 ]
