"""The benchmark workloads: models built from configs with random weights
(no model hub), with their inputs and FLOP counts."""
import torch
import torch.nn as nn
from torch.utils.flop_counter import FlopCounterMode


class MatMul(nn.Module):
    def forward(self, a, b):
        return a @ b


class MLP(nn.Module):
    def __init__(self, sizes=(1024, 4096, 4096, 1024)):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            x = torch.relu(x) if i + 1 < len(self.layers) else x
        return x


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (self.down(x) if self.down is not None else x))


class ResNet18(nn.Module):
    """ResNet-18 shape (torchvision's layout), random weights."""

    def __init__(self, classes=1000):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64),
                                  nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            blocks += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
            cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


def _bert_base():
    from transformers import BertConfig, BertModel
    return BertModel(BertConfig()).eval()


def _gpt2_small():
    from transformers import GPT2Config, GPT2Model
    return GPT2Model(GPT2Config(use_cache=False)).eval()


class LastHidden(nn.Module):
    """Transformers models return ModelOutput; benchmark the hidden states."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        return self.model(ids).last_hidden_state


def _model_and_inputs(name: str):
    torch.manual_seed(0)
    if name == "matmul":
        return MatMul(), (torch.randn(1024, 1024), torch.randn(1024, 1024))
    if name == "mlp":
        return MLP().eval(), (torch.randn(64, 1024),)
    if name == "resnet18":
        return ResNet18().eval(), (torch.randn(1, 3, 224, 224),)
    if name == "bert-base":
        return LastHidden(_bert_base()), (torch.randint(0, 30522, (1, 128)),)
    if name == "gpt2-small":
        return LastHidden(_gpt2_small()), (torch.randint(0, 50257, (1, 128)),)
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
