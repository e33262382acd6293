"""The short call path of static signatures (cuvil.static_call): after the
first call, calls with the same kind of tensors skip the generic path's
numpy views and per-call descriptors; anything else falls back to it, and
both give eager's results."""
import threading

import pytest
import torch

import cuvil
from cuvil import execution


class _Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(24, 40)
        self.b = torch.nn.Linear(40, 8)

    def forward(self, x, y):
        h = torch.relu(self.a(x))
        return self.b(h) + y, h.sum(dim=1)


def _inputs(rows=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(rows, 24, generator=g), torch.randn(rows, 8, generator=g)


def _no_generic_path(monkeypatch):
    """Makes the generic path fail loudly: a call that still runs it is seen."""
    def refuse(*args, **kwargs):
        raise AssertionError("the generic call path ran")
    monkeypatch.setattr(cuvil.compiler, "signature_key", refuse)


def test_second_call_takes_the_short_path_with_eager_results(monkeypatch):
    model = _Net().eval()
    fast = cuvil.compile(model)
    x, y = _inputs()
    first = fast(x, y)
    assert fast.last_signature.static_call   # made at the first call
    _no_generic_path(monkeypatch)
    x2, y2 = _inputs(seed=1)                  # other values, the same kind of tensors
    got = fast(x2, y2)
    with torch.no_grad():
        want = model(x2, y2)
    assert isinstance(got, tuple) and len(got) == 2
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5)
    assert not torch.equal(first[0], got[0])
    # Fresh outputs on every call: a result the caller keeps is not overwritten.
    again = fast(x, y)
    torch.testing.assert_close(again[0], first[0], rtol=0, atol=0)
    assert again[0].data_ptr() != first[0].data_ptr()


@pytest.mark.parametrize("kind", ["transposed", "offset", "parameter", "other_shape", "other_dtype"])
def test_other_tensors_take_the_generic_path(kind):
    model = _Net().eval()
    fast = cuvil.compile(model)
    x, y = _inputs()
    fast(x, y)
    if kind == "transposed":        # not contiguous
        x = torch.randn(24, 5).t()
    elif kind == "offset":          # contiguous, but 4 bytes past an aligned address
        x = torch.randn(5 * 24 + 1)[1:].view(5, 24)
        assert x.data_ptr() % execution.ALIGNMENT
    elif kind == "parameter":       # a tensor subclass
        x = torch.nn.Parameter(x, requires_grad=False)
    elif kind == "other_shape":     # compiles again, and that signature gets its own short path
        x, y = _inputs(rows=3)
    else:
        x = x.double()
    with torch.no_grad():
        want = model(x.float(), y)
    for g, w in zip(fast(x, y) if kind != "other_dtype" else fast(x.float(), y), want):
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5)
    if kind == "other_shape":
        assert fast.num_signatures == 2
        assert fast._static.specs[0][1] == torch.Size([3, 24])


def test_weights_changed_in_place_are_used_on_the_short_path(monkeypatch):
    model = _Net().eval()
    fast = cuvil.compile(model)
    x, y = _inputs()
    fast(x, y)
    _no_generic_path(monkeypatch)
    with torch.no_grad():
        model.a.weight.mul_(-2.0)
        want = model(x, y)
    got = fast(x, y)
    torch.testing.assert_close(got[0], want[0], rtol=1e-5, atol=1e-5)


class _Mutating(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(3))

    def forward(self, x):
        self.count.add_(1.0)
        return x * self.count


class _Bytes(torch.nn.Module):
    def forward(self, x):
        return (x * 10).to(torch.uint8)


@pytest.mark.parametrize("model,make", [(_Mutating, lambda: torch.randn(3)), (_Bytes, lambda: torch.rand(4, 4))],
                         ids=["mutates_a_buffer", "uint8_output"])
def test_signatures_the_short_path_cannot_take_keep_the_generic_one(model, make):
    eager, compiled = model().eval(), model().eval()
    fast = cuvil.compile(compiled)
    x = make()
    for _ in range(3):
        with torch.no_grad():
            want = eager(x)
        got = fast(x)
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want)
    assert fast.last_signature.static_call is False


def test_calls_from_two_threads_at_once_give_each_its_own_results():
    model = _Net().eval()
    fast = cuvil.compile(model)
    fast(*_inputs())
    errors = []

    def worker(seed):
        try:
            for i in range(40):
                x, y = _inputs(seed=seed * 100 + i)
                with torch.no_grad():
                    want = model(x, y)
                got = fast(x, y)
                torch.testing.assert_close(got[0], want[0], rtol=1e-5, atol=1e-5)
        except Exception as err:  # noqa: BLE001 - reported to the main thread
            errors.append(err)
    threads = [threading.Thread(target=worker, args=(s,)) for s in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
