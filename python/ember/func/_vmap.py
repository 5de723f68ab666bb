"""ember.func.vmap: a function of one sample run on a whole batch, by batching rules."""

from __future__ import annotations

import functools

import ember
from ember.func import _batched


def _flatten(tree):
    from ember.func import _flatten as flatten

    return flatten(tree)


def _in_dims_for(in_dims, args):
    """in_dims broadcast to the flattened args: one entry (int or None) per leaf."""
    if isinstance(in_dims, int) or in_dims is None:
        return [in_dims] * len(_flatten(args)[0])
    if not isinstance(in_dims, tuple):
        raise ValueError(
            f"vmap(f, in_dims={in_dims}, ...): expected `in_dims` to be int or a "
            f"(potentially nested) tuple matching the structure of inputs, got: "
            f"{type(in_dims)}."
        )
    if len(in_dims) != len(args):
        raise ValueError(
            f"vmap(f, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible "
            f"with the structure of `inputs`. in_dims has structure of "
            f"{len(in_dims)} entries but inputs has {len(args)}."
        )
    out = []
    for d, a in zip(in_dims, args):
        leaves = _flatten(a)[0]
        if isinstance(d, int) or d is None:
            out.extend([d] * len(leaves))
        elif isinstance(d, (tuple, list)) and isinstance(a, (tuple, list)) and len(d) == len(a):
            out.extend(_in_dims_for(tuple(d), tuple(a)))
        elif isinstance(d, dict) and isinstance(a, dict):
            out.extend(_in_dims_for(tuple(d[k] for k in a), tuple(a.values())))
        else:
            raise ValueError(
                f"vmap(f, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
                "compatible with the structure of `inputs`."
            )
    return out


def _batch_size(leaves, dims):
    sizes = []
    for x, d in zip(leaves, dims):
        if d is None:
            continue
        if not isinstance(x, ember.Tensor):
            raise ValueError(
                f"vmap(f, in_dims=..., ...)(<inputs>): Got in_dim={d} for an input "
                f"but the input is of type {type(x)}. We cannot vmap over "
                "non-Tensor arguments, please use None as the respective in_dim"
            )
        if x.dim() == 0 or not -x.dim() <= d < x.dim():
            raise ValueError(
                f"vmap(f, in_dims=..., ...)(<inputs>): Got in_dim={d} for some input, "
                f"but that input is a Tensor of dimensionality {x.dim()} so expected "
                f"in_dim to satisfy -{x.dim()} <= in_dim < {x.dim()}."
            )
        sizes.append(x.shape[d])
    if not sizes:
        raise ValueError(
            "vmap(f, in_dims=..., ...)(<inputs>): at least one input must be a "
            "Tensor vmapped over (in_dims all None)"
        )
    if any(s != sizes[0] for s in sizes):
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped "
            f"dimension, got sizes {sizes} for the mapped dimension"
        )
    return sizes[0]


def _run(func, args, kwargs, in_dims, out_dims, randomness):
    leaves, rebuild = _flatten(args)
    dims = _in_dims_for(in_dims, args)
    size = _batch_size(leaves, dims)
    level = _batched.enter_level(size, randomness)
    try:
        batched = [
            x if d is None else _batched.wrap(x.movedim(d, 0) if d % x.dim() else x, level)
            for x, d in zip(leaves, dims)
        ]
        out = func(*rebuild(batched), **kwargs)
        out_leaves, out_rebuild = _flatten(out)
        if isinstance(out_dims, int) or out_dims is None:
            o_dims = [out_dims] * len(out_leaves)
        else:
            o_dims = _in_dims_for(out_dims, out if isinstance(out, tuple) else (out,))
        results = []
        for o, d in zip(out_leaves, o_dims):
            if not isinstance(o, ember.Tensor):
                raise ValueError(
                    f"vmap({getattr(func, '__name__', 'f')}, ...): `"
                    f"{getattr(func, '__name__', 'f')}` must only return Tensors, got "
                    f"type {type(o)}. Did you mean to set out_dims= to None for "
                    "output?"
                )
            v = _batched.unwrap(o, level)
            if d is None:
                if v is not None:
                    raise ValueError("vmap: out_dims=None for an output that is batched")
                results.append(o)
                continue
            if v is None:  # does not depend on the batch: the same value for every sample
                v = o.unsqueeze(0).expand((size,) + tuple(o.shape))
            results.append(v.movedim(0, d) if d % v.dim() else v)
        return out_rebuild(results)
    finally:
        _batched.exit_level(level)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``vmap(f)(x)``: f applied to every slice of x along in_dims, computed batched.

    Ops run through batching rules on the whole batch; an op without a rule runs once per
    sample (ember.func._rules.FALLBACK_COUNTS counts them). ``randomness`` is 'error' (random
    ops on batched inputs raise), 'different' or 'same'.
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or "
            f"'same'. Got {randomness}"
        )
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        if chunk_size is None:
            return _run(func, args, kwargs, in_dims, out_dims, randomness)
        leaves, rebuild = _flatten(args)
        dims = _in_dims_for(in_dims, args)
        size = _batch_size(leaves, dims)
        if chunk_size >= size:
            return _run(func, args, kwargs, in_dims, out_dims, randomness)
        pieces = []
        for start in range(0, size, chunk_size):
            n = min(chunk_size, size - start)
            chunk = [x if d is None else x.narrow(d, start, n) for x, d in zip(leaves, dims)]
            pieces.append(_run(func, rebuild(chunk), kwargs, in_dims, out_dims, randomness))
        first_leaves, out_rebuild = _flatten(pieces[0])
        all_leaves = [_flatten(p)[0] for p in pieces]
        if isinstance(out_dims, int) or out_dims is None:
            o_dims = [out_dims] * len(first_leaves)
        else:
            o_dims = _in_dims_for(
                out_dims, pieces[0] if isinstance(pieces[0], tuple) else (pieces[0],)
            )
        merged = [
            all_leaves[0][j]
            if o_dims[j] is None
            else ember.cat([p[j] for p in all_leaves], o_dims[j])
            for j in range(len(first_leaves))
        ]
        return out_rebuild(merged)

    return wrapped
