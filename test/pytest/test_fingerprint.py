"""The warm-start fingerprint (cuvil.fingerprint): whatever torch.export
bakes into the generated code must change the key, or a second model would
run the first one's library."""
import types

import pytest
import torch
import torch.nn as nn

import cuvil
from cuvil import fingerprint

SIGNATURE = (((4, 8), "torch.float32"),)


class Scaled(nn.Module):
    """A plain attribute and a tensor attribute, both inlined by the export."""

    def __init__(self, k, offset):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.k = k
        self.offset = torch.tensor(offset)

    def forward(self, x):
        return self.proj(x) * self.k + self.offset


def key(model):
    return fingerprint.structural_key(model, SIGNATURE, ("options",))


def test_plain_and_tensor_attributes_change_the_key():
    assert key(Scaled(2, 0.5)) == key(Scaled(2, 0.5))
    assert key(Scaled(2, 0.5)) != key(Scaled(3, 0.5))
    assert key(Scaled(2, 0.5)) != key(Scaled(2, 1.5))


def test_sparse_tensor_attributes_are_keyed_by_contents_and_layout():
    # A sparse CSR attribute had no contiguous form: hashing it raised.
    dense = torch.tensor([[0.0, 2.0], [3.0, 0.0]])
    a, b, c = Scaled(2, 0.5), Scaled(2, 0.5), Scaled(2, 0.5)
    a.offset, b.offset, c.offset = dense.to_sparse_csr(), (2 * dense).to_sparse_csr(), dense
    assert key(a) != key(b)
    assert key(a) != key(c)


def test_a_nested_config_changes_the_key():
    class Config:
        def __init__(self, heads):
            self.heads = heads

        def to_json_string(self):
            return f'{{"heads": {self.heads}}}'

    def wrapped(heads):
        inner = nn.Linear(8, 8)
        inner.config = Config(heads)
        return nn.Sequential(inner)
    assert key(wrapped(12)) != key(wrapped(8))


def test_classes_without_a_source_file_are_keyed_by_their_bytecode():
    def make(body):
        module = types.ModuleType("notebook_cell")   # like __main__ in a notebook: no __file__
        exec("import torch.nn as nn\n"
             "class Net(nn.Module):\n"
             "    def __init__(self):\n"
             "        super().__init__()\n"
             "        self.proj = nn.Linear(8, 8)\n"
             "    def forward(self, x):\n"
             f"        return {body}\n", module.__dict__)
        return module.Net()
    assert key(make("self.proj(x)")) == key(make("self.proj(x)"))
    assert key(make("self.proj(x)")) != key(make("self.proj(x).relu()"))


def test_models_differing_in_an_attribute_do_not_share_a_library():
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    for k in (2, 3):
        model = Scaled(k, 0.5).eval()
        fast = cuvil.compile(model, example_inputs=(x,))
        assert fast.stats["cache_hit"] == 0.0
        with torch.no_grad():
            torch.testing.assert_close(fast(x), model(x), atol=1e-5, rtol=1e-4)


class Activated(nn.Module):
    """Holds the function its forward calls (as `self.act = ACT2FN[...]` does)."""

    def __init__(self, act):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.act = act

    def forward(self, x):
        return self.act(self.proj(x))


def test_functions_a_module_holds_change_the_key():
    import functools
    import torch.nn.functional as F
    assert key(Activated(F.relu)) == key(Activated(F.relu))
    assert key(Activated(F.relu)) != key(Activated(F.gelu))
    assert key(Activated(torch.tanh)) != key(Activated(torch.sigmoid))   # builtins
    assert key(Activated(lambda x: x * 2)) == key(Activated(lambda x: x * 2))
    assert key(Activated(lambda x: x * 2)) != key(Activated(lambda x: x * 3))
    slope = [functools.partial(F.leaky_relu, negative_slope=s) for s in (0.1, 0.2)]
    assert key(Activated(slope[0])) != key(Activated(slope[1]))
    scale = [(lambda x, k=k: x * k) for k in (2, 3)]      # same code, other defaults
    assert key(Activated(scale[0])) != key(Activated(scale[1]))


def test_what_a_local_class_closes_over_changes_the_key():
    def make(k):
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(8, 8)

            def forward(self, x):
                return self.proj(x) * k
        return Net()
    assert key(make(2.0)) == key(make(2.0))
    assert key(make(2.0)) != key(make(3.0))


def test_modules_holding_different_functions_do_not_share_a_library():
    # Before functions were keyed, the second model ran the first one's
    # library: relu's results for tanh, silently.
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    for act in (torch.relu, torch.tanh, lambda t: t * 2.0, lambda t: t - 1.0):
        model = Activated(act).eval()
        fast = cuvil.compile(model, example_inputs=(x,))
        with torch.no_grad():
            torch.testing.assert_close(fast(x), model(x), atol=1e-5, rtol=1e-4)


def test_inputs_cuvil_cannot_take_are_named():
    fast = cuvil.compile(nn.Linear(8, 8).eval())
    with pytest.raises(TypeError, match=r"input 0 has dtype torch.complex64.*\.float\(\)"):
        fast(torch.randn(2, 8, dtype=torch.complex64))


def test_dims_sharing_a_name_must_agree():
    class Add(nn.Module):
        def forward(self, a, b):
            return a + b
    fast = cuvil.compile(Add(), example_inputs=(torch.randn(3, 4), torch.randn(3, 4)),
                         dynamic_dims={0: {0: "n"}, 1: {0: "n"}})
    torch.testing.assert_close(fast(torch.ones(5, 4), torch.ones(5, 4)), torch.full((5, 4), 2.0))
    with pytest.raises(ValueError, match="dynamic dim 'n' is 5 in input 0 dim 0 but 6 in input 1 dim 0"):
        fast(torch.ones(5, 4), torch.ones(6, 4))


def test_graph_modules_with_different_code_differ():
    # Every FX GraphModule (each Dynamo graph) shares torch.fx's class and
    # file; without its code in the key, a second graph of the same inputs
    # loaded the first one's library.
    import torch.fx
    from cuvil.fingerprint import structural_key

    class Twice(torch.nn.Module):
        def forward(self, x):
            return x * 2.0

    class Less(torch.nn.Module):
        def forward(self, x):
            return x - 1.0

    sig = (((4, 8), "torch.float32"),)
    a, b = torch.fx.symbolic_trace(Twice()), torch.fx.symbolic_trace(Less())
    assert structural_key(a, sig, ()) != structural_key(b, sig, ())
    assert structural_key(a, sig, ()) == structural_key(torch.fx.symbolic_trace(Twice()), sig, ())


# Module-level state a forward reads (a constant, a flag, a helper and what
# it reads), through a method it calls by name.
SCALE = 2.0
USE_BIAS_SHIFT = False


def _shift():
    return 1.0 if USE_BIAS_SHIFT else 0.0


class ReadsGlobals(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def _scaled(self, y):
        return y * SCALE + _shift()

    def forward(self, x):
        return self._scaled(self.proj(x))


def test_globals_a_forward_reads_change_the_key(monkeypatch):
    model = ReadsGlobals()
    before = key(model)
    assert key(model) == before
    monkeypatch.setattr(__import__(__name__), "SCALE", 3.0)
    scaled = key(model)
    assert scaled != before
    monkeypatch.setattr(__import__(__name__), "USE_BIAS_SHIFT", True)   # read by the helper
    assert key(model) not in (before, scaled)
    monkeypatch.setattr(__import__(__name__), "_shift", lambda: 0.5)    # another helper
    assert key(model) not in (before, scaled)


def test_a_changed_global_does_not_reuse_the_old_library(monkeypatch):
    # Before globals were keyed, the second compile found the first one's
    # library by its structural key and scaled by 2.0 again, silently.
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    model = ReadsGlobals().eval()
    for scale in (2.0, 5.0):
        monkeypatch.setattr(__import__(__name__), "SCALE", scale)
        fast = cuvil.compile(model, example_inputs=(x,))
        with torch.no_grad():
            torch.testing.assert_close(fast(x), model(x), atol=1e-5, rtol=1e-4)


def test_hugging_face_keys_hold_across_processes():
    """What a Hugging Face model's forward reads from globals (attention
    function tables, flags) is keyed by value, not by identity: another
    process computes the same key, so its warm start still finds the library."""
    import subprocess
    import sys
    code = ("import transformers as T; from cuvil import fingerprint;"
            "m = T.ViTModel(T.ViTConfig(num_hidden_layers=1, hidden_size=32, intermediate_size=64,"
            " num_attention_heads=2, image_size=32, patch_size=8));"
            "print(fingerprint.structural_key(m, [((1, 3, 32, 32), 'torch.float32')], ('o',)))")
    keys = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
            for _ in range(2)}
    assert len(keys) == 1 and len(next(iter(keys))) == 32, keys
