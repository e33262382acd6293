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


def test_weight_prefetch_follows_the_model_weights_at_its_precision():
    """The AMX kernels prefetch weights only for models too large to stay in
    cache (scheduling.prefetch_weights), or of unknown size; the choice is
    part of the pipeline, so of the cache key."""
    from cuvil import scheduling
    from cuvil.options import CompileOptions

    def lower(pipe):
        return pipe.step("lower").passes
    limit = scheduling.PREFETCH_MIN_WEIGHT_BYTES
    small, large, unknown = (pipeline.compile_pipeline(1, weight_bytes=b) for b in (limit, limit + 1, None))
    assert pipeline.AMX_NO_PREFETCH[0] in lower(small) and pipeline.AMX[0] not in lower(small)
    assert pipeline.AMX[0] in lower(large) and pipeline.AMX[0] in lower(unknown)
    assert small.fingerprint() != large.fingerprint()
    # 40M parameters: 40 MB in int8 (no prefetch), 80 MB in bf16 (prefetch).
    int8, bf16 = (CompileOptions.make(precision=p).pipeline(1, 40_000_000) for p in ("int8", "bf16"))
    assert pipeline.AMX_NO_PREFETCH[0] in lower(int8) and pipeline.AMX[0] in lower(bf16)


def test_buffer_copies_call_memcpy(tmp_path):
    """llc compiles for the host's named triple: without one (mlir-translate
    writes none) it knows no C library and expands each memcpy of main's
    buffer copies into a byte-at-a-time loop (BERT-base spent 22 of 250 ms
    there). The object llc makes with the codegen's own command line calls
    memcpy."""
    import subprocess

    from cuvil import tools
    ll = tmp_path / "copy.ll"
    ll.write_text("define void @copy(ptr %d, ptr %s) {\n"
                  "  call void @llvm.memcpy.p0.p0.i64(ptr %d, ptr %s, i64 393216, i1 false)\n"
                  "  ret void\n}\n"
                  "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)\n")
    obj = tmp_path / "copy.o"
    llc = pipeline.Codegen(num_threads=1).commands(str(ll), str(obj), "copy.so", "map", pipeline.Tools.installed())[0]
    assert llc[0].endswith("llc") and f"-mtriple={tools.host_triple()}" in llc
    subprocess.run(llc, check=True, env=tools.tool_env())
    symbols = subprocess.run(["nm", "--undefined-only", str(obj)], capture_output=True, text=True, check=True).stdout
    assert re.search(r"\bmemcpy\b", symbols), f"the copy became a loop: no call to memcpy in {symbols!r}"
