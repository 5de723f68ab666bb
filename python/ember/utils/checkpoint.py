"""``ember.utils.checkpoint``: activation checkpointing, as ``torch.utils.checkpoint``. A
checkpointed function keeps only its inputs and outputs; backward recomputes the activations it
needs (with the RNG state of the forward, so dropout masks match).

Two implementations, chosen by ``use_reentrant``:

- reentrant (``True``, the default when the argument is omitted, with a warning as in PyTorch
  2.4+): an ``autograd.Function`` whose forward runs the function without recording, and whose
  backward reruns it with recording and calls ``ember.autograd.backward`` on the rerun graph.
  Gradients reach the inputs and accumulate into the ``.grad`` of the parameters the function
  uses; ``autograd.grad`` is not supported (as in PyTorch) and at least one input must require
  grad.
- non-reentrant (``False``, recommended): PyTorch builds it on saved-tensor hooks, which Ember's
  engine does not have. Here (Note [Non-reentrant checkpoint without saved-tensor hooks]) the
  forward runs once with recording, the graph is walked to find every leaf tensor that requires
  grad (the parameters, and tensors the function closes over), and the graph is dropped; one
  ``autograd.Function`` node then connects the outputs to the inputs and those leaves, and its
  backward recomputes and differentiates with ``ember.autograd.grad``. So ``autograd.grad``,
  keyword arguments, inputs that do not require grad and nested checkpoints all work.

docs/design/parametrize-checkpoint.md compares the two with PyTorch's.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterable
from typing import Any

import ember
from ember.autograd.function import Function

__all__ = [
    "CheckpointError",
    "checkpoint",
    "checkpoint_sequential",
    "detach_variable",
    "noop_context_fn",
    "set_checkpoint_debug_enabled",
]

# Note [Non-reentrant checkpoint without saved-tensor hooks]: PyTorch's non-reentrant
# checkpoint records the forward graph but, through saved-tensor hooks, saves nothing in it;
# the graph's nodes ask for their saved tensors at backward and a hook recomputes them. Ember's
# engine has no saved-tensor hooks, so the checkpointed region is instead represented by one
# Function node whose inputs are the region's inputs plus every leaf that requires grad in the
# region's graph. The region runs once with recording (so the leaves can be found by walking
# grad_fn.next_functions down to the AccumulateGrad nodes), then that graph is released: at
# most one region's activations are alive at a time, which is the memory saving. At backward,
# the region is rerun under the saved RNG state and differentiated with autograd.grad
# with respect to the detached inputs and the leaves; the Function returns those gradients and
# the engine routes them on. The result differs from PyTorch's only in the grad_fn of the
# outputs (one "_NonReentrantCheckpointBackward" node instead of the region's own last
# node).

_checkpoint_debug_enabled: bool | None = None


class CheckpointError(RuntimeError):
    """Raised when the recomputation does not reproduce the forward (determinism_check)."""


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None):
    """Override every checkpoint's ``debug`` flag inside the block (None: use each call's)."""
    global _checkpoint_debug_enabled
    prev = _checkpoint_debug_enabled
    _checkpoint_debug_enabled = enabled
    try:
        yield
    finally:
        _checkpoint_debug_enabled = prev


def noop_context_fn():
    """The default ``context_fn``: no context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs: tuple) -> tuple:
    """Detached copies of the tensors in ``inputs`` that keep each one's requires_grad."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            "Only tuple of tensors is supported. Got Unsupported input type: "
            f"{type(inputs).__name__}"
        )
    out = []
    for inp in inputs:
        if not isinstance(inp, ember.Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


class _RNGState:
    """The CPU generator's state at the forward, restored around the recomputation (and the
    caller's state put back afterwards)."""

    def __init__(self, preserve: bool) -> None:
        self.preserve = preserve
        self.state = ember.get_rng_state() if preserve else None

    @contextlib.contextmanager
    def replay(self):
        if not self.preserve:
            yield
            return
        current = ember.get_rng_state()
        ember.set_rng_state(self.state)
        try:
            yield
        finally:
            ember.set_rng_state(current)


def _autocast_context():
    """A context manager that re-enters the forward's CPU autocast state."""
    enabled = ember.is_autocast_enabled("cpu")
    dtype = ember.get_autocast_dtype("cpu")
    cache = ember.is_autocast_cache_enabled()

    def make():
        return ember.autocast("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache)

    return make


def _metadata(x) -> Any:
    if isinstance(x, ember.Tensor):
        return ("Tensor", tuple(x.shape), x.dtype, str(x.device))
    return type(x).__name__


# ---------------------------------------------------------------------------- reentrant


class CheckpointFunction(Function):
    """The reentrant checkpoint's node: forward without recording, backward reruns and
    back-propagates through the rerun graph."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.rng = _RNGState(preserve_rng_state)
        ctx.autocast = _autocast_context()
        # Tensors go through save_for_backward (version-checked); the rest is kept as is.
        ctx.inputs = []
        ctx.tensor_indices = []
        tensor_inputs = []
        for i, arg in enumerate(args):
            if isinstance(arg, ember.Tensor):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        with ember.no_grad():
            outputs = run_function(*args)
        return outputs

    @staticmethod
    def backward(ctx, *grad_outputs):
        inputs = list(ctx.inputs)
        tensors = ctx.saved_tensors
        for i, idx in enumerate(ctx.tensor_indices):
            inputs[idx] = tensors[i]
        detached = detach_variable(tuple(inputs))
        with ctx.rng.replay(), ember.enable_grad(), ctx.autocast():
            outputs = ctx.run_function(*detached)
        if isinstance(outputs, ember.Tensor):
            outputs = (outputs,)
        outputs_with_grad, grads_with_grad = [], []
        for out, g in zip(outputs, grad_outputs):
            if isinstance(out, ember.Tensor) and out.requires_grad:
                outputs_with_grad.append(out)
                grads_with_grad.append(g if g is not None else ember.zeros_like(out))
        if not outputs_with_grad:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary"
            )
        ember.autograd.backward(outputs_with_grad, grads_with_grad)
        grads = tuple(x.grad if isinstance(x, ember.Tensor) else None for x in detached)
        return (None, None) + grads


def _checkpoint_reentrant(function, preserve_rng_state, args):
    if not any(isinstance(a, ember.Tensor) and a.requires_grad for a in args) and (
        ember.is_grad_enabled()
    ):
        warnings.warn(
            "None of the inputs have requires_grad=True. Gradients will be None", stacklevel=3
        )
    return CheckpointFunction.apply(function, preserve_rng_state, *args)


# ---------------------------------------------------------------------------- non-reentrant


def _leaves_requiring_grad(outputs: list, exclude: set) -> list:
    """The leaf tensors (AccumulateGrad variables) that the graph of ``outputs`` reaches, in
    the order first met, without those whose id is in ``exclude``."""
    # Node wrappers are made on access: keeping each visited one alive keeps its id unique
    # (and makes pybind11 hand back the same wrapper for the same node).
    visited: list = []
    seen_nodes: set = set()
    found: dict = {}
    stack = [o.grad_fn for o in outputs if o.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        visited.append(node)
        if node.name() == "AccumulateGrad":
            var = node.variable
            if id(var) not in exclude and id(var) not in found:
                found[id(var)] = var
            continue
        for nxt, _ in node.next_functions:
            if nxt is not None:
                stack.append(nxt)
    return list(found.values())


class _NonReentrantCheckpoint(Function):
    """One node for a non-reentrant checkpointed region (Note [Non-reentrant checkpoint without
    saved-tensor hooks]): args are (info, *tensor inputs, *leaves)."""

    @staticmethod
    def forward(ctx, info, *tensors):
        ctx.info = info
        ctx.save_for_backward(*tensors[: info["n_inputs"]])
        ctx.leaves = tensors[info["n_inputs"]:]
        outs = tuple(o.detach() for o in info["tensor_outputs"])
        # An output that did not require grad in the region (an index, a detached value)
        # does not require it now either.
        ctx.mark_non_differentiable(
            *[o for o, r in zip(outs, info["tensor_outputs"]) if not r.requires_grad]
        )
        return outs

    @staticmethod
    def backward(ctx, *grad_outputs):
        info = ctx.info
        saved = ctx.saved_tensors
        if ember.is_grad_enabled():
            # create_graph: the recomputation hangs off the real inputs, so the gradients
            # returned here can be differentiated again with respect to them.
            detached = list(saved)
        else:
            detached = []
            for t in saved:
                d = t.detach()
                d.requires_grad = t.requires_grad
                detached.append(d)
        args, kwargs = info["rebuild"](detached)
        _, recompute_ctx = info["context_fn"]()
        with info["rng"].replay(), ember.enable_grad(), info["autocast"](), recompute_ctx:
            outputs = info["function"](*args, **kwargs)
        flat = [o for o in _flatten(outputs) if isinstance(o, ember.Tensor)]
        if info["determinism_check"] == "default":
            got = [_metadata(o) for o in flat]
            if got != info["forward_metadata"]:
                msg = (
                    "ember.utils.checkpoint: Recomputed values for the outputs have different "
                    "metadata than during the forward pass.\n"
                    f"forward: {info['forward_metadata']}\nrecomputed: {got}"
                )
                if info["debug"]:
                    msg += (
                        "\nThe function was recomputed under the forward's RNG state "
                        f"(preserve_rng_state={info['rng'].preserve}); a function whose output "
                        "shapes depend on other global state cannot be checkpointed."
                    )
                raise CheckpointError(msg)
        roots, root_grads = [], []
        for out, g in zip(flat, grad_outputs):
            if out.requires_grad and g is not None:
                roots.append(out)
                root_grads.append(g)
        wrt = [d for d in detached if d.requires_grad] + [
            leaf for leaf in ctx.leaves if leaf.requires_grad
        ]
        n_inputs = len(detached)
        if not roots or not wrt:
            return (None,) * (1 + n_inputs + len(ctx.leaves))
        grads = ember.autograd.grad(
            roots,
            wrt,
            root_grads,
            retain_graph=True,
            create_graph=ember.is_grad_enabled(),
            allow_unused=True,
        )
        grads = list(grads)
        result = [None]
        for d in detached:
            result.append(grads.pop(0) if d.requires_grad else None)
        for leaf in ctx.leaves:
            result.append(grads.pop(0) if leaf.requires_grad else None)
        return tuple(result)


def _flatten(x) -> list:
    if isinstance(x, (tuple, list)):
        out = []
        for item in x:
            out.extend(_flatten(item))
        return out
    return [x]


def _unflatten_like(template, flat: list):
    """Rebuild ``template``'s nesting (tuples / lists) with the tensors of ``flat`` in order."""
    it = iter(flat)

    def rebuild(t):
        if isinstance(t, (tuple, list)):
            return type(t)(rebuild(x) for x in t)
        if isinstance(t, ember.Tensor):
            return next(it)
        return t

    return rebuild(template)


def _checkpoint_non_reentrant(function, preserve_rng_state, context_fn, determinism_check, debug,
                              args, kwargs):
    # Tensor arguments, positional or keyword, become the Function's inputs; everything else is
    # passed through as is.
    arg_tensors = [a for a in args if isinstance(a, ember.Tensor)]
    kw_names = [k for k, v in kwargs.items() if isinstance(v, ember.Tensor)]
    tensor_inputs = arg_tensors + [kwargs[k] for k in kw_names]

    def rebuild(tensors):
        it = iter(tensors)
        new_args = tuple(next(it) if isinstance(a, ember.Tensor) else a for a in args)
        new_kwargs = dict(kwargs)
        for k in kw_names:
            new_kwargs[k] = next(it)
        return new_args, new_kwargs

    rng = _RNGState(preserve_rng_state)
    autocast = _autocast_context()
    forward_ctx, _ = context_fn()

    if not ember.is_grad_enabled():
        # Nothing will be differentiated: just run it.
        with forward_ctx:
            return function(*args, **kwargs)

    # The region runs on detached inputs, so the walk below stops at them (they are leaves).
    detached = []
    for t in tensor_inputs:
        d = t.detach()
        d.requires_grad = t.requires_grad
        detached.append(d)
    run_args, run_kwargs = rebuild(detached)
    with forward_ctx:
        outputs = function(*run_args, **run_kwargs)
    flat = _flatten(outputs)
    tensor_outputs = [o for o in flat if isinstance(o, ember.Tensor)]
    recorded = [o for o in tensor_outputs if o.requires_grad]
    leaves = _leaves_requiring_grad(recorded, {id(d) for d in detached})
    if not recorded:
        # Nothing in the region requires grad: its outputs are plain tensors.
        return outputs
    info = {
        "function": function,
        "rebuild": rebuild,
        "n_inputs": len(tensor_inputs),
        "tensor_outputs": tensor_outputs,
        "forward_metadata": [_metadata(o) for o in tensor_outputs],
        "rng": rng,
        "autocast": autocast,
        "context_fn": context_fn,
        "determinism_check": determinism_check,
        "debug": debug,
    }
    new_outputs = _NonReentrantCheckpoint.apply(info, *tensor_inputs, *leaves)
    if not isinstance(new_outputs, tuple):
        new_outputs = (new_outputs,)
    result = _unflatten_like(outputs, list(new_outputs))
    # Release the region's graph: only the detached outputs are kept from the first run.
    info["tensor_outputs"] = None
    del outputs, flat, tensor_outputs, recorded
    return result


def checkpoint(
    function,
    *args,
    use_reentrant: bool | None = None,
    context_fn=noop_context_fn,
    determinism_check: str = "default",
    debug: bool = False,
    preserve_rng_state: bool = True,
    **kwargs,
):
    """Run ``function(*args, **kwargs)`` without keeping its intermediate activations; backward
    recomputes them. See the module docstring for ``use_reentrant``.

    ``preserve_rng_state`` replays the forward's RNG state in the recomputation (dropout masks
    match). ``context_fn`` returns two context managers, for the forward and for the
    recomputation; ``determinism_check="default"`` compares the recomputed outputs' shapes,
    dtypes and devices with the forward's (CheckpointError on a mismatch), ``"none"`` skips it.
    ``context_fn``, ``debug`` and keyword arguments need ``use_reentrant=False``."""
    if use_reentrant is None:
        warnings.warn(
            "ember.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "use_reentrant=False is recommended, but if you need to preserve the current "
            "default behavior, you can pass use_reentrant=True. Refer to docs for more details "
            "on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    if determinism_check not in ("default", "none"):
        raise ValueError(
            "determinism_check should be one of ['default', 'none'], "
            f"but got {determinism_check}"
        )
    if _checkpoint_debug_enabled is not None:
        debug = _checkpoint_debug_enabled
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
            )
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
        return _checkpoint_reentrant(function, preserve_rng_state, args)
    return _checkpoint_non_reentrant(
        function, preserve_rng_state, context_fn, determinism_check, debug, args, kwargs
    )


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None,
                          **kwargs):
    """Run a Sequential (or a list of modules / functions) as ``segments`` checkpointed pieces;
    the last piece runs normally (its activations are needed by backward at once)."""
    if use_reentrant is None:
        warnings.warn(
            "ember.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should "
            "be passed explicitly. use_reentrant=False is recommended, but if you need to "
            "preserve the current default behavior, you can pass use_reentrant=True. Refer to "
            "docs for more details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    if isinstance(functions, ember.nn.Sequential):
        functions = list(functions.children())
    elif isinstance(functions, Iterable) and not isinstance(functions, list):
        functions = list(functions)
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(
            run_function(start, end, functions),
            input,
            use_reentrant=use_reentrant,
            preserve_rng_state=preserve,
        )
    return run_function(end + 1, len(functions) - 1, functions)(input)
