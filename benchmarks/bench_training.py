"""Whole training steps with nn.Module, a loss and an optimizer, Ember vs PyTorch.

One step is what a training loop runs per batch: forward, cross-entropy, zero_grad, backward,
optimizer step. Both libraries start from the same weights (PyTorch's state_dict loaded into the
Ember module) and see the same batch. Cases (the nn issue's benchmarks):
- MLP 784-256-256-10 (ReLU), Adam, batch 64 and 512;
- small CNN: conv3x3(1->32) relu maxpool2, conv3x3(32->64) relu maxpool2, linear(3136->10),
  Adam, batch 64 of 1x28x28;
- a BERT-base-shaped classifier: 2 TransformerEncoderLayers (d_model 768, 12 heads, feed-forward
  3072, gelu, no dropout), the mean over the tokens, linear(768->10), Adam, batch 8 x 128 tokens
  (its weight gradients are the products of Note [float32 weight gradients through OpenBLAS]);
1 and 2 threads. Goal: no slower than PyTorch (ratio <= 1).

    PYTHONPATH=build/python python benchmarks/bench_training.py
"""

from __future__ import annotations

import numpy as np

import ember
from common import Bench, environment, ratio_chart, torch


def _mlp(nn):
    return nn.Sequential(
        nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)
    )


def _cnn(nn):
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 10),
    )


def _encoder_classifier(nn):
    class EncoderClassifier(nn.Module):
        def __init__(self):
            super().__init__()
            layer = nn.TransformerEncoderLayer(768, 12, 3072, dropout=0.0, activation="gelu",
                                               batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.head = nn.Linear(768, 10)

        def forward(self, x):
            return self.head(self.encoder(x).mean(dim=1))

    return EncoderClassifier()


def _stepper(lib, model, x, y):
    optimizer = lib.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = lib.nn.CrossEntropyLoss()

    def step():
        loss = loss_fn(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    return step


def _cases(build, input_shape, batch, rng):
    """(ember step, torch step or None) for one model and batch size."""
    x = rng.standard_normal((batch, *input_shape)).astype(np.float32)
    y = rng.integers(0, 10, size=batch).astype(np.int64)
    if torch is not None:
        torch.manual_seed(0)
        tmodel = build(torch.nn)
        state = {k: v.detach().numpy().copy() for k, v in tmodel.state_dict().items()}
        tstep = _stepper(torch, tmodel, torch.from_numpy(x), torch.from_numpy(y))
    else:
        tstep, state = None, None
    emodel = build(ember.nn)
    if state is not None:
        emodel.load_state_dict({k: ember.from_numpy(v) for k, v in state.items()})
    estep = _stepper(ember, emodel, ember.from_numpy(x), ember.from_numpy(y))
    return estep, tstep


def run(threads=(1, 2), repeat=11):
    rng = np.random.default_rng(0)
    cases = [
        ("MLP 784-256-256-10 step (b=64)", _cases(_mlp, (784,), 64, rng)),
        ("MLP 784-256-256-10 step (b=512)", _cases(_mlp, (784,), 512, rng)),
        ("CNN 2x conv3x3 step (b=64)", _cases(_cnn, (1, 28, 28), 64, rng)),
        ("BERT-base 2-layer classifier step (8x128)",
         _cases(_encoder_classifier, (128, 768), 8, rng)),
    ]
    results = []
    for n in threads:
        bench = Bench(threads=n, repeat=repeat, target_s=0.2)
        for name, (estep, tstep) in cases:
            bench.compare(name, estep, tstep)
        results += bench.results
    return results


def main():
    import pathlib

    print(environment())
    results = run()
    ratio_chart(results, pathlib.Path(__file__).resolve().parent.parent / "docs" / "images"
                / "training.png", goal=1.0)


if __name__ == "__main__":
    main()
