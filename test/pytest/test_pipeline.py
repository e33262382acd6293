"""The pipeline is one piece of data (cuvil.pipeline): the docs are generated
from it, no other module lists passes, and its fingerprint (part of the cache
key) follows what decides the code: script texts, not their paths."""
import re
import shutil
from pathlib import Path

from cuvil import pipeline

from conftest import ROOT

PACKAGE = ROOT / "python" / "cuvil"


def test_pipeline_md_shows_the_pipeline_the_code_runs():
    text = (ROOT / "transform_scripts" / "PIPELINE.md").read_text()
    begin, end = text.index(pipeline.MARKDOWN_BEGIN), text.index(pipeline.MARKDOWN_END)
    assert text[begin:end + len(pipeline.MARKDOWN_END)] == pipeline.markdown(), \
        "regenerate with `python -m cuvil.pipeline --markdown` and paste it into PIPELINE.md"


def _pass_names():
    passes = set()
    pipe = pipeline.compile_pipeline(2, profile=True)
    lists = [pipeline.TORCH_BACKEND, pipeline.TO_LINALG, *(s.passes for s in pipe.steps if hasattr(s, "passes"))]
    for p in (p for lst in lists for p in lst):
        passes.update(re.findall(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)+", p.split("{")[0]))
    return passes - {"builtin.module"}


def test_no_other_module_lists_passes():
    names = _pass_names()
    assert {"cuvil-split-prepack", "one-shot-bufferize", "convert-func-to-llvm"} <= names
    for path in PACKAGE.glob("*.py"):
        if path.name == "pipeline.py":
            continue
        quoted = set(re.findall(r"""["']([a-z][a-z0-9-]+)[{"',)]""", path.read_text()))
        assert not (quoted & names), f"{path.name} names passes {sorted(quoted & names)}: put them in pipeline.py"
        assert "builtin.module(" not in path.read_text(), path.name


def test_fingerprint_follows_script_text_not_path(tmp_path):
    from cuvil.transform import script_path
    copy = tmp_path / "matmul_cpu.mlir"
    shutil.copy(script_path("matmul_cpu"), copy)
    shipped = pipeline.compile_pipeline(1, schedule=[("matmul_cpu", "__transform_main")])
    same = pipeline.compile_pipeline(1, schedule=[(str(copy), "__transform_main")])
    assert same.fingerprint() == shipped.fingerprint()
    copy.write_text(copy.read_text() + "\n// changed\n")
    assert pipeline.compile_pipeline(1, schedule=[(str(copy), "__transform_main")]).fingerprint() \
        != shipped.fingerprint()


def test_fingerprint_follows_threads_profile_and_opt_level():
    prints = {pipeline.compile_pipeline(t, opt_level=o, profile=p).fingerprint()
              for t in (1, 2, 3) for o in (0, 3) for p in (False, True)}
    assert len(prints) == 12
