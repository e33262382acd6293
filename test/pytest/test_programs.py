"""Programs beyond one straight-line graph: torch.cond compiles (both branches
and a select), torch.while_loop (an scf.while), and what cannot compile says why, naming the op and the model
line (a random op Cuvil's generator lacks, complex tensors) or what to do instead (data-dependent
control flow: the Dynamo backend)."""
import pytest
import torch

import cuvil


class Cond(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(8, 8))

    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda x: torch.relu(x @ self.w), lambda x: x - 1.0, (x,))


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["true-branch", "false-branch"])
def test_cond_takes_the_branch_eager_takes(sign):
    torch.manual_seed(0)
    model = Cond().eval()
    fast = cuvil.compile(model)
    x = sign * torch.rand(4, 8)
    torch.testing.assert_close(fast(x), model(x), rtol=1e-5, atol=1e-5)


class Newton(torch.nn.Module):
    """sqrt(a) by Newton's steps until every element has converged: a
    torch.while_loop whose trip count depends on the data, closing over the
    input (torch.export lifts it into the loop's additional inputs)."""

    def forward(self, a):
        from torch._higher_order_ops.while_loop import while_loop

        def more(i, x):
            return ((x * x - a).abs() > 1e-4 * a).any() & (i < 100)

        def step(i, x):
            return i + 1, 0.5 * (x + a / x)
        steps, root = while_loop(more, step, (torch.zeros((), dtype=torch.int64), a.clone()))
        return steps, root


class Counted(torch.nn.Module):
    """A loop whose first check folds (i = 0 < 3) and a lifted constant as
    the program's smallest tensor: torch-mlir made such a loop a for loop of
    2^63 - 1 steps (it never ended) unless the check reads a runtime value."""

    def forward(self, x):
        from torch._higher_order_ops.while_loop import while_loop
        step_size = torch.tensor([2.0])

        def more(i, acc):
            return i < 3

        def step(i, acc):
            return i + 1, acc + step_size
        return while_loop(more, step, (torch.zeros((), dtype=torch.int64), x))


def test_a_counted_while_loop_ends_after_its_count():
    x = torch.randn(4)
    (steps, total), (want_steps, want_total) = cuvil.compile(Counted())(x), Counted()(x)
    assert int(steps) == int(want_steps) == 3
    torch.testing.assert_close(total, want_total)


def test_while_loop_bodies_get_the_importers_rewrites():
    """A body comparing a constant float tensor with an int (torch-mlir's
    folder gets `full_like(x, 5.7) < 0` wrong unless the int is written as
    a float) and flattening an empty tensor (a SIGFPE in its view lowering
    unless the empty result is written as a new one)."""
    from torch._higher_order_ops.while_loop import while_loop

    class Loop(torch.nn.Module):
        def forward(self, x, empty):
            def more(i, acc, e):
                return i < 3

            def step(i, acc, e):
                negative = (torch.full_like(acc, 5.7) < 0).to(acc.dtype)
                return i + 1, acc + negative + 1.0, e.flatten(1).reshape(e.shape) + 1.0
            return while_loop(more, step, (torch.zeros((), dtype=torch.int64), x, empty))
    args = (torch.randn(4), torch.randn(0, 2, 3))
    got, want = cuvil.compile(Loop())(*args), Loop()(*args)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        torch.testing.assert_close(g, w)


@pytest.mark.parametrize("through", ["compile", "dynamo"])
def test_while_loop_runs_as_many_steps_as_eager(through):
    import warnings
    fast = cuvil.compile(Newton()) if through == "compile" else torch.compile(Newton(), backend="cuvil")
    for scale in (1.0, 1e6):   # more steps for the larger values: the same compiled loop
        a = scale * (torch.rand(64) + 0.1)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)   # the Dynamo backend's eager fallback warns
            steps, root = fast(a)
        want_steps, want_root = Newton()(a)
        assert int(steps) == int(want_steps) > 0
        torch.testing.assert_close(root, want_root, rtol=1e-5, atol=1e-5)


class Noisy(torch.nn.Module):
    def forward(self, x):   # Poisson: a random op Cuvil's generator does not lower
        return torch.poisson(x.abs())


class Spectrum(torch.nn.Module):
    def forward(self, x):   # a product of two complex tensors: no real-pair form (cuvil.importer_complex)
        spectrum = torch.fft.rfft(x)
        return (spectrum * spectrum).abs()


@pytest.mark.parametrize("model, op", [(Noisy(), "aten.poisson"), (Spectrum(), "aten.mul")],
                         ids=["random", "complex"])
def test_what_cannot_lower_is_named_with_its_line(model, op):
    with pytest.raises(cuvil.UnsupportedOpError, match=rf"{op} at test_programs\.py:\d+") as info:
        cuvil.compile(model)(torch.randn(4, 8))
    assert info.value.op == op


class DataDependent(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2.0
        return x - 1.0


def test_data_dependent_control_flow_points_to_the_dynamo_backend():
    x = torch.rand(4, 8)
    with pytest.raises(cuvil.CompileError, match=r'torch\.compile\(model, backend="cuvil"\)'):
        cuvil.compile(DataDependent())(x)
    fast = torch.compile(DataDependent(), backend="cuvil")
    for sign in (1.0, -1.0):
        torch.testing.assert_close(fast(sign * x), DataDependent()(sign * x))


class Lstsq(torch.nn.Module):
    def forward(self, a, b):
        return torch.linalg.lstsq(a, b).solution


class Equal(torch.nn.Module):
    def forward(self, a, b):
        return torch.equal(a, b)


@pytest.mark.parametrize("model, op", [(Lstsq(), "aten.linalg_lstsq"), (Equal(), "aten.equal")])
def test_ops_export_cannot_trace_are_named_with_their_line(model, op):
    # torch.export's fake tensors stop at them (a data-dependent output
    # shape, a data-dependent Python bool): named as any op Cuvil refuses,
    # at the model's line, with the backend that breaks the graph there.
    with pytest.raises(cuvil.UnsupportedOpError, match=rf"{op} at test_programs\.py:\d+") as info:
        cuvil.compile(model)(torch.randn(4, 3), torch.randn(4, 3))
    assert info.value.op == op and 'torch.compile(model, backend="cuvil")' in str(info.value)
    line = int(info.value.location.split(":")[1].split()[0])
    assert "torch." in open(__file__).read().splitlines()[line - 1]


def test_causal_lm_with_its_default_cache_returns_and_takes_what_eager_does():
    # Hugging Face causal LMs return a DynamicCache by default (use_cache=True):
    # it is flattened for export and rebuilt by the call, layer by layer.
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    model = transformers.LlamaForCausalLM(config).eval()
    ids = torch.randint(0, 128, (1, 8))
    got, want = cuvil.compile(model)(ids), model(ids)
    assert type(got) is type(want) and type(got.past_key_values) is type(want.past_key_values)
    torch.testing.assert_close(got.logits, want.logits, rtol=1e-4, atol=1e-4)
    assert len(got.past_key_values.layers) == len(want.past_key_values.layers) == 2
    for g, w in zip(got.past_key_values.layers, want.past_key_values.layers):
        torch.testing.assert_close(g.keys, w.keys, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(g.values, w.values, rtol=1e-4, atol=1e-4)
    # The model is as it was: export overrode forward on the instance only.
    assert "forward" not in vars(model)
    # The next step takes the cache back (a keyword input): compiled once more,
    # for that input structure, by the same compiled module.
    fast = cuvil.compile(model)
    cache = fast(ids).past_key_values
    step = want.logits[:, -1:].argmax(-1)
    got, want = fast(step, past_key_values=cache), model(step, past_key_values=want.past_key_values)
    torch.testing.assert_close(got.logits, want.logits, rtol=1e-4, atol=1e-4)
    assert got.past_key_values.layers[0].keys.shape == (1, 2, 9, 16)
    for g, w in zip(got.past_key_values.layers, want.past_key_values.layers):
        torch.testing.assert_close(g.keys, w.keys, rtol=1e-4, atol=1e-4)
    assert fast.num_signatures == 1 and len(fast._structured) == 1


class KeywordInputs(torch.nn.Module):
    def forward(self, x, pair, scale=None):
        a, b = pair
        return (x @ a + b) * (1.0 if scale is None else scale)


def test_keyword_and_nested_inputs_are_flattened():
    torch.manual_seed(0)
    x, a, b, s = torch.randn(3, 4), torch.randn(4, 5), torch.randn(5), torch.randn(3, 5)
    fast = cuvil.compile(KeywordInputs())
    torch.testing.assert_close(fast(x, (a, b), scale=s), KeywordInputs()(x, (a, b), scale=s))
    torch.testing.assert_close(fast(x, pair=(a, b)), KeywordInputs()(x, pair=(a, b)))
    assert len(fast._structured) == 2   # two input structures, two builds
    with pytest.raises(TypeError, match="called with a str among its inputs"):
        fast(x, (a, "b"))
    with pytest.raises(TypeError, match="input 'pair' is a tuple holding numbers"):
        fast(x, pair=(a, 2.0))


def test_logcumsumexp_of_large_values_does_not_overflow():
    # torch-mlir's log(cumsum(exp(x))) is inf past x = 88 in float32.
    class LogCumSumExp(torch.nn.Module):
        def forward(self, x):
            return torch.logcumsumexp(x, dim=1)

    x = torch.randn(3, 50) * 5
    x[1, 10] = 300.0
    torch.testing.assert_close(cuvil.compile(LogCumSumExp())(x), LogCumSumExp()(x), rtol=1e-5, atol=1e-5)


class WeightedBags(torch.nn.Module):
    def forward(self, w, idx, offsets, weights):
        return torch.nn.functional.embedding_bag(idx, w, offsets, mode="sum", per_sample_weights=weights)


def test_what_torch_mlir_gets_wrong_is_refused_by_name():
    # torch-mlir's embedding_bag ignores per_sample_weights: Cuvil's own
    # decomposition weighs float32 bags; float64 ones reach torch-mlir's
    # lowering and are refused, not wrong.
    args = (torch.randn(10, 5), torch.tensor([5, 1, 6, 5]), torch.tensor([0, 3]), torch.randn(4))
    torch.testing.assert_close(cuvil.compile(WeightedBags())(*args), WeightedBags()(*args))
    wide = (args[0].double(), args[1], args[2], args[3].double())
    with pytest.raises(cuvil.UnsupportedOpError, match="per_sample_weights") as info:
        cuvil.compile(WeightedBags())(*wide)
    assert "embedding_bag" in info.value.op


class EmptyBatchFlatten(torch.nn.Module):
    def forward(self, x):
        return x.flatten(1) * 2


def test_a_torch_mlir_crash_is_an_error_not_the_end_of_the_process(monkeypatch):
    # torch-mlir's view lowering divides by zero on an empty tensor (SIGFPE).
    # The importer writes empty results as new empty tensors first; without that, its
    # passes run in a forked child and the crash is a CompileError.
    from cuvil import importer
    monkeypatch.setattr(importer, "_empty_results_as_empty_tensors", lambda g: None)
    with pytest.raises(cuvil.CompileError, match=r"torch-mlir crashed \(SIGFPE\).*aten\.") as info:
        cuvil.compile(EmptyBatchFlatten())(torch.randn(0, 1, 5, 5))
    assert "torch-mlir-opt" in info.value.reproducer


class MaxPoolWithIndices(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.max_pool1d(x, kernel_size=3, stride=2, ceil_mode=True, return_indices=True)


def test_a_reduction_the_schedules_cannot_split_runs_on_the_scalar_path():
    x = torch.randn(2, 3, 11)
    got, want = cuvil.compile(MaxPoolWithIndices())(x), MaxPoolWithIndices()(x)
    torch.testing.assert_close(got[0], want[0])
    assert torch.equal(got[1], want[1])


class NonzeroRows(torch.nn.Module):
    def forward(self, x):
        return torch.argwhere(x > 0) * 2


def test_data_dependent_output_size_points_to_the_dynamo_backend():
    # argwhere's row count depends on the values: the library cannot size it.
    x = torch.tensor([[1.0, -1.0, 2.0], [0.0, 3.0, -2.0]])
    with pytest.raises(cuvil.UnsupportedOpError, match=r'(?s)aten\.nonzero.*depends on the input\'s values.*'
                                                        r'torch\.compile\(model, backend="cuvil"\)'):
        cuvil.compile(NonzeroRows())(x)
    assert torch.equal(torch.compile(NonzeroRows(), backend="cuvil")(x), NonzeroRows()(x))
