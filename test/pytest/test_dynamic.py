"""One dynamic-batch build serves several batch sizes (cuvil.compile and
torch.compile), matching eager; other dims stay checked."""
import warnings

import pytest
import torch

import cuvil

from models import CNN, MLP, SMALL_BERT, SMALL_MLP, bert


def test_mlp_dynamic_batch_one_build():
    torch.manual_seed(0)
    model = MLP(SMALL_MLP).eval()
    fast = cuvil.compile(model, example_inputs=(torch.randn(1, 64),), dynamic_dims={0: 0})
    for batch in (1, 3, 8):
        x = torch.randn(batch, 64)
        torch.testing.assert_close(fast(x), model(x), atol=1e-5, rtol=1e-4)
    assert fast.num_signatures == 1


def test_cnn_dynamic_batch():
    torch.manual_seed(0)
    model = CNN().eval()
    fast = cuvil.compile(model, example_inputs=(torch.randn(2, 3, 16, 16),), dynamic_dims={0: [0]})
    for batch in (1, 3, 8):
        x = torch.randn(batch, 3, 16, 16)
        with torch.no_grad():
            torch.testing.assert_close(fast(x), model(x), atol=1e-5, rtol=1e-4)
    assert fast.num_signatures == 1


def test_bert_dynamic_batch():
    model = bert(**SMALL_BERT)
    fast = cuvil.compile(model, example_inputs=(torch.randint(0, 1000, (2, 16)),), dynamic_dims={0: 0})
    for batch in (1, 3, 8):
        ids = torch.randint(0, model.config.vocab_size, (batch, 16))
        with torch.no_grad():
            want = model(ids).last_hidden_state
        torch.testing.assert_close(fast(ids)["last_hidden_state"], want, atol=1e-4, rtol=1e-4)
    assert fast.num_signatures == 1


def test_bert_dynamic_batch_bf16():
    """precision="bf16" with a dynamic batch: attention's products (batch x
    heads: dynamic) are narrowed and packed (AMX tiles take them); the
    dot-product schedule takes static products only, so there they run as
    loops."""
    model = bert(**SMALL_BERT)
    fast = cuvil.compile(model, example_inputs=(torch.randint(0, 1000, (2, 16)),), dynamic_dims={0: 0},
                         precision="bf16")
    for batch in (1, 3):
        ids = torch.randint(0, model.config.vocab_size, (batch, 16))
        with torch.no_grad():
            want = model(ids).last_hidden_state
        got = fast(ids)["last_hidden_state"]
        rel = float((got - want).abs().max() / want.abs().max())
        assert 1e-5 < rel <= 0.03, rel


def test_non_dynamic_dim_mismatch_is_a_clear_error():
    fast = cuvil.compile(MLP(SMALL_MLP).eval(), example_inputs=(torch.randn(4, 64),), dynamic_dims={0: 0})
    with pytest.raises(ValueError, match="input 0 dim 1 is 65 but the model was compiled for 64"):
        fast(torch.randn(4, 65))
    with pytest.raises(TypeError, match="dtype torch.float64, compiled for torch.float32"):
        fast(torch.randn(4, 64, dtype=torch.float64))


def test_dynamic_dims_out_of_range():
    with pytest.raises(ValueError, match="input 0 has rank 2, no dim 5"):
        cuvil.compile(MLP(SMALL_MLP).eval(), example_inputs=(torch.randn(4, 64),), dynamic_dims={0: 5})


@pytest.mark.parametrize("mode", ["dynamic=True", "mark_dynamic"])
def test_torch_compile_dynamic_batch(mode):
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = MLP(SMALL_MLP).eval()
    fast = torch.compile(model, backend="cuvil", dynamic=(mode == "dynamic=True"))
    with warnings.catch_warnings(record=True) as caught, torch.no_grad():
        warnings.simplefilter("always")
        for batch in (2, 3, 8):
            x = torch.randn(batch, 64)
            if mode == "mark_dynamic":
                torch._dynamo.mark_dynamic(x, 0)
            torch.testing.assert_close(fast(x), model(x), atol=1e-5, rtol=1e-4)
    assert not [w for w in caught if "cuvil:" in str(w.message)]
    torch._dynamo.reset()
