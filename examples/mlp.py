"""A small MLP factory for `cuvil compile examples/mlp.py:make_model --input 64x1024xf32 -o out/`."""
import torch


class MLP(torch.nn.Module):
    def __init__(self, sizes=(1024, 4096, 4096, 1024)):
        super().__init__()
        self.layers = torch.nn.ModuleList(
            torch.nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i + 1 < len(self.layers):
                x = torch.relu(x)
        return x


def make_model():
    torch.manual_seed(0)
    return MLP().eval()
