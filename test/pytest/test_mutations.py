"""In-place updates of a model's inputs and buffers reach the caller's tensors,
as in eager: the compiled function returns the new values (torch.export lists
them first) and the call copies them back."""
import copy

import pytest
import torch

import cuvil


class AddInPlace(torch.nn.Module):
    def forward(self, x, y):
        x.add_(y)
        return x


class MutateThenCompute(torch.nn.Module):
    def forward(self, x, y):
        x.mul_(2.0)
        y[:, 0] = 0.0          # a slice copy
        return x + y, y.sum(dim=1)


class FillAndZero(torch.nn.Module):
    def forward(self, a, b):
        a.fill_(3.0)
        b.zero_()
        return a * 2


class OutVariant(torch.nn.Module):
    def forward(self, x, y, out):
        torch.add(x, y, out=out)
        return out.relu()


class Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros(()))
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        self.calls.add_(1.0)
        return self.lin(x) * self.calls


def _inputs(*shapes, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*s, generator=g) for s in shapes]


@pytest.mark.parametrize("model_cls, shapes", [
    (AddInPlace, [(4, 5), (4, 5)]),
    (MutateThenCompute, [(3, 7), (3, 7)]),
    (FillAndZero, [(2, 9), (2, 9)]),
    (OutVariant, [(5, 6), (5, 6), (5, 6)]),
], ids=lambda v: v.__name__ if isinstance(v, type) else None)
def test_mutated_inputs_are_updated_like_eager(model_cls, shapes):
    eager_args = _inputs(*shapes)
    fast_args = [a.clone() for a in eager_args]
    want = model_cls()(*eager_args)
    got = cuvil.compile(model_cls())(*fast_args)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    for mutated, expected in zip(fast_args, eager_args):
        torch.testing.assert_close(mutated, expected, rtol=1e-5, atol=1e-6)


def test_a_second_call_sees_the_first_calls_updates():
    x, y = _inputs((4, 5), (4, 5))
    fast = cuvil.compile(AddInPlace())
    x_eager = x.clone()
    for _ in range(3):
        AddInPlace()(x_eager, y)
        fast(x, y)
    torch.testing.assert_close(x, x_eager)


def test_mutated_buffer_is_updated_and_used_by_the_next_call():
    torch.manual_seed(0)
    eager = Counter().eval()
    model = copy.deepcopy(eager)
    fast = cuvil.compile(model)
    (x,) = _inputs((3, 8))
    for _ in range(3):
        torch.testing.assert_close(fast(x), eager(x), rtol=1e-5, atol=1e-5)
    assert model.calls.item() == eager.calls.item() == 3.0


def test_torch_compile_backend_updates_inputs_too():
    x, y = _inputs((4, 5), (4, 5))
    x_eager = x.clone()
    want = AddInPlace()(x_eager, y) * 1.0
    fast = torch.compile(AddInPlace(), backend="cuvil", options={"strict": True})
    got = fast(x, y)
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(x, x_eager)
