"""Nothing a model computes takes the process down: integer division by zero
is reported as an error from the call (eager raises ZeroDivisionError), and
INT_MIN / -1 wraps as eager's floor division does (x86's idiv traps on both)."""
import pytest
import torch

import cuvil


class Divisions(torch.nn.Module):
    def forward(self, a, b):
        return (torch.div(a, b, rounding_mode="floor"), torch.remainder(a, b),
                torch.div(a, b, rounding_mode="trunc"), torch.fmod(a, b))


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_integer_division_matches_eager_without_false_reports(dtype):
    # 37 columns: vector tails whose padding lanes are not divisors.
    g = torch.Generator().manual_seed(0)
    a = torch.randint(-1000, 1000, (5, 37), generator=g, dtype=dtype)
    b = torch.randint(1, 20, (5, 37), generator=g, dtype=dtype) * (1 - 2 * (torch.rand(5, 37, generator=g) > 0.5))
    fast = cuvil.compile(Divisions())
    for got, want in zip(fast(a, b), Divisions()(a, b)):
        assert got.dtype == want.dtype and torch.equal(got, want)


def test_zero_divisor_is_an_error_from_the_call_not_a_crash():
    a = torch.arange(1, 41).reshape(4, 10)
    b = torch.ones(4, 10, dtype=torch.int64)
    fast = cuvil.compile(Divisions())
    fast(a, b)
    b[2, 7] = 0
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        Divisions()(a, b)
    with pytest.raises(cuvil.ExecutionError, match=r"integer division by zero \(eager PyTorch raises "
                                                   r"ZeroDivisionError\); the outputs of this call are discarded"):
        fast(a, b)
    # An ExecutionError is a RuntimeError, as eager's error is; the next call is clean.
    assert issubclass(cuvil.ExecutionError, RuntimeError)
    b[2, 7] = 3
    for got, want in zip(fast(a, b), Divisions()(a, b)):
        assert torch.equal(got, want)


def test_int_min_by_minus_one_wraps_like_eager_floor_division():
    a = torch.full((3, 17), -2 ** 63, dtype=torch.int64)
    b = torch.full((3, 17), -1, dtype=torch.int64)
    floor, rem, trunc, fmod = cuvil.compile(Divisions())(a, b)
    assert torch.equal(floor, torch.div(a, b, rounding_mode="floor"))   # eager: INT_MIN
    assert torch.equal(rem, torch.remainder(a, b)) and torch.equal(fmod, torch.zeros_like(a))
    # eager's trunc division of INT_MIN by -1 dies of SIGFPE; Cuvil's wraps.
    assert torch.equal(trunc, a)


def test_broadcast_divisor_is_checked_too():
    class ByRow(torch.nn.Module):
        def forward(self, a, b):
            return a % b          # b (4,) broadcast over a's rows

    a, b = torch.arange(12).reshape(3, 4), torch.tensor([3, 0, 2, 7])
    fast = cuvil.compile(ByRow())
    with pytest.raises(cuvil.ExecutionError, match="integer division by zero"):
        fast(a, b)
    b[1] = 5
    assert torch.equal(fast(a, b), a % b)
