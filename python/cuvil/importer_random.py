"""Random-number ops (rand, randn, dropout in training, bernoulli, uniform_,
normal, randint, exponential, ...) as a counter-based generator: the random
bits of element i of the k-th random op of a graph are a hash (SplitMix64's
finalizer) of (i, k, seed). The seed is one more int64 input of the compiled
function, drawn from PyTorch's default generator on every call: successive
calls give new numbers, and `torch.manual_seed(s)` before a call makes it
repeat, as in eager (the numbers themselves differ from eager's: its CPU
generator is a sequential Mersenne Twister, which one parallel kernel cannot
reproduce).

torch-mlir keeps a generator state of its own in ml_program globals, which
Cuvil's MLIR does not take; here every seeded op of the exported graph is
replaced, before torch-mlir sees it, by integer and float aten ops traced
from the functions below (plain torch code: they run eagerly too, which is
how the tests check the compiled bits exactly).
"""
from __future__ import annotations

import math
from typing import Callable, Dict, List, Optional

import torch
from torch.fx.experimental.proxy_tensor import make_fx

#: The name of the seed input (the compiled function's last argument).
SEED_INPUT = "cuvil_rng_seed"

_GOLDEN = 0x9E3779B97F4A7C15      # 2^64 / golden ratio: spreads consecutive indices
_STREAM = 0xD1B54A32D192ED03      # separates the random ops of one graph
_MIX1, _MIX2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB   # SplitMix64's finalizer


def _i64(c: int) -> int:
    """An unsigned 64-bit constant as the int64 with its bits (the products wrap)."""
    return c - (1 << 64) if c >= 1 << 63 else c


def _shr(x: torch.Tensor, k: int) -> torch.Tensor:
    """Logical right shift of int64 bits (torch's >> is arithmetic)."""
    return (x >> k) & ((1 << (64 - k)) - 1)


def _mix(x: torch.Tensor) -> torch.Tensor:
    x = x ^ _shr(x, 30)
    x = x * _i64(_MIX1)
    x = x ^ _shr(x, 27)
    x = x * _i64(_MIX2)
    return x ^ _shr(x, 31)


def random_bits(seed: torch.Tensor, stream: int, shape, draw: int = 0) -> torch.Tensor:
    """64 random bits per element of `shape` (int64), the `draw`-th set of
    the graph's `stream`-th random op under `seed` (a rank-0 int64 tensor)."""
    n = math.prod(shape)
    if n == 0:   # torch-mlir's lowering of the reshape of an empty arange divides by zero
        return torch.zeros(shape, dtype=torch.int64)
    index = torch.arange(n, dtype=torch.int64)
    key = seed + _i64(((stream * 2 + draw + 1) * _STREAM) % (1 << 64))
    return _mix(index * _i64(_GOLDEN) + key).reshape(shape)


#: Random bits per uniform: as many as the dtype's significand holds, so that
#: every value is exact and below 1 (24 bits rounded to bfloat16 could be 1.0).
_UNIFORM_BITS = {torch.float64: 53, torch.float32: 24, torch.float16: 11, torch.bfloat16: 8}


def uniform01(seed, stream, shape, dtype, draw: int = 0) -> torch.Tensor:
    """Uniform in [0, 1): the top k random bits times 2^-k, k the dtype's
    significand width (53 / 24 / 11 / 8 bits)."""
    bits = random_bits(seed, stream, shape, draw)
    k = _UNIFORM_BITS[dtype]
    wide = torch.float64 if dtype == torch.float64 else torch.float32
    return (_shr(bits, 64 - k).to(wide) * 2.0 ** -k).to(dtype)


def standard_normal(seed, stream, shape, dtype) -> torch.Tensor:
    """N(0, 1) by Box-Muller on two uniforms (computed in float32 or float64)."""
    wide = torch.float64 if dtype == torch.float64 else torch.float32
    u1 = 1.0 - uniform01(seed, stream, shape, wide, draw=0)    # (0, 1]: log stays finite
    u2 = uniform01(seed, stream, shape, wide, draw=1)
    return (torch.sqrt(-2.0 * torch.log(u1)) * torch.cos((2.0 * math.pi) * u2)).to(dtype)


def _float(dtype):
    return dtype if dtype.is_floating_point else torch.float32


# Each seeded aten op: (seed, stream, node's args' values, out (fake) value) -> torch code.
def _uniform(seed, k, out, low=0.0, high=1.0):
    u = uniform01(seed, k, out.shape, _float(out.dtype))
    return (u * (high - low) + low).to(out.dtype)


def _normal(seed, k, out, mean=0.0, std=1.0):
    return (standard_normal(seed, k, out.shape, _float(out.dtype)) * std + mean).to(out.dtype)


def _randint(seed, k, out, low, high):
    # The top 63 bits modulo the range: the bias is below 2^-40 for any range
    # a tensor can index.
    return (_shr(random_bits(seed, k, out.shape), 1) % (high - low) + low).to(out.dtype)


def _bernoulli(seed, k, out, p):
    return (uniform01(seed, k, out.shape, torch.float64 if out.dtype == torch.float64 else torch.float32)
            < p).to(out.dtype)


def _randperm(seed, k, out, n):
    # The order of n random keys: a uniformly random permutation (keys tie
    # with probability ~n^2 / 2^64).
    return torch.argsort(random_bits(seed, k, (n,))).to(out.dtype)


def _multinomial(seed, k, out, probs, num_samples, replacement):
    weights = probs.to(torch.float64)
    if not replacement:
        # Gumbel top-k: the k largest of log(p) + Gumbel noise are a draw
        # without replacement in proportion to p.
        u = uniform01(seed, k, probs.shape, torch.float64)
        gumbel = -torch.log(-torch.log1p(-u * (1 - 2.0 ** -53)) + 1e-300)
        return torch.topk(torch.log(weights) + gumbel, num_samples, dim=-1).indices.to(out.dtype)
    # Inverse CDF: the number of categories whose cumulative weight is at
    # most u * total (a category of weight 0 is never drawn).
    cdf = torch.cumsum(weights, dim=-1)
    u = uniform01(seed, k, out.shape, torch.float64) * cdf[..., -1:]
    drawn = (u.unsqueeze(-1) >= cdf.unsqueeze(-2)).sum(-1)
    return torch.clamp(drawn, max=probs.shape[-1] - 1).to(out.dtype)


def _native_dropout(seed, k, out, x, p, train):
    if train is not None and not train:   # None: training, as eager's native_dropout
        return x.clone(), torch.ones_like(x, dtype=torch.bool)
    keep = uniform01(seed, k, x.shape, _float(x.dtype)) >= p
    scale = 0.0 if p >= 1 else 1.0 / (1.0 - p)
    return x * keep.to(x.dtype) * scale, keep


def _rrelu(seed, k, out, x, noise, lower, upper, training):
    if not training:
        slope = (lower + upper) / 2
        return torch.where(x >= 0, x, x * slope), noise
    slope = uniform01(seed, k, x.shape, _float(x.dtype)) * (upper - lower) + lower
    negative = x < 0
    return torch.where(negative, x * slope, x), torch.where(negative, slope, torch.ones_like(slope))


def _rrelu_inputs(x, noise, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return x, noise, lower, upper, training


def _no_generator(generator=None, **_):
    if generator is not None:
        raise _GeneratorGiven()


class _GeneratorGiven(Exception):
    """An explicit torch.Generator: its state lives outside the graph."""


def _args(node) -> dict:
    """The node's arguments by their schema names (defaults filled in)."""
    schema = node.target._schema
    values = {}
    for i, arg in enumerate(schema.arguments):
        if i < len(node.args):
            values[arg.name] = node.args[i]
        elif arg.name in node.kwargs:
            values[arg.name] = node.kwargs[arg.name]
        elif arg.has_default_value():
            values[arg.name] = arg.default_value
    _no_generator(values.get("generator"))
    return values


A = torch.ops.aten

# aten op -> f(seed, stream, out, args) building its value; `args` are the
# node's arguments by name, tensors as traced values.
_LOWERINGS: Dict[object, Callable] = {
    A.rand.default: lambda s, k, out, a: _uniform(s, k, out),
    A.rand_like.default: lambda s, k, out, a: _uniform(s, k, out),
    A.uniform.default: lambda s, k, out, a: _uniform(s, k, out, a["from"], a["to"]),
    A.randn.default: lambda s, k, out, a: _normal(s, k, out),
    A.randn_like.default: lambda s, k, out, a: _normal(s, k, out),
    A.normal_functional.default: lambda s, k, out, a: _normal(s, k, out, a["mean"], a["std"]),
    A.normal.Tensor_Tensor: lambda s, k, out, a: _normal(s, k, out, a["mean"], a["std"]),
    A.normal.Tensor_float: lambda s, k, out, a: _normal(s, k, out, a["mean"], a["std"]),
    A.normal.float_Tensor: lambda s, k, out, a: _normal(s, k, out, a["mean"], a["std"]),
    A.normal.float_float: lambda s, k, out, a: _normal(s, k, out, a["mean"], a["std"]),
    A.log_normal.default: lambda s, k, out, a: torch.exp(_normal(s, k, out, a["mean"], a["std"])),
    A.bernoulli.p: lambda s, k, out, a: _bernoulli(s, k, out, a["p"]),
    A.bernoulli.default: lambda s, k, out, a: _bernoulli(s, k, out, a["self"]),
    A.bernoulli.Tensor: lambda s, k, out, a: _bernoulli(s, k, out, a["p"]),
    A.randint.default: lambda s, k, out, a: _randint(s, k, out, 0, a["high"]),
    A.randint.low: lambda s, k, out, a: _randint(s, k, out, a["low"], a["high"]),
    A.randint_like.default: lambda s, k, out, a: _randint(s, k, out, 0, a["high"]),
    A.randint_like.low_dtype: lambda s, k, out, a: _randint(s, k, out, a["low"], a["high"]),
    A.exponential.default: lambda s, k, out, a: (
        -torch.log1p(-uniform01(s, k, out.shape, _float(out.dtype))) / a["lambd"]).to(out.dtype),
    A.geometric.default: lambda s, k, out, a: torch.ceil(
        torch.log1p(-uniform01(s, k, out.shape, torch.float64)) / math.log1p(-a["p"])).to(out.dtype),
    A.cauchy.default: lambda s, k, out, a: (a["median"] + a["sigma"] * torch.tan(
        math.pi * (uniform01(s, k, out.shape, _float(out.dtype)) - 0.5))).to(out.dtype),
    A.randperm.default: lambda s, k, out, a: _randperm(s, k, out, a["n"]),
    A.multinomial.default: lambda s, k, out, a: _multinomial(s, k, out, a["self"], a["num_samples"],
                                                             a["replacement"]),
    A.native_dropout.default: lambda s, k, out, a: _native_dropout(s, k, out, a["input"], a["p"], a["train"]),
    A.rrelu_with_noise_functional.default: lambda s, k, out, a: _rrelu(
        s, k, out, *_rrelu_inputs(a["self"], a["noise"], a["lower"], a["upper"], a["training"])),
}


# The overloads taking an explicit `generator` (None: the default one).
_LOWERINGS.update({
    A.rand.generator: _LOWERINGS[A.rand.default],
    A.randn.generator: _LOWERINGS[A.randn.default],
    A.randint.generator: _LOWERINGS[A.randint.default],
    A.randint.low_generator: _LOWERINGS[A.randint.low],
    A.randperm.generator: _LOWERINGS[A.randperm.default],
})


def seeded_nodes(g) -> List[torch.fx.Node]:
    return [n for n in g.nodes if n.op == "call_function"
            and torch.Tag.nondeterministic_seeded in getattr(n.target, "tags", ())]


def why_not_lowered(node) -> Optional[str]:
    """Why this seeded node stays unsupported, or None when it lowers."""
    if node.target not in _LOWERINGS:
        return "Cuvil's generator has no lowering of this random op; pass the random tensor as an input"
    try:
        args = _args(node)
    except _GeneratorGiven:
        return "an explicit torch.Generator: Cuvil draws from the default generator only"
    for name, value in args.items():
        if isinstance(value, torch.fx.Node) and not isinstance(value.meta.get("val"), torch.Tensor):
            return f"its {name} is a symbolic size: Cuvil's generator needs static sizes and bounds"
    vals = node.meta.get("val")
    for v in vals if isinstance(vals, (tuple, list)) else [vals]:
        if not isinstance(v, torch.Tensor) or not all(isinstance(d, int) for d in v.shape):
            return "a random tensor of dynamic size: Cuvil's generator needs static sizes"
    return None


def lower_random_ops(prog) -> bool:
    """Replaces the exported program's seeded ops by the generator; adds the
    seed input (last user input) when there are any. Returns whether it did.
    Ops it cannot take stay (the importer then names them)."""
    from torch.export.graph_signature import InputKind, InputSpec, TensorArgument

    g = prog.graph
    nodes = [n for n in seeded_nodes(g) if why_not_lowered(n) is None]
    if not nodes:
        return False
    placeholders = [n for n in g.nodes if n.op == "placeholder"]
    with g.inserting_after(placeholders[-1]) if placeholders else g.inserting_before(next(iter(g.nodes))):
        seed = g.placeholder(SEED_INPUT)
    seed_val = torch.empty((), dtype=torch.int64)
    from torch._subclasses.fake_tensor import FakeTensor
    modes = [n.meta["val"].fake_mode for n in g.nodes if isinstance(n.meta.get("val"), FakeTensor)]
    if modes:
        seed_val = modes[0].from_tensor(seed_val)
    seed.meta["val"] = seed_val
    prog.graph_signature.input_specs.append(
        InputSpec(kind=InputKind.USER_INPUT, arg=TensorArgument(name=seed.name), target=None))
    for stream, node in enumerate(nodes):
        _replace(g, node, seed, stream)
    g.lint()
    prog.graph_module.recompile()
    return True


def _replace(g, node, seed, stream: int) -> None:
    """Traces the node's lowering into a subgraph and splices it in."""
    args = _args(node)
    tensor_names = [k for k, v in args.items() if isinstance(v, torch.fx.Node)]
    out = node.meta["val"]
    outs = out if isinstance(out, (tuple, list)) else None
    lowering = _LOWERINGS[node.target]

    def body(seed_value, *tensors):
        values = dict(args, **dict(zip(tensor_names, tensors)))
        result = lowering(seed_value, stream, outs[0] if outs else out, values)
        return tuple(result) if outs else result

    examples = [torch.zeros((), dtype=torch.int64)] + [
        torch.zeros(args[k].meta["val"].shape, dtype=args[k].meta["val"].dtype) for k in tensor_names]
    sub = make_fx(body, tracing_mode="fake")(*examples)
    inputs = [n for n in sub.graph.nodes if n.op == "placeholder"]
    with g.inserting_before(node):
        result = g.graph_copy(sub.graph, dict(zip(inputs, [seed] + [args[k] for k in tensor_names])))
    if outs:
        for user in list(node.users):
            user.replace_all_uses_with(result[user.args[1]])
            g.erase_node(user)
    else:
        node.replace_all_uses_with(result)
    g.erase_node(node)
