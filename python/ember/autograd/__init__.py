"""Reverse-mode automatic differentiation (``torch.autograd``). The engine is C++
(csrc/autograd); this package is its Python face."""

from __future__ import annotations

import ember
from ember._C import _autograd as _ag
from ember.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

__all__ = [
    "backward",
    "grad",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
]


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, ember.Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs, grads, is_grads_batched=False):
    """The gradients to start from: ``grads`` where given, ones for scalar outputs."""
    new = []
    for out, g in zip(outputs, grads):
        if g is None:
            if out.requires_grad and out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not out.is_floating_point():
                raise RuntimeError(
                    "grad can be implicitly created only for real scalar outputs but got "
                    f"{out.dtype}"
                )
            new.append(ember.ones_like(out))
        else:
            if not isinstance(g, ember.Tensor):
                g = ember.tensor(g, dtype=out.dtype)
            if tuple(g.shape) != tuple(out.shape):
                raise RuntimeError(
                    "Mismatch in shape: grad_output[0] has a shape of "
                    f"{ember.Size(g.shape)} and output[0] has a shape of {ember.Size(out.shape)}."
                )
            new.append(g)
    return new


def backward(
    tensors,
    grad_tensors=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables=None,
    inputs=None,
) -> None:
    """Accumulates gradients of ``tensors`` into the ``.grad`` of the leaves (or of ``inputs``)."""
    if grad_variables is not None:
        grad_tensors = grad_variables
    if inputs is not None and len(_as_tuple(inputs)) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    tensors = _as_tuple(tensors)
    inputs = _as_tuple(inputs)
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    else:
        grad_tensors = list(_as_tuple(grad_tensors))
        if len(grad_tensors) != len(tensors):
            raise RuntimeError(
                f"got {len(grad_tensors)} gradients for {len(tensors)} tensors"
            )
    grads = _make_grads(tensors, grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    _ag.run_backward(
        list(tensors), grads, bool(retain_graph), bool(create_graph), list(inputs), True, True
    )


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
):
    """The gradients of ``outputs`` with respect to ``inputs`` (nothing is accumulated)."""
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("grad requires non-empty inputs.")
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    else:
        grad_outputs = list(_as_tuple(grad_outputs))
        if len(grad_outputs) != len(outputs):
            raise RuntimeError(
                f"grad_outputs has {len(grad_outputs)} tensors for {len(outputs)} outputs"
            )
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        return _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph,
                             allow_unused, materialize_grads)
    grads = _make_grads(outputs, grad_outputs)
    result = _ag.run_backward(
        list(outputs),
        grads,
        bool(retain_graph),
        bool(create_graph),
        list(inputs),
        bool(allow_unused),
        False,
    )
    if materialize_grads:
        result = tuple(
            ember.zeros_like(i) if r is None else r for r, i in zip(result, inputs)
        )
    return tuple(result)


def _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    """grad(..., is_grads_batched=True): dim 0 of every grad_output indexes independent
    backward passes, and every result gets that dim. The engine runs one backward per entry
    (the graph is kept until the last)."""
    sizes = {g.shape[0] for g in grad_outputs if isinstance(g, ember.Tensor) and g.dim() > 0}
    if any(g is None for g in grad_outputs) or not sizes:
        raise RuntimeError("grad: is_grads_batched=True needs a grad_output (with a leading "
                           "batch dim) for every output")
    if len(sizes) != 1:
        raise RuntimeError(f"grad: with is_grads_batched=True every grad_output needs the same "
                           f"batch size (dim 0), got {sorted(sizes)}")
    (size,) = sizes
    for o, g in zip(outputs, grad_outputs):
        if tuple(g.shape[1:]) != tuple(o.shape):
            raise RuntimeError(f"Mismatch in shape: grad_output has a shape of {tuple(g.shape)} "
                               f"and output has a shape of {tuple(o.shape)}; with "
                               "is_grads_batched=True it must be the output's shape with a "
                               "leading batch dim")
    per_entry = []
    for i in range(size):
        keep = retain_graph or i < size - 1
        per_entry.append(_ag.run_backward(list(outputs), [g[i] for g in grad_outputs],
                                          bool(keep), bool(create_graph), list(inputs),
                                          bool(allow_unused), False))
    result = []
    for j, inp in enumerate(inputs):
        column = [entry[j] for entry in per_entry]
        if all(c is None for c in column):
            result.append(ember.zeros((size,) + tuple(inp.shape), dtype=inp.dtype)
                          if materialize_grads else None)
        else:
            result.append(ember.stack([ember.zeros_like(inp) if c is None else c
                                       for c in column]))
    return tuple(result)


def _tensor_backward(
    self, gradient=None, retain_graph=None, create_graph=False, inputs=None
) -> None:
    """Tensor.backward: see ember.autograd.backward."""
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


ember.Tensor.backward = _tensor_backward

from ember.autograd.gradcheck import gradcheck, gradgradcheck  # noqa: E402

__all__ += ["gradcheck", "gradgradcheck"]

from ember.autograd.function import Function, FunctionCtx, once_differentiable  # noqa: E402

__all__ += ["Function", "FunctionCtx", "once_differentiable"]

from ember.autograd import forward_ad, functional  # noqa: E402,F401
from ember.autograd.anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: E402

__all__ += ["forward_ad", "functional", "detect_anomaly", "set_detect_anomaly"]
