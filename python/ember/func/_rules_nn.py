"""Batching rules of ember.func.vmap for products, linear layers, losses, autograd and forward
AD (the rest, and the dispatch, are in _rules.py)."""

from __future__ import annotations

import re

import ember
from ember.func._batched import unwrap, wrap
from ember.func._rules import _Call, _fallback, _materialize, _pad, _pointwise, _rebuild_tuple

# ---- matmul, linear -------------------------------------------------------------------------


def _matmul(call):
    a, b = call.args[0], call.args[1]
    va, vb = unwrap(a, call.level), unwrap(b, call.level)
    la = va.dim() - 1 if va is not None else a.dim()
    lb = vb.dim() - 1 if vb is not None else b.dim()
    if call.op == "bmm" and (la != 3 or lb != 3):
        raise RuntimeError(f"batch1 must be a 3D tensor, got {la}-D and {lb}-D tensors")
    if call.op == "mm" and (la != 2 or lb != 2):
        raise RuntimeError(f"mm: self must be a matrix, got {la}-D and {lb}-D tensors")
    if call.op == "mv" and (la != 2 or lb != 1):
        raise RuntimeError(f"mv: expected a matrix and a vector, got {la}-D and {lb}-D tensors")
    if call.op == "dot" and (la != 1 or lb != 1):
        raise RuntimeError(f"1D tensors expected, but got {la}D and {lb}D tensors")
    if la == 0 or lb == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D")
    bsz = call.batch_size
    # One plain matrix against batched vectors or matrices: a single (folded) GEMM.
    if va is not None and vb is None and b.dim() <= 2:
        return wrap(ember.matmul(va, b), call.level)
    if va is None and vb is not None and la == 2 and lb == 1:
        return wrap(ember.matmul(vb, a.transpose(0, 1)), call.level)
    if va is None and vb is not None and la == 1 and lb >= 2:
        return wrap(ember.matmul(a, vb), call.level)
    # Every operand as (batch-first value, logical rank); an unbatched one gets a batch of 1.
    x = va if va is not None else a.unsqueeze(0)
    y = vb if vb is not None else b.unsqueeze(0)
    if la == 1 and lb == 1:
        return wrap((x * y).sum(-1).expand(bsz), call.level)
    if la == 1:
        x = x.unsqueeze(-2)
    if lb == 1:
        y = y.unsqueeze(-1)
    r = max(x.dim(), y.dim()) - 1
    out = ember.matmul(_pad(x, r), _pad(y, r))
    if la == 1:
        out = out.squeeze(-2)
    if lb == 1:
        out = out.squeeze(-1)
    if out.shape[0] != bsz:
        out = out.expand((bsz,) + tuple(out.shape[1:]))
    return wrap(out, call.level)


class _ExpandedLinear(ember.autograd.Function):
    """linear with one weight per sample that is the same for every sample (an expanded leaf,
    as grad-under-vmap makes for per-sample gradients): the forward is one product with the
    shared weight, the backward gives each sample its own weight gradient."""

    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight[0])
        ctx.has_bias = bias is not None
        return ember.nn.functional.linear(x, weight[0], None if bias is None else bias[0])

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        b = x.shape[0]
        g2 = grad.reshape(b, -1, grad.shape[-1])
        x2 = x.reshape(b, -1, x.shape[-1])
        # The first layer's input is data, not a parameter: its gradient is not wanted.
        grad_x = grad @ w if ctx.needs_input_grad[0] else None
        if not ctx.needs_input_grad[1]:
            grad_w = None
        elif g2.shape[1] == 1:  # one row per sample: an outer product, memory-bound
            grad_w = g2.transpose(1, 2) * x2
        else:
            grad_w = ember.bmm(g2.transpose(1, 2), x2)
        grad_b = g2.sum(1) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return grad_x, grad_w, grad_b


def _is_expanded(v):
    return v is not None and v.dim() >= 1 and v.stride(0) == 0


def _linear(call):
    x, w = call.args[0], call.args[1]
    bias = call.args[2] if len(call.args) > 2 else None
    vx, vw = unwrap(x, call.level), unwrap(w, call.level)
    vb = unwrap(bias, call.level) if isinstance(bias, ember.Tensor) else None
    if vw is None and vb is None:
        return wrap(ember.nn.functional.linear(vx, w, bias), call.level)
    xb = _materialize(x, call)
    if _is_expanded(vw) and (bias is None or _is_expanded(vb)) and vx is not None:
        return wrap(_ExpandedLinear.apply(xb, vw, vb), call.level)
    wb = _materialize(w, call)
    squeeze = xb.dim() == 2
    x3 = xb.unsqueeze(1) if squeeze else xb
    out = ember.matmul(
        _pad(x3, max(x3.dim(), 3) - 1),
        wb.transpose(-1, -2).unsqueeze(1) if x3.dim() > 3 else wb.transpose(-1, -2),
    )
    if bias is not None:
        bb = _materialize(bias, call)
        out = out + _pad(bb, out.dim() - 2).reshape(
            (bb.shape[0],) + (1,) * (out.dim() - 2) + (bb.shape[-1],)
        )
    return wrap(out.squeeze(1) if squeeze else out, call.level)


# ---- losses ---------------------------------------------------------------------------------


def _reduce_per_sample(loss, reduction, level, denom=None):
    if reduction == "none":
        return wrap(loss, level)
    dims = tuple(range(1, loss.dim()))
    total = loss.sum(dims) if dims else loss
    if reduction == "sum":
        return wrap(total, level)
    if denom is None:
        n = 1
        for s in loss.shape[1:]:
            n *= s
        return wrap(total / max(n, 1), level)
    return wrap(total / denom, level)


def _reduction_of(call):
    r = call.get("reduction", default="mean")
    if isinstance(r, int):  # the C++ enum: 0 none, 1 mean, 2 sum
        r = {0: "none", 1: "mean", 2: "sum"}[r]
    return r


def _elementwise_loss(call):
    reduction = _reduction_of(call)
    i = call.index("reduction")
    args = list(call.args)
    if i is None:
        return _fallback(call)
    args[i] = "none" if isinstance(call.args[i], str) else 0
    sub = _Call(call.op, call.is_method, args, call.names, call.kwargs, call.binding, call.level)
    per_elem = _pointwise(sub)
    return _reduce_per_sample(per_elem._bv, reduction, call.level)


def _nll_like(call):
    """cross_entropy / nll_loss: the batch folded into the N dim, then reduced per sample."""
    inp, target = call.args[0], call.args[1]
    vi = _materialize(inp, call)
    vt = _materialize(target, call)
    bsz = vi.shape[0]
    logical = vi.dim() - 1
    reduction = _reduction_of(call)
    if logical == 1:  # (C,) with a scalar target
        flat_in, flat_t = vi, vt.reshape(bsz)
    else:
        flat_in = vi.reshape((bsz * vi.shape[1],) + tuple(vi.shape[2:]))
        flat_t = vt.reshape((bsz * vt.shape[1],) + tuple(vt.shape[2:]))
        if vt.is_floating_point() and vt.shape == vi.shape:  # class probabilities
            flat_t = vt.reshape(flat_in.shape)
    args = list(call.args)
    args[0], args[1] = flat_in, flat_t
    i = call.index("reduction")
    args[i] = "none" if isinstance(call.args[i], str) else 0
    per = call.invoke(args)
    per = per.reshape(
        (bsz,)
        + tuple(
            vt.shape[1:]
            if not (vt.is_floating_point() and vt.shape == vi.shape)
            else (vi.shape[1:2] + vi.shape[3:] if logical > 1 else ())
        )
    )
    if reduction != "mean":
        return _reduce_per_sample(per, reduction, call.level)
    weight = call.get("weight")
    ignore = call.get("ignore_index", default=-100)
    if vt.is_floating_point():
        return _reduce_per_sample(per, "mean", call.level)
    valid = vt != ignore
    if weight is not None:
        w = weight[vt.clamp(0, weight.shape[0] - 1)] * valid
    else:
        w = valid.to(per.dtype)
    dims = tuple(range(1, w.dim()))
    denom = w.sum(dims) if dims else w
    return _reduce_per_sample(per, "mean", call.level, denom)


def _run_backward(call):
    """autograd inside vmap. When every output and every differentiated input is batched, one
    backward of the batched values gives every sample's gradient (the samples are independent).
    Otherwise (a batched cotangent through an unbatched graph, as vmap over a vjp function; or
    gradients of batched outputs with respect to an unbatched tensor, as jacrev inside vmap)
    each sample gets its own backward, with the graph kept until the last."""
    outputs, grads, keep, create, inputs = call.args[:5]
    rest = list(call.args[5:])
    level, bsz = call.level, call.batch_size
    out_b = [unwrap(o, level) for o in outputs]
    grad_b = [unwrap(g, level) if g is not None else None for g in grads]
    in_b = [unwrap(x, level) for x in inputs]
    phys_out = [v if v is not None else o for v, o in zip(out_b, outputs)]
    phys_in = [v if v is not None else x for v, x in zip(in_b, inputs)]
    if all(v is not None for v in out_b) and all(v is not None for v in in_b):
        phys_grads = [_materialize(g, call) if g is not None else None for g in grads]
        result = call.invoke([phys_out, phys_grads, keep, create, phys_in, *rest])
        return [None if r is None else wrap(r, level) for r in result]
    per_sample = []
    for i in range(bsz):
        outs_i = [v[i] if v is not None else o for v, o in zip(out_b, outputs)]
        grads_i = [gv[i] if gv is not None else g for gv, g in zip(grad_b, grads)]
        keep_i = keep or i < bsz - 1
        r = call.invoke([outs_i, grads_i, keep_i, create, phys_in, *rest])
        per_sample.append(
            [None if g is None else (g[i] if v is not None else g) for g, v in zip(r, in_b)]
        )
    result = []
    for j, x in enumerate(inputs):
        column = [s[j] for s in per_sample]
        if all(c is None for c in column):
            result.append(None)
            continue
        like = in_b[j][0] if in_b[j] is not None else x
        result.append(
            wrap(ember.stack([ember.zeros_like(like) if c is None else c for c in column]), level)
        )
    return result


def _make_dual(call):
    """Forward AD with a batch of tangents (jacfwd): the primal is expanded over the batch."""
    primal, tangent = call.args[0], call.args[1]
    args = list(call.args)
    # Contiguous: the tangent takes the primal's layout, which an expanded (stride-0) primal
    # cannot give it.
    args[0] = _materialize(primal, call).contiguous()
    args[1] = _materialize(tangent, call)
    return wrap(call.invoke(args), call.level)


def _unpack_dual(call):
    primal, tangent = call.invoke([unwrap(call.args[0], call.level)] + list(call.args[1:]))
    return (wrap(primal, call.level), None if tangent is None else wrap(tangent, call.level))


def _broadcast_tensors(call):
    tensors = []
    for a in call.args:
        tensors.extend(a if isinstance(a, (list, tuple)) else [a])
    shapes = [tuple(t.shape) for t in tensors]  # the samples' shapes
    rank = max(len(sh) for sh in shapes)
    target = []
    for k in range(rank):
        sizes = {sh[k - rank + len(sh)] for sh in shapes if k - rank + len(sh) >= 0} - {1}
        if len(sizes) > 1:
            raise RuntimeError(
                f"The size of tensor a must match the size of tensor b at "
                f"non-singleton dimension {k}: shapes {shapes}"
            )
        target.append(sizes.pop() if sizes else 1)
    out = []
    for t in tensors:
        v = _materialize(t, call)
        out.append(wrap(_pad(v, rank).expand((v.shape[0],) + tuple(target)), call.level))
    return out


class _ExpandedConv2d(ember.autograd.Function):
    """conv2d with one weight per sample that is the same for every sample (the expanded leaf
    grad-under-vmap makes): one convolution over the folded batch forward; backward, the input
    gradient by the convolution's own backward and each sample's weight gradient from im2col
    columns (one batched product)."""

    @staticmethod
    def forward(ctx, x, weight, bias, batch, stride, padding, dilation):
        ctx.save_for_backward(x, weight[0])
        ctx.conf = (batch, stride, padding, dilation, bias is not None)
        return ember.nn.functional.conv2d(
            x, weight[0], None if bias is None else bias[0], stride, padding, dilation
        )

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        batch, stride, padding, dilation, has_bias = ctx.conf
        with ember.enable_grad():
            leaf = x.detach().requires_grad_()
            y = ember.nn.functional.conv2d(leaf, w, None, stride, padding, dilation)
            (grad_x,) = ember.autograd.grad(y, leaf, grad)
        out_ch, in_ch, kh, kw = w.shape
        cols = ember.nn.functional.unfold(
            x, (kh, kw), dilation=dilation, padding=padding, stride=stride
        )  # [B*N, C*kh*kw, L]
        rows = grad.reshape(grad.shape[0], out_ch, -1)  # [B*N, O, L]
        per_row = ember.bmm(rows, cols.transpose(1, 2))  # [B*N, O, C*kh*kw]
        n = per_row.shape[0] // batch
        grad_w = per_row.reshape(batch, n, out_ch, in_ch * kh * kw).sum(1)
        grad_w = grad_w.reshape(batch, out_ch, in_ch, kh, kw)
        grad_b = grad.reshape(batch, n, out_ch, -1).sum((1, 3)) if has_bias else None
        return grad_x, grad_w, grad_b, None, None, None, None


def _expanded_conv2d(call, v, logical):
    weight = unwrap(call.args[1], call.level)
    bias = call.args[2] if len(call.args) > 2 else None
    vb = unwrap(bias, call.level) if isinstance(bias, ember.Tensor) else None
    stride, padding, dilation, groups = (
        call.get("stride"),
        call.get("padding"),
        call.get("dilation"),
        call.get("groups", default=1),
    )
    if (
        not _is_expanded(weight)
        or groups != 1
        or isinstance(padding, str)
        or (bias is not None and not _is_expanded(vb))
    ):
        return None
    b = v.shape[0]
    folded = v if logical == 3 else v.reshape((b * v.shape[1],) + tuple(v.shape[2:]))
    out = _ExpandedConv2d.apply(folded, weight, vb, b, stride, padding, dilation)
    if logical == 4:
        out = out.reshape((b, v.shape[1]) + tuple(out.shape[1:]))
    return wrap(out, call.level)


def _spatial(call):
    """conv / pooling over an (N, C, *spatial) or (C, *spatial) sample: the batch is folded into
    N (or is N itself), one call for the whole batch. A batched weight falls back."""
    found = re.search(r"(\d)d", call.op)
    spatial = int(found.group(1)) if found else None
    x = call.args[0]
    v = unwrap(x, call.level)
    others = [a for a in call.args[1:] if isinstance(a, ember.Tensor)]
    if spatial is None or v is None:
        return _fallback(call)
    logical = v.dim() - 1
    if any(unwrap(a, call.level) is not None for a in others):
        if call.op == "conv2d" and logical in (3, 4):
            done = _expanded_conv2d(call, v, logical)
            if done is not None:
                return done
        return _fallback(call)
    args = list(call.args)
    if logical == spatial + 1:  # an unbatched-form sample: the vmap batch is N
        args[0] = v
        return _wrap_tree(call.invoke(args), call.level, None)
    if logical != spatial + 2:
        return _fallback(call)
    b, n = v.shape[0], v.shape[1]
    args[0] = v.reshape((b * n,) + tuple(v.shape[2:]))
    return _wrap_tree(call.invoke(args), call.level, (b, n))


def _wrap_tree(out, level, unfold):
    if isinstance(out, tuple):
        return _rebuild_tuple(out, [_wrap_tree(o, level, unfold) for o in out])
    if not isinstance(out, ember.Tensor):
        return out
    if unfold is not None:
        out = out.reshape(unfold + tuple(out.shape[1:]))
    return wrap(out, level)
