#!/usr/bin/env bash
# mypy over Cuvil's own Python modules (python/cuvil/*.py), as installed;
# settings in pyproject.toml [tool.mypy].
set -euo pipefail
cd "$(dirname "$0")/.."
modules=$(cd python && ls cuvil/*.py | sed 's/\.py$//; s|/|.|; s|\.__init__$||')
# From an empty folder: the checkout's python/ must not shadow the installed package.
here=$PWD
cd "$(mktemp -d)"
python -m mypy --config-file "$here/pyproject.toml" $(printf -- '-m %s ' $modules)
