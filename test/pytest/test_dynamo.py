"""torch.compile(backend="cuvil") through the torch_dynamo_backends entry
point: numerics vs eager, graph breaks, eager fallback on unsupported ops."""
import warnings

import pytest
import torch

from models import CNN, SMALL_BERT, bert


class GraphBreakWithUnsupportedOp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(8, 8), torch.nn.Linear(8, 8)

    def forward(self, x):
        y = torch.relu(self.a(x))
        torch._dynamo.graph_break()
        return self.b(torch.special.gammainc(y + 1.0, torch.tanh(y) + 1.5))   # igamma: not compiled by Cuvil


@pytest.fixture(autouse=True)
def _reset_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _run(model, *inputs, **compile_kwargs):
    fast = torch.compile(model, backend="cuvil", **compile_kwargs)
    with torch.no_grad(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got, want = fast(*inputs), model(*inputs)
    cuvil_warnings = [str(w.message) for w in caught if "cuvil:" in str(w.message)]
    return got, want, cuvil_warnings


def test_backend_is_registered_without_import(tmp_path):
    # In a fresh process (this one imported cuvil while collecting the
    # tests), outside the source tree (whose cuvil.egg-info also registers it).
    import subprocess
    import sys
    script = ("import sys\n"
              "from torch._dynamo import list_backends\n"
              "assert 'cuvil' in list_backends(), list_backends()\n"
              "assert 'cuvil' not in sys.modules, 'listing the backends imported cuvil'\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_cnn_matches_eager():
    torch.manual_seed(0)
    got, want, warned = _run(CNN().eval(), torch.randn(2, 3, 32, 32))
    assert warned == []
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-4)


def test_bert_matches_eager():
    model = bert(**SMALL_BERT)
    ids = torch.randint(0, model.config.vocab_size, (1, 32))
    got, want, warned = _run(model, ids)
    assert warned == []
    torch.testing.assert_close(got.last_hidden_state, want.last_hidden_state, atol=1e-4, rtol=1e-4)


def test_graph_break_and_unsupported_op_fall_back_with_one_warning():
    torch.manual_seed(0)
    got, want, warned = _run(GraphBreakWithUnsupportedOp().eval(), torch.randn(4, 8))
    torch.testing.assert_close(got, want)
    assert len(warned) == 1 and "aten.igamma" in warned[0]


def test_strict_option_raises():
    import cuvil
    model = GraphBreakWithUnsupportedOp().eval()
    with pytest.raises(cuvil.UnsupportedOpError, match="igamma"):
        _run(model, torch.randn(4, 8), options={"strict": True})


@pytest.mark.parametrize("mode", ["default", "reduce-overhead", "max-autotune"])
def test_torch_compile_modes_are_accepted(mode):
    torch.manual_seed(0)
    got, want, warned = _run(CNN().eval(), torch.randn(1, 3, 16, 16), mode=mode)
    assert warned == []
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-4)


def test_unknown_mode_is_rejected():
    from cuvil.dynamo import cuvil_backend
    with pytest.raises(ValueError, match="unknown torch.compile mode 'fastest'"):
        cuvil_backend(_traced(torch.nn.GELU(), torch.randn(2)), None, mode="fastest")


def test_unknown_option_is_rejected():
    with pytest.raises(Exception, match="unknown cuvil backend option"):
        _run(CNN().eval(), torch.randn(1, 3, 16, 16), options={"tile": 3})


def _traced(model, *example_inputs):
    """An FX graph of `model` with the input metadata Dynamo records, for
    calling the backend directly."""
    gm = torch.fx.symbolic_trace(model)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for node, value in zip(placeholders, example_inputs):
        node.meta["val"] = value
    return gm


def _warnings_of(fn, *args):
    with torch.no_grad(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args)
    return result, [str(w.message) for w in caught if "cuvil:" in str(w.message)]


def test_bf16_models_compile_through_the_backend():
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 8).eval().to(torch.bfloat16)
    x = torch.randn(4, 8, dtype=torch.bfloat16)
    got, _, warned = _run(model, x)
    assert not warned
    # Not eager compared with itself: the product in float, rounded to bf16
    # (bf16 matmuls accumulate in f32; a few bf16 roundings off).
    want = torch.nn.functional.linear(x.float(), model.weight.float(), model.bias.float())
    assert got.dtype == torch.bfloat16
    torch.testing.assert_close(got.float(), want, rtol=0.016, atol=0.016)


class _Double(torch.nn.Module):
    def forward(self, x):
        return x * 2


def test_inputs_cuvil_cannot_take_run_eagerly_with_a_warning():
    x = torch.randn(4, 8, dtype=torch.complex64)
    got, _, warned = _run(_Double(), x)
    assert len(warned) == 1 and "complex64" in warned[0]
    assert torch.equal(got, x * 2)


def test_strict_raises_on_inputs_cuvil_cannot_take():
    from cuvil.dynamo import cuvil_backend
    model = torch.nn.Linear(8, 8).eval()
    run = cuvil_backend(_traced(model, torch.randn(4, 8)), None, options={"strict": True})
    with pytest.raises(TypeError, match="complex64"):
        run(torch.randn(4, 8, dtype=torch.complex64))


def test_inputs_on_another_device_run_eagerly_with_a_warning():
    from cuvil.dynamo import cuvil_backend
    model = torch.nn.GELU()   # no CPU weights: eager can run it on "meta"
    run = cuvil_backend(_traced(model, torch.randn(4, 8)), None)
    got, warned = _warnings_of(run, torch.randn(4, 8, device="meta"))
    assert got.device.type == "meta" and got.shape == (4, 8)   # what eager gives there
    assert len(warned) == 1 and "is on meta" in warned[0], warned


class ScaledBy(torch.nn.Module):
    def forward(self, x, n):
        return x * n


def test_a_graph_cuvil_cannot_build_runs_eagerly_with_a_warning():
    # An int graph input that is no tensor's size: the backend cannot take
    # the graph (a CuvilError while building), so Dynamo's graph runs as is.
    from cuvil.dynamo import cuvil_backend
    gm = _traced(ScaledBy(), torch.randn(3), 5)
    run, warned = _warnings_of(lambda: cuvil_backend(gm, None))
    assert run is gm
    assert len(warned) == 1 and "is not the size of a tensor dim" in warned[0], warned
    with pytest.raises(Exception, match="is not the size of a tensor dim"):
        cuvil_backend(gm, None, options={"strict": True})


def test_past_max_recompiles_only_new_signatures_run_eagerly():
    # One graph called with several shapes (Dynamo does that for graphs it
    # did not specialise); the backend is called directly on an FX graph.
    from cuvil.dynamo import cuvil_backend
    torch.manual_seed(0)
    model = CNN().eval()
    run = cuvil_backend(_traced(model, torch.randn(1, 3, 16, 16)), None, options={"max_recompiles": 1})
    with torch.no_grad(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for batch in (1, 2, 1, 2):
            x = torch.randn(batch, 3, 16, 16)
            torch.testing.assert_close(run(x), model(x), atol=1e-5, rtol=1e-4)
    warned = [str(w.message) for w in caught if "cuvil:" in str(w.message)]
    assert len(warned) == 1 and "more than 1 input signatures" in warned[0], warned
