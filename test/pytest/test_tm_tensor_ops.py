"""Ops torch-mlir lowers to its tm_tensor dialect (scatter / index_put, sort /
topk, cumsum / cumprod scans) compile through Cuvil's own lowering
(cuvil-lower-tm-tensor) and match eager, values, indices and dtypes alike."""
import pytest
import torch

import cuvil
from conftest import Lambda


def _check(model, *args, exact=False):
    fast = cuvil.compile(model)
    got, want = fast(*args), model(*args)
    got = got if isinstance(got, (tuple, list)) else (got,)
    want = want if isinstance(want, (tuple, list)) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        if exact or not w.is_floating_point():
            assert torch.equal(g, w)
        else:
            torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5)
    return fast


def _index_put(x, idx, v):
    y = x.clone()
    y[idx] = v
    return y


def _index_put_accumulate(x, idx, v):
    return x.index_put((idx,), v, accumulate=True)


SCATTERS = {
    "index_put": (_index_put, lambda: (torch.randn(6, 8), torch.tensor([0, 4, -1]), torch.randn(3, 8))),
    # Repeated indices add up.
    "index_put-accumulate": (_index_put_accumulate,
                             lambda: (torch.randn(6, 8), torch.tensor([1, 3, 1, 1]), torch.randn(4, 8))),
    "scatter_add": (lambda x, i, s: x.scatter_add(1, i, s),
                    lambda: (torch.randn(4, 6), torch.randint(0, 6, (4, 9)), torch.randn(4, 9))),
    "scatter_reduce-amax": (lambda x, i, s: x.scatter_reduce(0, i, s, reduce="amax", include_self=False),
                            lambda: (torch.randn(5, 3), torch.randint(0, 5, (7, 3)), torch.randn(7, 3))),
    "index_add": (lambda x, i, s: x.index_add(0, i, s),
                  lambda: (torch.randn(5, 4), torch.tensor([4, 0, 4]), torch.randn(3, 4))),
    "index_copy": (lambda x, i, s: x.index_copy(1, i, s),
                   lambda: (torch.randn(3, 6), torch.tensor([5, 1]), torch.randn(3, 2))),
}


@pytest.mark.parametrize("name", SCATTERS)
def test_scatters_match_eager(name):
    fn, make = SCATTERS[name]
    torch.manual_seed(0)
    _check(Lambda(fn), *make())


def test_masked_scatter_matches_eager():
    torch.manual_seed(0)
    x, mask, src = torch.randn(4, 5), torch.rand(4, 5) > 0.5, torch.randn(20)
    _check(Lambda(lambda x, m, s: x.masked_scatter(m, s)), x, mask, src)


def test_integer_scatter_keeps_its_dtype():
    x = torch.zeros(8, dtype=torch.int32)
    _check(Lambda(_index_put_accumulate), x, torch.tensor([2, 2, 7]), torch.tensor([5, -1, 3], dtype=torch.int32))


class StaticKVCache(torch.nn.Module):
    """A decode step writing one position of a preallocated cache in place
    (Hugging Face's StaticCache does this with index_copy_ / index_put_)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("keys", torch.zeros(1, 2, 16, 4))

    def forward(self, k, pos):
        self.keys.index_copy_(2, pos, k)
        return self.keys.sum(dim=-1)


def test_kv_cache_update_in_place_matches_eager_step_after_step():
    torch.manual_seed(0)
    eager, compiled = StaticKVCache(), StaticKVCache()
    fast = cuvil.compile(compiled)
    for step in range(3):
        k = torch.randn(1, 2, 1, 4)
        pos = torch.tensor([step])
        torch.testing.assert_close(fast(k, pos), eager(k, pos))
    torch.testing.assert_close(compiled.keys, eager.keys)


def test_index_out_of_range_is_an_error_from_the_call():
    fast = cuvil.compile(Lambda(_index_put))
    x, v = torch.randn(6, 8), torch.randn(2, 8)
    fast(x, torch.tensor([0, 5]), v)
    with pytest.raises(IndexError):
        _index_put(x, torch.tensor([0, 6]), v)
    with pytest.raises(cuvil.ExecutionError, match="index is out of range in a gather / scatter"):
        fast(x, torch.tensor([0, 6]), v)


SORTS = {
    "sort": lambda x: torch.sort(x, dim=-1),
    "sort-descending-dim0": lambda x: torch.sort(x, dim=0, descending=True),
    "argsort": lambda x: torch.argsort(x, dim=1),
    "topk": lambda x: torch.topk(x, 3, dim=-1),
    "topk-smallest": lambda x: torch.topk(x, 2, dim=0, largest=False),
    "kthvalue": lambda x: torch.kthvalue(x, 2, dim=1),
    "msort": lambda x: torch.msort(x),
}


@pytest.mark.parametrize("name", SORTS)
def test_sorts_match_eager(name):
    torch.manual_seed(0)
    _check(Lambda(SORTS[name]), torch.randn(5, 37))


def test_bools_sort_false_first_as_eager():
    x = torch.tensor([[True, False, True, False, False], [False, True, True, False, True]])
    _check(Lambda(lambda x: torch.sort(x, dim=1)), x)
    _check(Lambda(lambda x: torch.argsort(x, dim=1, descending=True)), x)


def test_nan_sorts_above_every_number_as_eager():
    # torch-mlir's comparators are ordered (false for NaN): the merge sort
    # left NaNs and the numbers after them unsorted, silently.
    nan, inf = float("nan"), float("inf")
    x = torch.tensor([[3.0, nan, 1.0, -2.0, nan, 0.5, inf, -inf, 1.0],
                      [nan, 0.0, -0.5, 2.0, 7.0, nan, nan, 1.0, -inf]])
    # topk's order of ties (here NaNs) is eager's heap artifact: its
    # indices are compared by the values they pick.
    picks = lambda top: (top.values, x.gather(1, top.indices))   # noqa: E731
    model = Lambda(lambda x: (torch.sort(x, dim=1), torch.sort(x, dim=1, descending=True),
                              torch.topk(x, 3, dim=1), torch.topk(x, 3, dim=1, largest=False),
                              torch.kthvalue(x, 2, dim=1)))
    got, want = cuvil.compile(model)(x), model(x)
    got = [*got[:2], picks(got[2]), picks(got[3]), got[4]]
    want = [*want[:2], picks(want[2]), picks(want[3]), want[4]]
    for g, w in zip(torch.utils._pytree.tree_leaves(got), torch.utils._pytree.tree_leaves(want)):
        assert g.dtype == w.dtype and torch.equal(g.nan_to_num(99.0), w.nan_to_num(99.0)), (g, w)


def test_sort_is_stable_on_ties_as_eager():
    x = torch.tensor([[3, 1, 2, 1, 3, 0, 1], [5, 5, 5, 5, 4, 4, 4]])
    _check(Lambda(lambda x: torch.sort(x, dim=1, stable=True)), x)
    _check(Lambda(lambda x: torch.sort(x, dim=1, descending=True, stable=True)), x)


SCANS = {
    "cumsum": lambda x: torch.cumsum(x, dim=1),
    "cumsum-dim0": lambda x: torch.cumsum(x, dim=0),
    "cumprod": lambda x: torch.cumprod(x, dim=1),
    # With a dtype (masked.cumprod's form): the input converted, then the scan.
    "cumprod-dtype": lambda x: torch.cumprod((x * 4).long(), dim=0, dtype=torch.float32),
    "cumprod-own-dtype": lambda x: torch.cumprod(x, dim=1, dtype=torch.float32),
    "cumsum-dtype": lambda x: torch.cumsum((x * 4).long(), dim=1, dtype=torch.float32),
}


@pytest.mark.parametrize("name", SCANS)
def test_scans_match_eager(name):
    torch.manual_seed(0)
    _check(Lambda(SCANS[name]), torch.rand(4, 300) + 0.5)


def test_long_integer_cumsum_is_exact():
    # A 4096-long int64 scan (position ids from a mask): exact, and linear in
    # memory (the O(n^2) masked-sum decomposition it replaces would build a
    # 4096 x 4096 matrix per row).
    mask = (torch.rand(2, 4096) > 0.3).long()
    _check(Lambda(lambda m: torch.cumsum(m, dim=-1) - 1), mask)


class SortAndScatter(torch.nn.Module):
    def forward(self, x, i, v):
        return torch.sort(x, dim=-1).values, x.index_put((i,), v, accumulate=True)


def test_dynamic_batch_sort_and_scatter():
    fast = cuvil.compile(SortAndScatter(), dynamic_dims={0: 0})
    for rows in (3, 9):
        x, i, v = torch.randn(rows, 6), torch.tensor([0, 2]), torch.randn(2, 6)
        for g, w in zip(fast(x, i, v), SortAndScatter()(x, i, v)):
            torch.testing.assert_close(g, w)


@pytest.mark.parametrize("length", [1, 2, 5, 64, 1000])
def test_merge_sort_lengths(length):
    # Runs of every width, the last one short; duplicates (ints) keep their order.
    torch.manual_seed(length)
    x = torch.randint(0, max(2, length // 3), (3, length))
    _check(Lambda(lambda x: torch.sort(x, dim=-1, stable=True)), x)


def test_topk_over_a_vocabulary():
    # Sampling's top-k over a 32k vocabulary: a sort of each row, then a slice.
    torch.manual_seed(0)
    _check(Lambda(lambda logits: torch.topk(logits, 50, dim=-1)), torch.randn(2, 32000))


def test_bool_accumulation_saturates_as_eager():
    # torch-mlir adds i1 values (true + true = false); eager's bool sums are ors.
    x = torch.tensor([False, True, False, False])
    i = torch.tensor([0, 0, 2, 1])
    v = torch.tensor([True, True, False, True])
    _check(Lambda(_index_put_accumulate), x, i, v)
    _check(Lambda(lambda x, i, v: x.index_add(0, i, v)), x, i, v)
