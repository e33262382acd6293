"""The per-kernel profile (compile(..., profile=True).profile(...), `cuvil
profile`): counts are exact, times add up to no more than the wall time,
kernels are described from the IR, and the numbers still match eager."""
import json
import subprocess
import sys

import pytest
import torch
import torch.nn as nn

import cuvil
from cuvil import profiling


class TwinLayers(nn.Module):
    """Two identical Linear + ReLU layers: one shared kernel, called twice."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(128, 128), nn.Linear(128, 128)

    def forward(self, x):
        return torch.relu(self.b(torch.relu(self.a(x))))


def _model_and_input():
    torch.manual_seed(0)
    return TwinLayers().eval(), torch.randn(32, 128)


@pytest.mark.parametrize("threads", [1, 2])
def test_profile_counts_every_kernel_call(threads):
    model, x = _model_and_input()
    fast = cuvil.compile(model, (x,), num_threads=threads, profile=True)
    torch.testing.assert_close(fast(x), model(x), rtol=1e-5, atol=1e-5)
    profile = fast.profile(x, runs=7, warmup=1)
    assert profile.runs == 7 and profile.rows
    by_what = {}
    for row in profile.rows:
        assert row.calls_per_run == int(row.calls_per_run) >= 1, row
        assert row.ms_per_run > 0 and 0 < row.share <= 1
        by_what.setdefault(row.what, []).append(row)
    matmuls = [r for r in profile.rows if "{mulf,addf}" in r.what and "(p,p,r" in r.what]
    # The two layers' matmuls are one kernel function, timed twice per call.
    assert len(matmuls) == 1 and matmuls[0].calls_per_run == 2, profile.table()
    assert sum(r.ms_per_run for r in profile.rows) <= profile.wall_ms_per_run
    assert profile.outside_kernels_ms >= 0
    assert "(outside kernels)" in profile.table() and matmuls[0].name in profile.table()
    assert json.loads(profile.to_json())["kernels"][0]["name"] == profile.rows[0].name


def test_profile_of_a_cached_library_is_described():
    model, x = _model_and_input()
    first = cuvil.compile(model, (x,), profile=True)
    first(x)
    again = cuvil.compile(model, (x,), profile=True)
    again(x)
    assert again.stats["cache_hit"] == 1.0
    rows = again.profile(x, runs=2).rows
    assert rows and all(r.what for r in rows)


def test_profile_needs_a_profiled_build():
    model, x = _model_and_input()
    fast = cuvil.compile(model, (x,))
    with pytest.raises(ValueError, match="profile=True"):
        fast.profile(x)


def test_kernel_ids_come_from_the_kernel_attribute():
    """The counter index is the function's `cuvil.kernel` attribute, not a
    number parsed from its name."""
    from cuvil.ir import Context, Module
    with Context():
        module = Module.parse("""
            func.func private @renamed() attributes {cuvil.kernel = 12 : i64} { return }
            func.func private @cuvil_kernel_3_lookalike() { return }
            func.func @main() { return }
        """)
        fns = {op.attributes["sym_name"].value: op for op in module.body.operations}
        assert profiling.kernel_id(fns["renamed"]) == 12
        assert profiling.kernel_id(fns["cuvil_kernel_3_lookalike"]) is None
        assert profiling.kernel_id(fns["main"]) is None
        assert list(profiling.describe_kernels(module)) == ["renamed"]
        assert profiling.describe_kernels(module)["renamed"]["id"] == 12


def test_cli_profile(tmp_path):
    factory = tmp_path / "twin.py"
    factory.write_text(
        "import torch\n"
        "def make():\n"
        "    torch.manual_seed(0)\n"
        "    return torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU()).eval()\n")
    out = tmp_path / "profile.json"
    proc = subprocess.run([sys.executable, "-m", "cuvil.cli", "profile", f"{factory}:make",
                           "--input", "8x64xf32", "--runs", "3", "--threads", "1", "--json", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["runs"] == 3 and report["within_tolerance"]
    assert 0 <= report["max_abs_error_vs_eager"] <= 1e-5          # fp32, K = 64
    assert f"max |cuvil - eager| = {report['max_abs_error_vs_eager']:.2e}" in proc.stdout
    assert "(outside kernels)" in proc.stdout
