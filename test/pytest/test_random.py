"""Random-number ops (cuvil.importer_random): each compiles, keeps eager's
shape and dtype, draws from its distribution, draws anew on every call and
repeats after torch.manual_seed; the compiled bits are exactly those of the
generator's own torch code (run eagerly with the same seed)."""
import math

import pytest
import torch
import torch.nn.functional as F

import cuvil
from cuvil import importer_random


class Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


X = torch.randn(256, 512)   # 131072 draws: sample means within ~4 sigma below

# name -> (fn, (mean, std) of the result's distribution or None, check(result, x))
CASES = {
    "rand": (lambda x: torch.rand(256, 512), (0.5, math.sqrt(1 / 12)), None),
    "rand_like-f64": (lambda x: torch.rand_like(x, dtype=torch.float64), (0.5, math.sqrt(1 / 12)), None),
    "randn": (lambda x: torch.randn(256, 512), (0.0, 1.0), None),
    "randn_like": (lambda x: torch.randn_like(x), (0.0, 1.0), None),
    "uniform_": (lambda x: x.clone().uniform_(-2, 3), (0.5, 5 / math.sqrt(12)),
                 lambda r, x: bool((r >= -2).all() and (r < 3).all())),
    "normal_": (lambda x: x.clone().normal_(1.0, 2.0), (1.0, 2.0), None),
    "normal-tensor": (lambda x: torch.normal(torch.full_like(x, 3.0), torch.full_like(x, 0.5)), (3.0, 0.5), None),
    "log_normal_": (lambda x: x.clone().log_normal_(0.0, 0.5),
                    (math.exp(0.125), math.sqrt((math.exp(0.25) - 1) * math.exp(0.25))), None),
    "exponential_": (lambda x: x.clone().exponential_(2.0), (0.5, 0.5), lambda r, x: bool((r >= 0).all())),
    "geometric_": (lambda x: x.clone().geometric_(0.25), (4.0, math.sqrt(0.75) / 0.25),
                   lambda r, x: bool((r >= 1).all() and (r == r.round()).all())),
    "bernoulli": (lambda x: torch.bernoulli(torch.full_like(x, 0.3)), (0.3, math.sqrt(0.21)), None),
    "bernoulli_p": (lambda x: torch.bernoulli(x, 0.7), (0.7, math.sqrt(0.21)), None),
    "randint": (lambda x: torch.randint(3, 10, (256, 512)), (6.0, math.sqrt((49 - 1) / 12)),
                lambda r, x: set(r.unique().tolist()) == set(range(3, 10))),
    "randint_like": (lambda x: torch.randint_like(x, 5), (2.0, math.sqrt(2.0)), None),
    "dropout": (lambda x: F.dropout(torch.ones_like(x), 0.25, training=True), (1.0, math.sqrt(1 / 3)),
                lambda r, x: set(r.unique().tolist()) == {0.0, torch.tensor(4 / 3).item()}),
    "cauchy_": (lambda x: x.clone().cauchy_(0.0, 1.0), None,
                lambda r, x: abs(r.median().item()) < 0.02 and abs((r.abs() < 1).double().mean().item() - 0.5) < 0.01),
    "randperm": (lambda x: torch.randperm(1000), None, lambda r, x: torch.equal(r.sort().values, torch.arange(1000))),
}


@pytest.mark.parametrize("name", CASES)
def test_random_op_draws_from_its_distribution(name):
    fn, moments, check = CASES[name]
    fast = cuvil.compile(Fn(fn))
    torch.manual_seed(7)
    first = fast(X)
    second = fast(X)
    torch.manual_seed(7)
    again = fast(X)
    want = fn(X)
    assert first.shape == want.shape and first.dtype == want.dtype
    assert torch.equal(first, again), "torch.manual_seed does not make the call repeat"
    assert not torch.equal(first, second), "two calls drew the same numbers"
    if moments is not None:
        mean, std = moments
        n = first.numel()
        assert abs(first.double().mean().item() - mean) < 5 * std / math.sqrt(n), first.double().mean()
        assert abs(first.double().std().item() - std) < 0.02 * std, first.double().std()
    if check is not None:
        assert check(first, X)


def test_compiled_bits_are_the_generator_code_run_eagerly():
    fast = cuvil.compile(Fn(lambda x: (torch.rand(300, 7), torch.randn(5, 3), torch.randint(-4, 9, (77,)))))
    torch.manual_seed(3)
    seed = torch.empty((), dtype=torch.int64).random_()   # what the call draws first
    torch.manual_seed(3)
    uniform, normal, ints = fast(X)
    torch.testing.assert_close(uniform, importer_random.uniform01(seed, 0, (300, 7), torch.float32), rtol=0, atol=0)
    torch.testing.assert_close(normal, importer_random.standard_normal(seed, 1, (5, 3), torch.float32),
                               rtol=2e-6, atol=2e-6)   # log / cos: Cuvil's polynomials vs libm
    want = importer_random._shr(importer_random.random_bits(seed, 2, (77,)), 1) % 13 - 4
    assert torch.equal(ints, want)


def test_random_ops_of_one_graph_are_independent():
    fast = cuvil.compile(Fn(lambda x: torch.stack([torch.rand(100000), torch.rand(100000)])))
    a, b = fast(X)
    assert abs(torch.corrcoef(torch.stack([a, b]))[0, 1].item()) < 0.02


def test_dropout_in_a_model_trains_and_evaluates_as_eager():
    model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.Dropout(0.5))
    torch.manual_seed(0)
    train = cuvil.compile(Fn(lambda x: F.dropout(model[0](x), 0.5, training=True)))
    out = train(X)
    dense = model[0](X)
    kept = out != 0
    assert 0.48 < kept.double().mean().item() < 0.52
    torch.testing.assert_close(out[kept], 2 * dense[kept], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(cuvil.compile(model.eval())(X), model(X), rtol=1e-5, atol=1e-5)


def test_random_ops_under_the_dynamo_backend():
    fn = torch.compile(lambda x: x + F.dropout(torch.rand_like(x), 0.5, training=True), backend="cuvil")
    torch.manual_seed(1)
    a = fn(X)
    torch.manual_seed(1)
    assert torch.equal(fn(X), a)
    assert not torch.equal(fn(X), a)
    noise = a - X
    assert ((noise == 0) | ((noise > 0) & (noise < 2))).all()


def test_multinomial_with_and_without_replacement():
    probs = torch.tensor([[0.1, 0.0, 0.5, 0.4], [1.0, 1.0, 1.0, 1.0]])
    torch.manual_seed(0)
    drawn = cuvil.compile(Fn(lambda p: torch.multinomial(p, 20000, replacement=True)))(probs)
    assert drawn.dtype == torch.int64 and drawn.shape == (2, 20000)
    freq = torch.stack([torch.bincount(r, minlength=4) for r in drawn]).double() / 20000
    torch.testing.assert_close(freq, probs.double() / probs.double().sum(-1, keepdim=True), rtol=0, atol=0.015)
    once = cuvil.compile(Fn(lambda p: torch.multinomial(p, 3)))
    for _ in range(20):
        row = once(probs)[0]
        assert sorted(row.tolist()) == [0, 2, 3]   # without replacement: never the weight-0 category


def test_a_random_op_it_cannot_lower_is_named():
    with pytest.raises(cuvil.UnsupportedOpError, match=r"(?s)aten\.poisson .*random numbers: Cuvil's generator"):
        cuvil.compile(Fn(lambda x: torch.poisson(x.abs())))(X)


def test_random_tensor_of_dynamic_size_is_refused_clearly():
    fast = cuvil.compile(Fn(lambda x: x + torch.rand_like(x)), dynamic_dims={0: 0})
    with pytest.raises(cuvil.UnsupportedOpError, match="dynamic size"):
        fast(X)


@pytest.mark.parametrize("fn", [lambda x: F.rrelu(x, training=True), torch.rand_like,
                                lambda x: torch.randperm(0), lambda x: torch.multinomial(torch.ones(0, 3), 2)],
                         ids=["rrelu", "rand_like", "randperm", "multinomial"])
def test_random_ops_on_empty_tensors(fn):
    x = torch.randn(0, 3)
    got = cuvil.compile(Fn(fn))(x)
    want = fn(x)
    assert got.shape == want.shape and got.dtype == want.dtype


class NoInputs(torch.nn.Module):
    def forward(self):   # the seed is the compiled function's only input
        return (torch.randint(low=1, high=1000, size=[512, 256]).float().mean(),
                torch.ops.aten.randn([64, 1024], generator=None, dtype=torch.float64).std())


def test_a_module_without_inputs_draws_through_the_generator_overloads():
    fast = cuvil.compile(NoInputs())
    mean, std = fast()
    assert abs(mean.item() - 500) < 5 * 288 / math.sqrt(512 * 256) and std.dtype == torch.float64
    assert abs(std.item() - 1) < 0.02
    assert fast()[0] != mean


class UniformInPlace(torch.nn.Module):
    def forward(self, x):
        return torch.ops.aten.uniform_(x, 1.0, 10.0).mean()


def test_in_place_random_fill_of_an_input_writes_it_back():
    x = torch.zeros(300, 400, dtype=torch.float64)
    mean = cuvil.compile(UniformInPlace())(x)
    assert x.min() >= 1 and x.max() < 10 and abs(x.mean().item() - 5.5) < 0.05
    assert mean.item() == pytest.approx(x.mean().item())


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_precision_uniforms_stay_below_one(dtype):
    # 24 random bits rounded to bfloat16 gave 1.0 once per 512 draws (exponential_: inf).
    fast = cuvil.compile(Fn(lambda x: (torch.rand(20000, dtype=dtype), torch.empty(20000, dtype=dtype).exponential_())))
    uniform, exponential = fast(X)
    assert uniform.dtype == dtype and float(uniform.max()) < 1 and float(uniform.min()) >= 0
    assert torch.isfinite(exponential).all()


def test_random_bounds_of_symbolic_sizes_are_refused_clearly():
    fast = cuvil.compile(Fn(lambda x: torch.randint(0, x.size(0), (8,)) + x.sum()), dynamic_dims={0: 0})
    with pytest.raises(cuvil.UnsupportedOpError, match="symbolic size"):
        fast(torch.randn(5))
