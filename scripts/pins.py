"""Prints requirement specs from pyproject.toml (the build stack's exact pins,
the runtime and test ranges; the tested versions are scripts/constraints.txt).

    python scripts/pins.py build     # [build-system].requires
    python scripts/pins.py test      # runtime + test extras
"""
import sys
import tomllib
from pathlib import Path

project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
which = sys.argv[1] if len(sys.argv) > 1 else "build"
if which == "build":
    specs = project["build-system"]["requires"]
else:
    specs = project["project"]["dependencies"] + project["project"]["optional-dependencies"].get(which, [])
print("\n".join(specs))
