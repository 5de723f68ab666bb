"""Activation functions of ``torch.nn.functional`` (the kernels are C++ ops: ``ember.relu``,
``ember._C._nn.gelu``, ...). Signatures and defaults follow PyTorch."""

import ember
from ember import _C

_nn = _C._nn

__all__ = [
    "celu",
    "celu_",
    "elu",
    "elu_",
    "gelu",
    "glu",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "hardtanh_",
    "leaky_relu",
    "leaky_relu_",
    "logsigmoid",
    "mish",
    "prelu",
    "relu",
    "relu6",
    "relu_",
    "selu",
    "selu_",
    "sigmoid",
    "silu",
    "softplus",
    "softshrink",
    "softsign",
    "tanh",
    "tanhshrink",
    "threshold",
    "threshold_",
]


def threshold(input, threshold, value, inplace=False):
    """y = x if x > threshold else value."""
    if inplace:
        return ember.threshold_(input, threshold, value)
    return ember.threshold(input, threshold, value)


def threshold_(input, threshold, value):
    return ember.threshold_(input, threshold, value)


def relu(input, inplace=False):
    """max(x, 0)."""
    if inplace:
        return ember.relu_(input)
    return ember.relu(input)


def relu_(input):
    return ember.relu_(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """clamp(x, min_val, max_val)."""
    if inplace:
        return _nn.hardtanh_(input, min_val, max_val)
    return _nn.hardtanh(input, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return _nn.hardtanh_(input, min_val, max_val)


def relu6(input, inplace=False):
    """min(max(x, 0), 6)."""
    if inplace:
        return _nn.hardtanh_(input, 0.0, 6.0)
    return _nn.relu6(input)


def elu(input, alpha=1.0, inplace=False):
    """x if x > 0 else alpha * (exp(x) - 1)."""
    if inplace:
        return _nn.elu_(input, alpha)
    return _nn.elu(input, alpha)


def elu_(input, alpha=1.0):
    return _nn.elu_(input, alpha)


def selu(input, inplace=False):
    """scale * elu(x, alpha) with PyTorch's self-normalising constants."""
    if inplace:
        return ember.selu_(input)
    return ember.selu(input)


def selu_(input):
    return ember.selu_(input)


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    if inplace:
        return ember.celu_(input, alpha)
    return ember.celu(input, alpha)


def celu_(input, alpha=1.0):
    return ember.celu_(input, alpha)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x if x > 0 else negative_slope * x."""
    if inplace:
        return _nn.leaky_relu_(input, negative_slope)
    return _nn.leaky_relu(input, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    return _nn.leaky_relu_(input, negative_slope)


def prelu(input, weight):
    """x if x > 0 else weight * x, weight of one element or one per channel (dim 1)."""
    return ember.prelu(input, weight)


def glu(input, dim=-1):
    """a * sigmoid(b), with a and b the two halves of input along dim."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    return _nn.glu(input, dim)


def gelu(input, approximate="none"):
    """x * Phi(x) (approximate='tanh': the tanh approximation)."""
    return _nn.gelu(input, approximate=approximate)


def logsigmoid(input):
    """log(1 / (1 + exp(-x)))."""
    return _nn.log_sigmoid(input)


def hardshrink(input, lambd=0.5):
    """x if |x| > lambd else 0."""
    return ember.hardshrink(input, lambd)


def tanhshrink(input):
    """x - tanh(x)."""
    return input - input.tanh()


def softsign(input):
    """x / (1 + |x|)."""
    return input / (input.abs() + 1)


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * x)) / beta, linear above threshold."""
    return _nn.softplus(input, beta, threshold)


def softshrink(input, lambd=0.5):
    """x - lambd if x > lambd, x + lambd if x < -lambd, else 0."""
    return _nn.softshrink(input, lambd)


def silu(input, inplace=False):
    """x * sigmoid(x)."""
    if input.is_complex():  # PyTorch accepts complex inputs here (a composite)
        return input.mul_(ember.sigmoid(input)) if inplace else input * ember.sigmoid(input)
    if inplace:
        return _nn.silu_(input)
    return _nn.silu(input)


def mish(input, inplace=False):
    """x * tanh(softplus(x))."""
    if inplace:
        return _nn.mish_(input)
    return _nn.mish(input)


def hardsigmoid(input, inplace=False):
    """clamp(x / 6 + 1 / 2, 0, 1)."""
    if inplace:
        return _nn.hardsigmoid_(input)
    return _nn.hardsigmoid(input)


def hardswish(input, inplace=False):
    """x * hardsigmoid(x)."""
    if inplace:
        return _nn.hardswish_(input)
    return _nn.hardswish(input)


def sigmoid(input):
    """1 / (1 + exp(-x)) (PyTorch keeps F.sigmoid as an alias of torch.sigmoid)."""
    return input.sigmoid()


def tanh(input):
    """tanh(x) (PyTorch keeps F.tanh as an alias of torch.tanh)."""
    return input.tanh()
