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
    return tuple(o for o in _as_tuple(out) if isinstance(o, ember.Tensor) and o.requires_grad)


def _numerical_jacobian(fn, inputs, eps):
    """J[i][j]: d out_j / d in_i as numpy arrays of shape (in_i.numel(), out_j.numel())."""
    base = [o.detach().clone() for o in _as_tuple(fn(*inputs)) if isinstance(o, ember.Tensor)]
    jac = []
    for inp in inputs:
        if not (isinstance(inp, ember.Tensor) and inp.requires_grad):
            jac.append(None)
            continue
        rows = []
        flat = inp.detach().view(-1) if inp.is_contiguous() else None
        data = inp.detach()
        for k in range(inp.numel()):
            idx = np.unravel_index(k, tuple(inp.shape)) if inp.dim() else ()
            perturbs = [eps, 1j * eps] if inp.is_complex() else [eps]
            row = []
            for d in perturbs:
                # fn runs with grad mode as the caller has it: gradgradcheck's fn itself calls
                # autograd.grad.
                orig = data[idx].item() if inp.dim() else data.item()
                _set(data, idx, orig + d)
                plus = [o.detach().clone() for o in _as_tuple(fn(*inputs))
                        if isinstance(o, ember.Tensor)]
                _set(data, idx, orig - d)
                minus = [o.detach().clone() for o in _as_tuple(fn(*inputs))
                         if isinstance(o, ember.Tensor)]
                _set(data, idx, orig)
                row.append([((p - m) / (2 * eps)).numpy().reshape(-1) for p, m in zip(plus, minus)])
            if inp.is_complex():
                # Wirtinger: conj(dF/dz) combined as PyTorch does: dr + 1j * di per output.
                row = [r + 1j * i for r, i in zip(row[0], row[1])]
            else:
                row = row[0]
            rows.append(row)
        del flat
        jac.append(rows)
    return jac, base


def _set(t, idx, value):
    if t.dim():
        t[idx] = value
    else:
        t.fill_(value)


def _analytical_jacobian(fn, inputs, out_index):
    outputs = _differentiable_outputs(fn(*inputs))
    diff_inputs = [i for i in inputs if isinstance(i, ember.Tensor) and i.requires_grad]
    out = outputs[out_index]
    rows = []
    for k in range(out.numel()):
        g = ember.zeros_like(out)
        g.view(-1)[k] = 1.0
        grads = ember.autograd.grad(out, diff_inputs, g, retain_graph=True, allow_unused=True)
        rows.append([
            np.zeros(i.numel(), dtype=np.complex128 if i.is_complex() else np.float64)
            if gr is None else gr.detach().numpy().reshape(-1).astype(np.complex128 if i.is_complex() else np.float64)
            for gr, i in zip(grads, diff_inputs)
        ])
    return rows


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
    fast_mode: bool = False,
    masked=None,
) -> bool:
    """True when ``func``'s analytical gradients match central finite differences."""
    inputs = _as_tuple(inputs)
    for i in inputs:
        if isinstance(i, ember.Tensor) and i.requires_grad and i.dtype not in (
            ember.float64, ember.complex128
        ):
            import warnings

            warnings.warn(
                "Input #0 requires gradient and is not a double precision floating point or "
                "complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex.",
                stacklevel=2,
            )
            break
    outputs = _differentiable_outputs(func(*inputs))
    diff_inputs = [i for i in inputs if isinstance(i, ember.Tensor) and i.requires_grad]
    if not diff_inputs:
        raise ValueError("gradcheck expects at least one input tensor to require gradient")
    numerical, _ = _numerical_jacobian(func, inputs, eps)
    numerical = [n for n, i in zip(numerical, inputs) if n is not None]
    for j, out in enumerate(outputs):
        analytical = _analytical_jacobian(func, inputs, j)  # [out_elem][input] -> vec
        for a_idx, inp in enumerate(diff_inputs):
            num = np.array([numerical[a_idx][k][j] for k in range(inp.numel())]).reshape(
                inp.numel(), out.numel()
            ) if inp.numel() and out.numel() else np.zeros((inp.numel(), out.numel()))
            ana = np.array([analytical[m][a_idx] for m in range(out.numel())]).T.reshape(
                inp.numel(), out.numel()
            ) if inp.numel() and out.numel() else np.zeros((inp.numel(), out.numel()))
            if out.is_complex() or inp.is_complex():
                num = np.conj(num) if inp.is_complex() else num
            if not np.allclose(ana, num, rtol=rtol, atol=atol, equal_nan=True):
                msg = (
                    f"Jacobian mismatch for output {j} with respect to input {a_idx},\n"
                    f"numerical:{num}\nanalytical:{ana}\n"
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
        outs = _differentiable_outputs(func(*ins))
        diff = [i for i in ins if isinstance(i, ember.Tensor) and i.requires_grad]
        grads = ember.autograd.grad(outs, diff, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        first_derivative,
        inputs + grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
    )
