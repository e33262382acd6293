"""cuvil.compile end to end: numerics against PyTorch eager (stated
tolerances), output structures, errors a user can cause."""
import json
import re
import subprocess
import sys

import pytest
import torch

import cuvil
from conftest import ROOT, assert_outputs_match
from models import CNN, MLP, SMALL_BERT, SMALL_GPT2, SMALL_MLP, MatMul, bert, gpt2

# fp32 throughout; reductions are reassociated by tiling/vectorization.
RTOL, ATOL = 1e-4, 1e-5


class TupleDictOutputs(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 16)

    def forward(self, x, y):
        h = self.proj(x)
        return {"hidden": h, "pair": (y * 2.0, h.sum())}


class UsesIgamma(torch.nn.Module):
    def forward(self, x):   # torch-mlir has no lowering of the incomplete gamma function (nor Cuvil a decomposition)
        return torch.special.gammainc(torch.tanh(x) + 1.5, x.abs())


def assert_matches_eager(model, *inputs, atol=ATOL, rtol=RTOL):
    """cuvil.compile (the public entry point: cache on, compiled at the first
    call) against eager."""
    fast = cuvil.compile(model)
    with torch.no_grad():
        want = model(*inputs)
    got = fast(*inputs)
    assert_outputs_match(got, want, rtol=rtol, atol=atol)
    return fast, got, want


def test_mlp():
    torch.manual_seed(0)
    fast, _, _ = assert_matches_eager(MLP(SMALL_MLP).eval(), torch.randn(16, 64))
    assert fast.stats["cache_hit"] == 0.0
    assert set(fast.stats) >= {"import", "raise", "schedule", "lower", "codegen", "load"}


def test_mlp_weights_are_prepacked_not_inlined(tmp_path):
    torch.manual_seed(0)
    fast = cuvil.compile(MLP(SMALL_MLP).eval(), example_inputs=(torch.randn(4, 64),))
    fast.export_ir(str(tmp_path / "cuvil.mlir"), stage="cuvil")
    text = (tmp_path / "cuvil.mlir").read_text()
    assert "func.func @main_prepack" in text          # the W^T transposes run once
    assert "cuvil.packed = 0" in text
    assert "dense_resource" not in text               # no inlined weight data
    main = text[text.index("func.func @main("):text.index("func.func @main_prepack")]
    assert "linalg.transpose" not in main


def test_cnn():
    torch.manual_seed(0)
    assert_matches_eager(CNN().eval(), torch.randn(2, 3, 32, 32))


def test_tuple_and_dict_outputs():
    torch.manual_seed(0)
    _, got, want = assert_matches_eager(TupleDictOutputs().eval(), torch.randn(3, 8), torch.randn(5))
    assert isinstance(got, dict) and set(got) == {"hidden", "pair"}
    assert isinstance(got["pair"], tuple) and got["pair"][1].shape == torch.Size([])


def test_bert_small():
    model = bert(**SMALL_BERT)
    ids = torch.randint(0, model.config.vocab_size, (1, 64))
    assert_matches_eager(model, ids, atol=1e-4)


def test_gpt2_causal_block():
    model = gpt2(**SMALL_GPT2)
    ids = torch.randint(0, model.config.vocab_size, (1, 32))
    assert_matches_eager(model, ids, atol=1e-4)


class ReturnsOneTensorTwice(torch.nn.Module):
    def forward(self, x):
        y = x * 2
        return y, y, x


def test_a_tensor_returned_twice_is_two_outputs():
    # Each output is a buffer of its own (upstream buffer-results-to-out-params
    # crashed the process on one buffer returned twice).
    x = torch.randn(3, 5)
    _, got, _ = assert_matches_eager(ReturnsOneTensorTwice(), x)
    assert got[0].data_ptr() != got[1].data_ptr()
    got[0].add_(1)
    torch.testing.assert_close(got[1], x * 2)


def test_new_shape_recompiles():
    torch.manual_seed(0)
    model = MLP(SMALL_MLP).eval()
    fast = cuvil.compile(model)
    for batch in (2, 5):
        x = torch.randn(batch, 64)
        torch.testing.assert_close(fast(x), model(x), atol=ATOL, rtol=RTOL)
    assert fast.num_signatures == 2


def test_unsupported_op_names_op_and_source_line():
    with pytest.raises(cuvil.UnsupportedOpError) as info:
        cuvil.compile(UsesIgamma(), example_inputs=(torch.randn(4),))
    err = info.value
    assert "igamma" in err.op
    assert "test_compile.py:" in err.location    # the model's own source line
    assert err.reproducer and "torch-mlir-opt" in err.reproducer


def test_wrong_input_count_is_value_error():
    fast = cuvil.compile(MLP(SMALL_MLP).eval(), example_inputs=(torch.randn(2, 64),))
    with pytest.raises(ValueError, match="compiled for 1 input"):
        fast(torch.randn(2, 64), torch.randn(2, 64))


def test_non_tensor_input_is_type_error():
    fast = cuvil.compile(MLP(SMALL_MLP).eval())
    with pytest.raises(TypeError, match="input 0 is a list"):
        fast([1.0, 2.0])


def test_opt_level_0_runs_no_schedule_and_matches_eager():
    torch.manual_seed(0)
    model, x = MLP(SMALL_MLP).eval(), torch.randn(4, 64)
    fast = cuvil.compile(model, example_inputs=(x,), opt_level=0)
    with torch.no_grad():
        torch.testing.assert_close(fast(x), model(x), atol=ATOL, rtol=RTOL)
    assert fast.stage_ir("scheduled") == fast.stage_ir("cuvil")   # scalar loops only
    assert "vector." not in fast.stage_ir("llvm")
    optimized = cuvil.compile(model, example_inputs=(x,))
    assert optimized.library_path != fast.library_path and "vector." in optimized.stage_ir("scheduled")


def test_every_exported_stage_parses_back(tmp_path):
    """Each stage's IR file is valid input for the tools that replay it:
    torch-mlir's parser for the torch stage, Cuvil's for the others."""
    from cuvil.compiler import STAGES
    torch.manual_seed(0)
    fast = cuvil.compile(CNN().eval(), example_inputs=(torch.randn(1, 3, 16, 16),))
    for stage in STAGES:
        path = tmp_path / f"model.{stage}.mlir"
        fast.export_ir(str(path), stage)
        tool = "torch-mlir-opt" if stage == "torch" else "cuvil-opt"
        proc = subprocess.run([tool, str(path), "-o", str(tmp_path / f"{stage}.reparsed.mlir")],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"{stage}: {proc.stderr[-2000:]}"
        assert "func.func @main" in path.read_text() or "llvm.func @main" in path.read_text()


def test_export_ir_rejects_unknown_stage(tmp_path):
    fast = cuvil.compile(MLP(SMALL_MLP).eval(), example_inputs=(torch.randn(2, 64),))
    with pytest.raises(ValueError, match="stage must be one of"):
        fast.export_ir(str(tmp_path / "x.mlir"), stage="assembly")


@pytest.mark.parametrize("m,k,n", [(100, 70, 33), (1, 1, 1), (129, 257, 65)])
def test_matmul_shapes_the_tiles_do_not_divide(m, k, n):
    torch.manual_seed(0)
    assert_matches_eager(MatMul(), torch.randn(m, k), torch.randn(k, n), atol=1e-4)


def _cli(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "cuvil.cli", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_cli_compiles_a_factory_and_writes_every_stage(tmp_path):
    factory = tmp_path / "small.py"
    factory.write_text(f"import sys; sys.path.insert(0, {str(ROOT / 'examples')!r})\n"
                       "from models import MLP\n"
                       "def make():\n"
                       "    return MLP((1024, 256, 64)).eval()\n")
    proc = _cli("compile", f"{factory}:make", "--input", "2x1024xf32", "-o", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    written = {p.name for p in (tmp_path / "out").iterdir()}
    assert {"model.so", "report.json", "model.linalg.mlir", "model.cuvil.mlir",
            "model.scheduled.mlir", "model.llvm.mlir", "model.torch.mlir"} <= written
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    # fp32 matmuls of K = 1024 and 256: a few roundings, far below the bound.
    assert 0 <= report["max_abs_error_vs_eager"] <= 1e-5 and report["within_tolerance"]
    assert f"max |cuvil - eager| = {report['max_abs_error_vs_eager']:.2e}" in proc.stdout


# A model that computes something else when traced than when run eagerly:
# the compiled result is 1.0 off eager's, whatever the numerics.
TRACED_DIFFERENTLY = """
import torch
class TracedDifferently(torch.nn.Module):
    def forward(self, x):
        return x + 1.0 if torch.compiler.is_compiling() else x
def make():
    return TracedDifferently()
"""


@pytest.mark.parametrize("command", ["compile", "profile"])
def test_cli_fails_when_the_error_exceeds_the_tolerance(tmp_path, command):
    factory = tmp_path / "traced_differently.py"
    factory.write_text(TRACED_DIFFERENTLY)
    extra = ["-o", str(tmp_path / "out")] if command == "compile" else \
        ["--runs", "1", "--threads", "1", "--json", str(tmp_path / "profile.json")]
    proc = _cli(command, f"{factory}:make", "--input", "4x8xf32", *extra)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "exceeds the tolerance" in proc.stderr and "Traceback" not in proc.stderr
    report = json.loads((tmp_path / ("out/report.json" if command == "compile" else "profile.json")).read_text())
    assert report["within_tolerance"] is False
    assert report["max_abs_error_vs_eager"] > report["tolerance"] > 0
    # A tolerance that allows the difference passes.
    proc = _cli(command, f"{factory}:make", "--input", "4x8xf32", *extra, "--rtol", "10")
    assert proc.returncode == 0, proc.stderr


def test_cli_rejects_a_bad_input_spec():
    proc = subprocess.run(["cuvil", "compile", "x.py:f", "--input", "2xbanana", "-o", "/tmp/x"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "expected DIMSxDTYPE like 1x128xi64" in proc.stderr


def test_bert_base_seq128():
    """The size the benchmarks use: 12 layers, hidden 768 (about 20 s here)."""
    model = bert()   # BERT-base
    ids = torch.randint(0, model.config.vocab_size, (1, 128))
    fast, _, _ = assert_matches_eager(model, ids, atol=2e-4)
    # A second CompiledModule finds the library through the structural index.
    again = cuvil.compile(model, example_inputs=(ids,))
    assert again.stats["cache_hit"] == 1.0 and "import" not in again.stats


def test_packed_weights_are_shared_until_a_weight_changes():
    # Compiling the same model again in one process (or for another input
    # shape, when main_prepack is the same code) reuses its packed weights.
    torch.manual_seed(0)
    model, x = MLP(SMALL_MLP).eval(), torch.randn(4, 64)
    cuvil.compile(model, example_inputs=(x,))                    # cold: fills the cache
    first = cuvil.compile(model, example_inputs=(x,))            # cache hit
    again = cuvil.compile(model, example_inputs=(x,))            # cache hit, same tensors
    assert again.stats["cache_hit"] == 1.0 and first.last_signature.packed
    assert all(p is q for p, q in zip(first.last_signature.packed, again.last_signature.packed))
    assert first.last_signature.contract.prepack_key
    first(torch.randn(9, 64))                                    # another signature, same packing
    assert all(p is q for p, q in zip(first.last_signature.packed, again.last_signature.packed))
    with torch.no_grad():
        model.layers[0].weight.mul_(2)                           # bumps torch's version counter
    changed = cuvil.compile(model, example_inputs=(x,))
    assert not any(p is q for p, q in zip(changed.last_signature.packed, again.last_signature.packed))
    with torch.no_grad():
        torch.testing.assert_close(changed(x), model(x), atol=ATOL, rtol=RTOL)


def test_calls_see_weights_changed_after_compiling():
    # Like eager: a call uses the weights as they are now, packed (matmul
    # weights) or not (biases), changed in place or given new memory.
    torch.manual_seed(0)
    model, x = MLP(SMALL_MLP).eval(), torch.randn(4, 64)
    fast = cuvil.compile(model, example_inputs=(x,))
    with torch.no_grad():
        torch.testing.assert_close(fast(x), model(x), atol=ATOL, rtol=RTOL)
        model.layers[0].weight.mul_(-2)
        model.layers[2].bias.add_(1)
        torch.testing.assert_close(fast(x), model(x), atol=ATOL, rtol=RTOL)
        model.layers[1].weight.data = torch.randn(128, 256)
        torch.testing.assert_close(fast(x), model(x), atol=ATOL, rtol=RTOL)


@pytest.mark.parametrize("change", ["to_bf16", "half", "new_shape"])
def test_weights_converted_after_compiling_are_refused_by_name(change):
    # model.to(torch.bfloat16) / .half() convert the parameters in place:
    # the library, built for f32 weights, read them as f32 (a segfault in
    # main_prepack). The call now names the weight and says to recompile.
    torch.manual_seed(0)
    model, x = MLP(SMALL_MLP).eval(), torch.randn(4, 64)
    fast = cuvil.compile(model, example_inputs=(x,))
    with torch.no_grad():
        if change == "to_bf16":
            model.to(torch.bfloat16)
        elif change == "half":
            model.half()
        else:
            model.layers[1].weight.data = torch.randn(128, 255)
        with pytest.raises(cuvil.WeightsChangedError, match=r"weight 'layers\.[0-9]\.(weight|bias)'.*compile the model again"):
            fast(x)


def test_repeated_calls_leave_inputs_weights_and_results_unchanged():
    # The entry points' arguments are read-only: CNN's first conv (bias in
    # its init, hoisted into the packed weights) used to accumulate into
    # that packed buffer, so every call drifted further (0, 0.17, 0.34, ...).
    torch.manual_seed(0)
    model, x = CNN().eval(), torch.randn(1, 3, 16, 16)
    x_before, weights_before = x.clone(), {k: v.clone() for k, v in model.state_dict().items()}
    fast = cuvil.compile(model, example_inputs=(x,))
    with torch.no_grad():
        want = model(x)
        for _ in range(3):
            torch.testing.assert_close(fast(x), want, atol=ATOL, rtol=RTOL)
    assert torch.equal(x, x_before)
    assert all(torch.equal(v, weights_before[k]) for k, v in model.state_dict().items())


def test_round_half_to_even_is_the_rounding_instruction_on_vectors():
    """torch.round (half to even) stays llvm.intr.roundeven on vectors
    (vrndscaleps on x86), not math-expand-ops' ~20-op emulation per vector
    (which made PT2E int8 requantize kernels 3-4x slower); ties round to even."""
    class Round(torch.nn.Module):
        def forward(self, x):
            return torch.round(x * 4.0)

    x = torch.tensor([0.125, 0.375, 0.625, -0.125, -0.375, 1.1, -2.6] * 37)
    fast = cuvil.compile(Round(), (x,))
    assert torch.equal(fast(x), Round()(x))
    assert re.search(r"llvm\.intr\.roundeven[^\n]*vector<", fast.stage_ir("llvm"))
