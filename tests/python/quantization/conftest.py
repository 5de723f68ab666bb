"""Shared fixtures of the quantization tests: scikit-learn's digits, split and scaled, and a
small full-batch trainer, so each workflow's accuracy test trains the same way."""

import pytest

import ember
import ember.nn as nn


class Digits:
    def __init__(self):
        datasets = pytest.importorskip("sklearn.datasets")
        data = datasets.load_digits()
        self.x = ember.tensor(data.data / 16.0, dtype=ember.float32)  # (1797, 64)
        self.y = ember.tensor(data.target)
        self.train = slice(0, 1400)
        self.test = slice(1400, None)

    def images(self):
        return self.x.reshape(-1, 1, 8, 8)

    def fit(self, model, inputs, steps=150, lr=1e-2):
        """Full-batch Adam on the training split; returns the model in eval mode."""
        ember.manual_seed(0)
        opt = ember.optim.Adam(model.parameters(), lr=lr)
        model.train()
        for _ in range(steps):
            opt.zero_grad()
            nn.functional.cross_entropy(model(inputs[self.train]), self.y[self.train]).backward()
            opt.step()
        return model.eval()

    def accuracy(self, model, inputs):
        with ember.no_grad():
            return (model(inputs[self.test]).argmax(1) == self.y[self.test]).float().mean().item()


@pytest.fixture(scope="session")
def digits():
    return Digits()
