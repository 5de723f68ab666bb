"""nn layers: training steps of a convolution stack and of a linear layer, Ember vs PyTorch.

Cases (functional API, so only the layers' ops are timed):
- conv forward / forward + backward: x (64, 1, 28, 28) -> conv3x3(1->32) -> conv3x3(32->64),
  padding 1, float32, then sum().backward() (the brief's target: no slower than PyTorch);
- conv block step: the same with relu and max_pool2d between the convolutions;
- linear step: y = linear(x (512, 784), W (256, 784), b) -> relu -> sum().backward().
1 and 2 threads; the two libraries alternate in one process (see common.py).

    PYTHONPATH=build/python python benchmarks/bench_nn.py
"""

from __future__ import annotations

import numpy as np

import ember
import ember.nn.functional as EF
from common import Bench, environment, torch


def _params(lib, rng, shapes):
    out = []
    for shape, scale in shapes:
        a = (rng.standard_normal(shape) * scale).astype(np.float32)
        out.append(lib.tensor(a, requires_grad=True))
    return out


def _relu(t):
    # Tensor.relu comes with the activation ops; clamp is the same function.
    return t.relu() if hasattr(t, "relu") else t.clamp(min=0)


def _conv_cases(lib, F, rng):
    x = lib.tensor(rng.standard_normal((64, 1, 28, 28)).astype(np.float32))
    w1, b1, w2, b2 = _params(lib, rng, [((32, 1, 3, 3), 0.3), ((32,), 0.1),
                                        ((64, 32, 3, 3), 0.06), ((64,), 0.1)])

    def forward():
        with lib.no_grad():
            F.conv2d(F.conv2d(x, w1, b1, padding=1), w2, b2, padding=1)

    def step():
        y = F.conv2d(F.conv2d(x, w1, b1, padding=1), w2, b2, padding=1)
        y.sum().backward()

    def block():
        y = F.max_pool2d(_relu(F.conv2d(x, w1, b1, padding=1)), 2)
        y = F.max_pool2d(_relu(F.conv2d(y, w2, b2, padding=1)), 2)
        y.sum().backward()

    return forward, step, block


def _linear_case(lib, F, rng):
    x = lib.tensor(rng.standard_normal((512, 784)).astype(np.float32))
    w, b = _params(lib, rng, [((256, 784), 0.03), ((256,), 0.1)])

    def step():
        _relu(F.linear(x, w, b)).sum().backward()

    return step


def main():
    print(environment())
    rng = np.random.default_rng(0)
    ef, es, eb = _conv_cases(ember, EF, rng)
    el = _linear_case(ember, EF, rng)
    tf = ts = tb = tl = None
    if torch is not None:
        import torch.nn.functional as TF

        rng = np.random.default_rng(0)
        tf, ts, tb = _conv_cases(torch, TF, rng)
        tl = _linear_case(torch, TF, rng)
    for threads in (1, 2):
        bench = Bench(threads=threads, repeat=11, target_s=0.2)
        bench.compare("conv 1->32->64 forward", ef, tf)
        bench.compare("conv 1->32->64 fwd+bwd", es, ts)
        bench.compare("conv+relu+maxpool block step", eb, tb)
        bench.compare("linear 784->256 step (b=512)", el, tl)


if __name__ == "__main__":
    main()
