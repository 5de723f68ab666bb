"""Writes torch_checkpoint.pt, the PyTorch checkpoint that test_serialization.py loads without
torch. Run with a PyTorch interpreter from the repository root:

    python tests/python/data/make_torch_fixture.py

Every value is a simple function of arange, so the test rebuilds the expected values with NumPy
(see expected_torch_fixture in test_serialization.py)."""

from collections import OrderedDict
from pathlib import Path

import torch


def build():
    linear = torch.nn.Linear(3, 2)
    with torch.no_grad():
        linear.weight.copy_(torch.arange(6, dtype=torch.float32).reshape(2, 3) / 4)
        linear.bias.copy_(torch.tensor([-1.5, 2.25]))
    tensors = OrderedDict()
    tensors["bool"] = torch.tensor([True, False, True])
    tensors["uint8"] = torch.arange(250, 256, dtype=torch.uint8)
    tensors["int8"] = torch.arange(-3, 3, dtype=torch.int8)
    tensors["int16"] = torch.arange(-300, 300, 100, dtype=torch.int16)
    tensors["int32"] = torch.arange(5, dtype=torch.int32) * 100000
    tensors["int64"] = torch.tensor([-(2**40), 0, 2**62])
    tensors["float16"] = torch.arange(4, dtype=torch.float16) / 8
    tensors["bfloat16"] = torch.arange(4, dtype=torch.bfloat16) * 0.5
    tensors["float64"] = torch.arange(3, dtype=torch.float64) / 3
    tensors["complex64"] = torch.complex(torch.arange(3.0), -torch.arange(3.0))
    tensors["complex128"] = torch.complex(torch.arange(2.0, dtype=torch.float64),
                                          torch.ones(2, dtype=torch.float64))
    tensors["scalar"] = torch.tensor(7)
    base = torch.arange(12, dtype=torch.float64)
    tensors["shared_base"] = base
    tensors["shared_view"] = base[2:8].view(2, 3)
    tensors["transposed"] = torch.arange(6.0).reshape(2, 3).t()
    tensors["empty"] = torch.zeros(0, 3)
    return {
        "model": linear.state_dict(),
        "tensors": tensors,
        "param": torch.nn.Parameter(torch.ones(2)),
        "epoch": 3,
        "lr": 0.01,
        "betas": (0.9, 0.999),
        "name": "run",
        "flags": [True, None, b"raw"],
        "size": torch.Size([2, 3]),
        "ids": {0: "zero", 1: "one"},
        "tags": {"a"},
    }


if __name__ == "__main__":
    out = Path(__file__).with_name("torch_checkpoint.pt")
    torch.save(build(), out)
    print(f"wrote {out} ({out.stat().st_size} bytes)")
