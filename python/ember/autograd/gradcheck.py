"""Finite-difference gradient checks (``torch.autograd.gradcheck`` / ``gradgradcheck``).

The numerical Jacobian uses central differences on float64 (or complex128) inputs; the
analytical one is built row by row with ``autograd.grad``. Complex inputs are checked with
PyTorch's conjugate Wirtinger convention (real and imaginary perturbations separately).
"""

from __future__ import annotations

import numpy as np

import ember


class GradcheckError(RuntimeError):
    """Raised by gradcheck when the analytical and numerical gradients differ."""


def _as_tuple(x):
    return (x,) if isinstance(x, ember.Tensor) else tuple(x)


def _differentiable_outputs(out):
    """Floating and complex outputs, whether or not they require grad: an output that should
    depend on the inputs but has no graph must fail the check, not be skipped."""
    return tuple(
        o for o in _as_tuple(out)
        if isinstance(o, ember.Tensor) and (o.is_floating_point() or o.is_complex())
    )


def _set(t, idx, value):
    if t.dim():
        t[idx] = value
    else:
        t.fill_(value)


def _outputs_numpy(fn, inputs):
    outs = _as_tuple(fn(*inputs))
    return [o.detach().numpy().astype(np.complex128).reshape(-1) for o in outs
            if isinstance(o, ember.Tensor) and (o.is_floating_point() or o.is_complex())]


def _numerical_derivatives(fn, inputs, inp, eps):
    """For each element k of ``inp``: the central-difference derivatives of every output along
    the real axis and (complex inputs) the imaginary axis: lists [k][output] of complex arrays."""
    data = inp.detach()
    dx, dy = [], []
    for k in range(inp.numel()):
        idx = np.unravel_index(k, tuple(inp.shape)) if inp.dim() else ()
        orig = data[idx].item() if inp.dim() else data.item()
        per_axis = []
        for d in ([eps, 1j * eps] if inp.is_complex() else [eps]):
            # fn runs with grad mode as the caller has it: gradgradcheck's fn calls autograd.grad.
            _set(data, idx, orig + d)
            plus = _outputs_numpy(fn, inputs)
            _set(data, idx, orig - d)
            minus = _outputs_numpy(fn, inputs)
            _set(data, idx, orig)
            per_axis.append([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
        dx.append(per_axis[0])
        dy.append(per_axis[1] if inp.is_complex() else None)
    return dx, dy


def _analytical_vjp_rows(fn, inputs, diff_inputs, out_index, v):
    """Row m: the gradients of every diff input for grad_output = v at element m of the output."""
    out = _differentiable_outputs(fn(*inputs))[out_index]
    rows = []
    for m in range(out.numel()):
        if not out.requires_grad:  # no graph: the analytical Jacobian is zero
            rows.append([np.zeros(i.numel(), dtype=np.complex128) for i in diff_inputs])
            continue
        g = ember.zeros(tuple(out.shape), dtype=out.dtype)  # contiguous: view(-1) below
        g.view(-1)[m] = v
        grads = ember.autograd.grad(out, diff_inputs, g, retain_graph=True, allow_unused=True)
        rows.append([
            np.zeros(i.numel(), dtype=np.complex128)
            if gr is None else gr.detach().numpy().astype(np.complex128).reshape(-1)
            for gr, i in zip(grads, diff_inputs)
        ])
    return rows


def _forward_ad_columns(fn, inputs, a_idx, inp, out_count):
    """Column k of d(outputs)/d(inp) by forward-mode AD, for a unit tangent at element k
    (and, for complex inputs, an imaginary one): lists [k][output] as _numerical_derivatives."""
    import ember.autograd.forward_ad as fwAD

    dx, dy = [], []
    for k in range(inp.numel()):
        per_axis = []
        for unit in ([1.0, 1j] if inp.is_complex() else [1.0]):
            tangent = ember.zeros(tuple(inp.shape), dtype=inp.dtype)
            tangent.view(-1)[k] = unit
            with fwAD.dual_level():
                call = list(inputs)
                call[a_idx] = fwAD.make_dual(inp, tangent)
                outs = _differentiable_outputs(fn(*call))
                cols = []
                for o in outs:
                    t = fwAD.unpack_dual(o).tangent
                    cols.append(
                        np.zeros(o.numel(), dtype=np.complex128) if t is None
                        else t.detach().numpy().astype(np.complex128).reshape(-1)
                    )
            assert len(cols) == out_count
            per_axis.append(cols)
        dx.append(per_axis[0])
        dy.append(per_axis[1] if inp.is_complex() else None)
    return dx, dy


def _check_forward_ad(func, inputs, diff_inputs, numeric, outputs, rtol, atol, raise_exception):
    """Forward-mode Jacobians against the numerical ones (column by column)."""
    positions = [next(p for p, x in enumerate(inputs) if x is i) for i in diff_inputs]
    for a_idx, (pos, inp) in enumerate(zip(positions, diff_inputs)):
        fdx, fdy = _forward_ad_columns(func, inputs, pos, inp, len(outputs))
        ndx, ndy = numeric[a_idx]
        for k in range(inp.numel()):
            for j in range(len(outputs)):
                pairs = [(fdx[k][j], ndx[k][j])]
                if ndy[k] is not None:
                    pairs.append((fdy[k][j], ndy[k][j]))
                for got, expected in pairs:
                    if not np.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True):
                        msg = (
                            f"Jacobian computed with forward mode mismatch for output {j} with "
                            f"respect to input {a_idx} (element {k}),\nnumerical:{expected}\n"
                            f"analytical:{got}\n"
                        )
                        if raise_exception:
                            raise GradcheckError(msg)
                        return False
    return True


def gradcheck(
    func,
    inputs,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked=None,
) -> bool:
    """True when ``func``'s analytical gradients match central finite differences.

    Complex numbers follow PyTorch's convention: for a real loss L, the gradient of z = x + iy
    is dL/dx + i dL/dy, and grad_output v weights an output w as L = Re(conj(v) * w). So for a
    unit v the expected gradient is Re(conj(v) dw/dx) + i Re(conj(v) dw/dy); complex outputs
    are checked with v = 1 and v = 1j.

    ``check_grad_dtypes`` also requires each gradient's dtype and shape to equal its input's.
    ``check_forward_ad`` also compares the Jacobian built by forward-mode AD (one dual
    evaluation per input element); ``check_backward_ad=False`` skips the reverse-mode one.
    The full Jacobian is always compared: ``fast_mode`` and ``check_batched_grad`` (PyTorch's
    shortcuts and vmap checks) and ``nondet_tol`` / ``check_undefined_grad`` / ``masked`` are
    accepted so PyTorch calls run unchanged, and do not weaken the check.
    """
    inputs = _as_tuple(inputs)
    diff_inputs = [i for i in inputs if isinstance(i, ember.Tensor) and i.requires_grad]
    if not diff_inputs:
        raise ValueError("gradcheck expects at least one input tensor to require gradient")
    for i in diff_inputs:
        if i.dtype not in (ember.float64, ember.complex128):
            import warnings

            warnings.warn(
                "Input requires gradient and is not a double precision floating point or "
                "complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex.",
                stacklevel=2,
            )
            break
    outputs = _differentiable_outputs(func(*inputs))
    if check_grad_dtypes:
        for out in outputs:
            if not out.requires_grad:
                continue
            grads = ember.autograd.grad(out, diff_inputs, ember.ones_like(out),
                                        retain_graph=True, allow_unused=True)
            for k, (g, i) in enumerate(zip(grads, diff_inputs)):
                if g is not None and (g.dtype != i.dtype or tuple(g.shape) != tuple(i.shape)):
                    msg = (f"Gradient has dtype mismatch or shape mismatch for input {k}: got "
                           f"{g.dtype} {tuple(g.shape)}, expected {i.dtype} {tuple(i.shape)}")
                    if raise_exception:
                        raise GradcheckError(msg)
                    return False
    numeric = [_numerical_derivatives(func, inputs, i, eps) for i in diff_inputs]
    if check_forward_ad and not _check_forward_ad(
        func, inputs, diff_inputs, numeric, outputs, rtol, atol, raise_exception
    ):
        return False
    if not check_backward_ad:
        return True
    for j, out in enumerate(outputs):
        for v in ([1.0, 1j] if out.is_complex() else [1.0]):
            rows = _analytical_vjp_rows(func, inputs, diff_inputs, j, v)
            for a_idx, inp in enumerate(diff_inputs):
                dx, dy = numeric[a_idx]
                expected = np.zeros((inp.numel(), out.numel()), dtype=np.complex128)
                for k in range(inp.numel()):
                    expected[k] = np.real(np.conj(v) * dx[k][j])
                    if dy[k] is not None:
                        expected[k] = expected[k] + 1j * np.real(np.conj(v) * dy[k][j])
                got = np.zeros_like(expected)
                for m in range(out.numel()):
                    got[:, m] = rows[m][a_idx]
                if not np.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True):
                    msg = (
                        f"Jacobian mismatch for output {j} with respect to input {a_idx} "
                        f"(grad_output {v}),\nnumerical:{expected}\nanalytical:{got}\n"
                    )
                    if raise_exception:
                        raise GradcheckError(msg)
                    return False
    return True


def gradgradcheck(
    func,
    inputs,
    grad_outputs=None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """gradcheck of the first derivative: checks second derivatives (create_graph=True)."""
    inputs = _as_tuple(inputs)
    outputs = _differentiable_outputs(func(*inputs))
    if grad_outputs is None:
        gen = np.random.default_rng(0)
        grad_outputs = tuple(
            ember.tensor(gen.standard_normal(tuple(o.shape)), dtype=o.dtype).requires_grad_()
            for o in outputs
        )
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)

    def first_derivative(*args):
        ins, gos = args[:n_in], args[n_in:]
        pairs = [(o, go) for o, go in zip(_differentiable_outputs(func(*ins)), gos)
                 if o.requires_grad]
        diff = [i for i in ins if isinstance(i, ember.Tensor) and i.requires_grad]
        grads = ember.autograd.grad([o for o, _ in pairs], diff, [go for _, go in pairs],
                                    create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        first_derivative,
        inputs + grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
    )
