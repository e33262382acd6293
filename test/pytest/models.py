"""Small models with random weights for the compile tests (no model hub)."""
import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, sizes=(64, 256, 128, 32)):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            x = torch.relu(x) if i + 1 < len(self.layers) else x
        return x


class CNN(nn.Module):
    """conv, batch norm, relu, pooling, linear."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.bn = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, stride=2)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = nn.functional.max_pool2d(torch.relu(self.bn(self.conv1(x))), 2)
        x = torch.relu(self.conv2(x))
        return self.fc(nn.functional.adaptive_avg_pool2d(x, 1).flatten(1))


class TupleDictOutputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 16)

    def forward(self, x, y):
        h = self.proj(x)
        return {"hidden": h, "pair": (y * 2.0, h.sum())}


class UsesErfinv(nn.Module):
    def forward(self, x):
        return torch.erfinv(torch.tanh(x))


def bert(hidden=128, layers=2, heads=2, intermediate=256):
    from transformers import BertConfig, BertModel
    torch.manual_seed(0)
    cfg = BertConfig(hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                     intermediate_size=intermediate)
    return BertModel(cfg).eval()


def gpt2_block(embd=128, layers=1, heads=4):
    """A GPT-2-style decoder (causal attention), no KV cache."""
    from transformers import GPT2Config, GPT2Model
    torch.manual_seed(0)
    cfg = GPT2Config(n_embd=embd, n_layer=layers, n_head=heads, use_cache=False)
    return GPT2Model(cfg).eval()
