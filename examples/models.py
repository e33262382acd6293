"""The models Cuvil's tests and benchmarks run, in one place: built from
configs with random weights (no model hub).

    cuvil compile examples/models.py:make_mlp --input 64x1024xf32 -o out/

The benchmark workloads (benchmarks/workloads.py) use them at full size, the
tests (test/pytest) at sizes small enough for CI."""
import torch
import torch.nn as nn


class MatMul(nn.Module):
    def forward(self, a, b):
        return a @ b


class MLP(nn.Module):
    """Linear layers with ReLU between them."""

    def __init__(self, sizes=(1024, 4096, 4096, 1024)):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            x = torch.relu(x) if i + 1 < len(self.layers) else x
        return x


# The tests' MLP: input 64 wide, three layers.
SMALL_MLP = (64, 256, 128, 32)


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


class BasicBlock(nn.Module):
    """ResNet basic block; a strided 1x1 downsample where the shape changes."""

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


def randomize_bn(model, seed=1):
    """Batch norms with non-trivial statistics and affine parameters (fresh
    ones are the identity, which hides a wrong folding)."""
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5, generator=g)
            m.running_var.uniform_(0.5, 2.0, generator=g)
            m.weight.data.uniform_(0.5, 1.5, generator=g)
            m.bias.data.uniform_(-0.5, 0.5, generator=g)
    return model


def bert(hidden=768, layers=12, heads=12, intermediate=3072):
    """A BertModel (defaults: BERT-base), seeded random weights."""
    from transformers import BertConfig, BertModel
    torch.manual_seed(0)
    cfg = BertConfig(hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                     intermediate_size=intermediate)
    return BertModel(cfg).eval()


# The tests' transformer sizes (small enough for CI).
SMALL_BERT = dict(hidden=128, layers=2, heads=2, intermediate=256)
SMALL_GPT2 = dict(embd=128, layers=1, heads=4)


def gpt2(embd=768, layers=12, heads=12):
    """A GPT2Model (defaults: GPT-2 small; causal attention), no KV cache."""
    from transformers import GPT2Config, GPT2Model
    torch.manual_seed(0)
    cfg = GPT2Config(n_embd=embd, n_layer=layers, n_head=heads, use_cache=False)
    return GPT2Model(cfg).eval()


class DecoderBlock(nn.Module):
    """A GPT-2-style pre-norm decoder block written with nn.Linear (HF's GPT-2
    uses Conv1D, which PT2E's X86InductorQuantizer leaves in float): causal
    self-attention and a tanh-GELU MLP, each with a residual."""

    def __init__(self, embd=768, heads=12):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(embd), nn.LayerNorm(embd)
        self.qkv, self.proj = nn.Linear(embd, 3 * embd), nn.Linear(embd, embd)
        self.fc, self.out = nn.Linear(embd, 4 * embd), nn.Linear(4 * embd, embd)

    def forward(self, x):
        b, s, e = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(e, dim=2)
        q, k, v = (t.reshape(b, s, self.heads, e // self.heads).transpose(1, 2) for t in (q, k, v))
        a = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, e))
        return x + self.out(nn.functional.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class LastHidden(nn.Module):
    """Transformers models return a ModelOutput; this returns its hidden states."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        return self.model(ids).last_hidden_state


def make_mlp():
    """Factory for the CLI: the benchmark's MLP, seeded."""
    torch.manual_seed(0)
    return MLP().eval()
