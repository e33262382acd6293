"""The benchmark workloads: the models of examples/models.py (the ones the
tests run, here at full size; random weights, no model hub), with their
inputs and FLOP counts."""
import sys
from pathlib import Path

import torch
from torch.utils.flop_counter import FlopCounterMode

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from models import MLP, LastHidden, MatMul, ResNet18, bert, gpt2  # noqa: E402


def _model_and_inputs(name: str):
    torch.manual_seed(0)
    if name == "matmul":
        return MatMul(), (torch.randn(1024, 1024), torch.randn(1024, 1024))
    if name == "mlp":
        return MLP().eval(), (torch.randn(64, 1024),)
    if name == "resnet18":
        return ResNet18().eval(), (torch.randn(1, 3, 224, 224),)
    if name == "bert-base":
        return LastHidden(bert()).eval(), (torch.randint(0, 30522, (1, 128)),)
    if name == "gpt2-small":
        return LastHidden(gpt2()).eval(), (torch.randint(0, 50257, (1, 128)),)
    raise ValueError(f"unknown workload {name!r}")


def count_flops(model, inputs) -> int:
    """The model's matmul and convolution FLOPs as PyTorch counts them
    (torch.utils.flop_counter; direct-convolution FLOPs, so a Winograd
    convolution's GFLOP/s is an effective rate). Elementwise ops and CPU
    scaled_dot_product_attention are not counted (< 3% of BERT/GPT-2)."""
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(*inputs)
    return counter.get_total_flops()


def build(name: str):
    """(model, inputs, flops) for a workload name."""
    model, inputs = _model_and_inputs(name)
    return model, inputs, count_flops(model, inputs)


WORKLOADS = ("matmul", "mlp", "resnet18", "bert-base", "gpt2-small")
