"""Results come back as eager returns them: uint8 tensors as uint8 (MLIR's
i8 is signless), Python numbers (sizes, numel) as Python numbers, rank-0
results as rank-0 tensors; uint8 inputs keep their unsigned meaning."""
import pytest
import torch

import cuvil


class ToUInt8(torch.nn.Module):
    def forward(self, x):
        return (x * 25.0).to(torch.uint8)


class UInt8Ops(torch.nn.Module):
    def forward(self, a, b):
        # Unsigned meaning: widening above 127, wrap-around arithmetic, equality, data movement.
        return a.to(torch.float32) + 1.0, a.to(torch.int32) // 7, a + b, a * b, a == b, torch.cat([a, b])


class Sizes(torch.nn.Module):
    def forward(self, x):
        return x.sum(dim=1), x.numel(), x.shape[0], x.dim()


class AllPositive(torch.nn.Module):
    def forward(self, x):
        return torch.all(x > 0)


def _same(got, want):
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, torch.Tensor):
        assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape)
        torch.testing.assert_close(got, want)
    elif isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    else:
        assert got == want


def test_uint8_results_are_uint8():
    x = torch.linspace(0, 10, 40).reshape(4, 10)   # up to 250: above int8's range
    _same(cuvil.compile(ToUInt8())(x), ToUInt8()(x))


def test_uint8_inputs_are_unsigned():
    g = torch.Generator().manual_seed(0)
    a = torch.randint(0, 256, (5, 9), generator=g, dtype=torch.uint8)
    b = torch.randint(0, 256, (5, 9), generator=g, dtype=torch.uint8)
    _same(cuvil.compile(UInt8Ops())(a, b), UInt8Ops()(a, b))


class UInt8Unsigned(torch.nn.Module):
    """Ops torch-mlir computes as signed int8 on uint8 (comparisons, max,
    division, sorting) or crashes on (arithmetic with a Python number)."""

    def forward(self, a, b):
        return (a > 200, a < b, torch.maximum(a, b), a.amax(1), a.max(1), a.argmin(1),
                torch.floor_divide(a, b.clamp(min=1)), torch.remainder(a, 7), a * 3, a // 16,
                a >> 2, torch.sort(a, 1).values, a.to(torch.int8) + a, a.sum(1), a.float() / 255)


def test_uint8_ops_torch_mlir_computes_signed_take_widened_operands():
    # torch-mlir compares (and divides, reduces) uint8 as signed int8: they
    # were refused; their uint8 operands are now widened to int32 and their
    # results keep eager's dtypes (values above 127 on purpose).
    g = torch.Generator().manual_seed(0)
    a = torch.randint(0, 256, (4, 9), generator=g, dtype=torch.uint8)
    b = torch.randint(0, 256, (4, 9), generator=g, dtype=torch.uint8)
    _same(cuvil.compile(UInt8Unsigned())(a, b), UInt8Unsigned()(a, b))


def test_python_number_results_are_python_numbers():
    x = torch.randn(3, 7)
    _same(cuvil.compile(Sizes())(x), Sizes()(x))


def test_symbolic_sizes_follow_the_input():
    fast = cuvil.compile(Sizes(), example_inputs=(torch.randn(3, 7),), dynamic_dims={0: 0})
    for rows in (2, 5):
        x = torch.randn(rows, 7)
        _same(fast(x), Sizes()(x))


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_rank0_bool_result(sign):
    x = sign * torch.rand(4, 4) + sign * 0.1
    _same(cuvil.compile(AllPositive())(x), AllPositive()(x))


class Scale(torch.nn.Module):
    def forward(self, x, alpha, relu):
        y = x * alpha
        return y.relu() if relu else y


def test_python_number_inputs_are_constants_of_a_build():
    x = torch.randn(3, 4)
    fast = cuvil.compile(Scale())
    for alpha, relu in [(2.0, True), (2.0, False), (-3, True), (2.0, True)]:
        _same(fast(x, alpha, relu), Scale()(x, alpha, relu))
    assert fast.num_signatures == 3   # one build per distinct value


def test_a_number_input_cannot_be_dynamic():
    with pytest.raises(ValueError, match="input 1 is a float, not a tensor"):
        cuvil.compile(Scale(), example_inputs=(torch.randn(3, 4), 2.0, True), dynamic_dims={1: 0})
