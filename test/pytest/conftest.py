"""Shared pytest setup and helpers.

Every test gets its own Cuvil cache directory, and compiled code uses one
thread unless a test says otherwise (CI machines are small and timing-free
tests should not depend on core counts). The models come from
examples/models.py, the same ones the benchmarks run."""
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.utils import _pytree as pytree

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))   # `from models import ...`


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CUVIL_CACHE_DIR", str(tmp_path / "cuvil-cache"))
    monkeypatch.setenv("CUVIL_NUM_THREADS", "1")
    monkeypatch.setenv("CUVIL_REPRO_DIR", str(tmp_path / "repro"))


@pytest.fixture(autouse=True)
def _fresh_numpy_rng(request):
    """A module that draws its inputs from a module-level `rng` gets it seeded
    anew for every test: inputs do not depend on which tests ran before."""
    if isinstance(getattr(request.module, "rng", None), np.random.Generator):
        request.module.rng = np.random.default_rng(0)


def scaled_tolerance(want: torch.Tensor, ulps: float) -> dict:
    """assert_close tolerances of `ulps` units of the dtype's epsilon times
    the output's scale (its largest magnitude): what an error of a few
    roundings per output element allows, whatever the values' size."""
    eps = torch.finfo(want.dtype).eps
    scale = max(float(want.abs().max()), 1e-30) if want.numel() else 1.0
    return dict(rtol=ulps * eps, atol=ulps * eps * scale)


class Lambda(torch.nn.Module):
    """A module computing `fn(*inputs)`: one op or a few, as a test's model."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def assert_outputs_match(got, want, *, rtol=None, atol=None, ulps=None, equal_nan=False) -> None:
    """Every tensor leaf of eager's outputs `want` has a compiled counterpart
    in `got` with its shape, dtype and values: within rtol/atol, or within
    `ulps` epsilons of each output's scale (scaled_tolerance); NaN matches
    NaN where `equal_nan`."""
    assert (ulps is None) != (rtol is None or atol is None), "give rtol and atol, or ulps"
    want_leaves = [t for t in pytree.tree_leaves(want) if isinstance(t, torch.Tensor)]
    got_leaves = pytree.tree_leaves(got)
    assert len(got_leaves) == len(want_leaves), (len(got_leaves), len(want_leaves))
    for g, w in zip(got_leaves, want_leaves):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        tol = scaled_tolerance(w, ulps) if ulps is not None else dict(rtol=rtol, atol=atol)
        torch.testing.assert_close(g, w, equal_nan=equal_nan, **tol)


def compile_and_compare(model, *inputs, rtol=None, atol=None, ulps=None, equal_nan=False, **compile_kwargs):
    """Compiles `model` for `inputs` (cuvil.compiler.CompiledModule with
    `compile_kwargs`), runs it and eager, and checks the outputs
    (assert_outputs_match with the tolerances given). Returns (compiled
    module, compiled outputs, eager outputs)."""
    from cuvil.compiler import CompiledModule
    model = model.eval()
    fast = CompiledModule(model, inputs, **compile_kwargs)
    with torch.no_grad():
        want = model(*inputs)
        got = fast(*inputs)
    assert_outputs_match(got, want, rtol=rtol, atol=atol, ulps=ulps, equal_nan=equal_nan)
    return fast, got, want


def load_script(name: str):
    """scripts/<name>.py as a module (the conformance scripts: their cases
    and run_case)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def recorded_sample(record: Path, passing: bool, count: int, skip=("crash",)):
    """(name, recorded status) of about `count` cases of a conformance record
    (conformance/*/results.json), evenly spread over the sorted names: the
    passing ones, or the failing ones (less the statuses in `skip`)."""
    import json
    cases = json.loads(record.read_text())["cases"]
    names = sorted(n for n, c in cases.items() if (c["status"] == "pass") == passing and c["status"] not in skip)
    step = max(1, len(names) // count)
    return [(n, cases[n]["status"]) for n in names[::step][:count]]
