"""``ember.autograd.Function``: user-defined operations with a Python backward, as
``torch.autograd.Function``. The node is C++ (PyFunctionNode in
csrc/bindings/autograd_function.cpp); its backward takes the GIL back to call ``backward``."""

from __future__ import annotations

import functools

import ember
from ember._C import _autograd as _ag

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx:
    """The ``ctx`` object passed to forward and backward."""

    def __init__(self) -> None:
        self._node_ref = None
        self.needs_input_grad: tuple = ()
        self.to_save: tuple = ()
        self._dirty: tuple = ()
        self._non_differentiable: tuple = ()
        self._materialize_grads = True
        self._in_jvp = False

    def save_for_backward(self, *tensors) -> None:
        for t in tensors:
            if t is not None and not isinstance(t, ember.Tensor):
                raise TypeError(
                    "save_for_backward can only save variables, but argument "
                    f"{tensors.index(t)} is of type {type(t).__name__}"
                )
        self.to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        if not all(t is None or isinstance(t, ember.Tensor) for t in tensors):
            raise AssertionError(
                "save_for_forward expects all arguments to be tensors; you should save "
                "non-tensors as attributes on ctx."
            )
        self.saved_for_forward = tensors

    @property
    def saved_tensors(self) -> tuple:
        if self._in_jvp:
            # Inside jvp: what save_for_forward kept (as PyTorch).
            return tuple(getattr(self, "saved_for_forward", ()))
        if self._node_ref is None:
            # Called inside forward, or the function was applied without recording.
            return tuple(self.to_save)
        return self._node_ref.saved_tensors()

    def mark_dirty(self, *tensors) -> None:
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self._materialize_grads = bool(value)
        if self._node_ref is not None:
            self._node_ref.set_materialize_grads(self._materialize_grads)


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)


class Function(FunctionCtx, metaclass=_FunctionMeta):
    """Base class of user-defined differentiable functions: define ``forward(ctx, *args)`` and
    ``backward(ctx, *grad_outputs)`` as static methods and call ``Function.apply``."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method."
        )

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @classmethod
    def apply(cls, *args, **kwargs):
        if kwargs:
            raise TypeError(f"{cls.__name__}.apply() takes positional arguments only")
        ctx = FunctionCtx()
        tensor_args = [a for a in args if isinstance(a, ember.Tensor)]
        ctx.needs_input_grad = tuple(
            isinstance(a, ember.Tensor) and a.requires_grad for a in args
        )
        recording = ember.is_grad_enabled() and any(ctx.needs_input_grad)
        uses_setup_context = cls.setup_context is not Function.setup_context
        # Forward mode: the levels at which an input carries a tangent. forward runs with every
        # level hidden (its ops make no tangents); jvp gives the outputs theirs afterwards.
        dual_levels = _ag._function_dual_levels(list(args))

        def run_forward():
            with ember.no_grad():
                if uses_setup_context:
                    return cls.forward(*args)
                return cls.forward(ctx, *args)

        output = _ag._call_hiding_dual_levels(0, run_forward) if dual_levels else run_forward()
        if uses_setup_context:
            cls.setup_context(ctx, args, output)
        if not recording:
            if dual_levels:
                output = _forward_ad_outputs(cls, ctx, args, output, dual_levels)
            return output

        def run_backward(grads, _ctx=ctx, _cls=cls):
            return _cls.backward(_ctx, *grads)

        ref, _node = _ag._make_function_node(cls.__name__ + "Backward", run_backward, list(args))
        ctx._node_ref = ref
        if not ctx._materialize_grads:
            ref.set_materialize_grads(False)
        is_tuple = isinstance(output, tuple)
        outputs = list(output) if is_tuple else [output]
        dirty_ids = {id(t) for t in ctx._dirty}
        nondiff_ids = {id(t) for t in ctx._non_differentiable}
        input_ids = {id(t) for t in tensor_args}
        tensor_outs, kinds, positions = [], [], []
        for i, out in enumerate(outputs):
            if not isinstance(out, ember.Tensor):
                continue
            if id(out) in input_ids and id(out) not in dirty_ids:
                # An input returned as is: the output is a new alias with its own history.
                out = out.view_as(out)
                outputs[i] = out
            tensor_outs.append(out)
            positions.append(i)
            kinds.append(2 if id(out) in nondiff_ids else (1 if id(out) in dirty_ids else 0))
        _ag._set_function_outputs(ref, tensor_outs, kinds)
        if ctx.to_save:
            _ag._save_for_backward(ref, list(ctx.to_save), tensor_outs)
        ctx.to_save = ()
        output = tuple(outputs) if is_tuple else outputs[0]
        if dual_levels:
            output = _forward_ad_outputs(cls, ctx, args, output, dual_levels)
        return output


def _forward_ad_outputs(cls, ctx, args, output, levels):
    """Gives forward's outputs their tangents from ``cls.jvp`` at each level an input carries
    one: jvp receives one tangent per argument (zeros for a tensor without one unless
    ``ctx.set_materialize_grads(False)``, None for a non-tensor) and returns one per output
    (None for a non-differentiable one). It runs with grad mode as the caller's, so the
    tangents are differentiable in reverse mode, and with its level hidden (the saved tensors
    read as plain values there)."""
    if cls.jvp is Function.jvp:
        Function.jvp(ctx)
    is_tuple = isinstance(output, tuple)
    outputs = list(output) if is_tuple else [output]
    for i, out in enumerate(outputs):
        if isinstance(out, ember.Tensor) and any(out is a for a in args) and id(out) not in {
            id(t) for t in ctx._dirty
        }:
            # An input returned as is (when nothing recorded it): a new alias for its tangent.
            outputs[i] = out.view_as(out)
    nondiff_ids = {id(t) for t in ctx._non_differentiable}
    for level in levels:
        tangents = _ag._function_tangents(list(args), level)
        if ctx._materialize_grads:
            tangents = [
                ember.zeros_like(a) if t is None and isinstance(a, ember.Tensor) else t
                for a, t in zip(args, tangents)
            ]

        def run_jvp(_tangents=tangents):
            ctx._in_jvp = True
            try:
                return cls.jvp(ctx, *_tangents)
            finally:
                ctx._in_jvp = False

        result = _ag._call_hiding_dual_levels(level, run_jvp)
        results = result if isinstance(result, tuple) else (result,)
        if len(results) != len(outputs):
            raise RuntimeError(
                "Function's jvp returned an invalid number of forward gradients (expected "
                f"{len(outputs)} but got {len(results)})"
            )
        for k, (out, t) in enumerate(zip(outputs, results)):
            if not isinstance(out, ember.Tensor):
                if t is not None:
                    raise RuntimeError(
                        f"Function's jvp returned a gradient at position {k}, but  the "
                        "corresponding forward output is not a differentiable Tensor.You should "
                        "return None at that position instead."
                    )
                continue
            differentiable = id(out) not in nondiff_ids and (
                out.is_floating_point() or out.is_complex()
            )
            _ag._set_function_tangent(out, t, level, k, differentiable)
    return tuple(outputs) if is_tuple else outputs[0]


def once_differentiable(fn):
    """Marks a backward as not differentiable: it runs without recording, and a second
    differentiation through it raises."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with ember.no_grad():
            outputs = fn(ctx, *args)
        if not ember.is_grad_enabled():
            return outputs
        requires = [a for a in args if isinstance(a, ember.Tensor) and a.requires_grad]
        if not requires:
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        wrapped = _ag._delayed_error(
            "trying to differentiate twice a function that was marked with "
            "@once_differentiable",
            requires,
            [o if isinstance(o, ember.Tensor) else None for o in outs],
        )
        wrapped = tuple(w if w is not None else o for w, o in zip(wrapped, outs))
        return wrapped[0] if single else wrapped

    return wrapper
