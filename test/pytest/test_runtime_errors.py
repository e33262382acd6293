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


class Gathers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(10, 4)

    def forward(self, ids, x, rows):
        return self.embed(ids), x[rows], torch.index_select(x, 0, rows)


def _gather_inputs():
    g = torch.Generator().manual_seed(0)
    return torch.randint(0, 10, (2, 7), generator=g), torch.randn(6, 5, generator=g), torch.tensor([0, -1, 5, 2])


def test_gathers_in_range_match_eager():
    model = Gathers().eval()
    ids, x, rows = _gather_inputs()
    fast = cuvil.compile(model)
    with torch.no_grad():
        for got, want in zip(fast(ids, x, rows.clamp(min=0)), model(ids, x, rows.clamp(min=0))):
            assert torch.equal(got, want)
        # x[rows] takes negative rows (wrapped); index_select does not.
        assert torch.equal(cuvil.compile(Rows())(x, rows), x[rows])


class Rows(torch.nn.Module):
    def forward(self, x, rows):
        return x[rows]


@pytest.mark.parametrize("which", ["embedding", "indexing"])
def test_an_index_out_of_range_is_an_index_error_not_a_wild_read(which):
    model = Gathers().eval()
    ids, x, rows = _gather_inputs()
    rows = rows.clamp(min=0)
    fast = cuvil.compile(model)
    fast(ids, x, rows)
    if which == "embedding":
        ids[1, 3] = 10 ** 9        # far outside the table: unguarded, a segfault
    else:
        rows[2] = 6
    with pytest.raises(IndexError):
        model(ids, x, rows)
    with pytest.raises(cuvil.ExecutionIndexError, match="an index is out of range"):
        fast(ids, x, rows)
    with pytest.raises(IndexError):   # an IndexError and a RuntimeError, as eager's are
        fast(ids, x, rows)
