"""functional_call and stack_module_state (``torch.func``): a module run with other tensors in
place of its parameters and buffers, and the parameters of several models stacked."""

from __future__ import annotations

import contextlib

import ember


def _resolve(module, name):
    """(owning submodule, attribute name) for a dotted name such as 'layer.0.weight'."""
    *path, leaf = name.split(".")
    owner = module
    for part in path:
        owner = getattr(owner, part)
    return owner, leaf


@contextlib.contextmanager
def _swapped(module, tensors: dict, strict: bool):
    """Temporarily replaces module's parameters/buffers (by dotted name) with ``tensors``."""
    known = dict(module.named_parameters(remove_duplicate=False))
    known.update(dict(module.named_buffers(remove_duplicate=False)))
    if strict:
        missing = sorted(set(known) - set(tensors))
        unexpected = sorted(set(tensors) - set(known))
        if missing or unexpected:
            raise RuntimeError(
                f"Error(s) in reparametrizing for {type(module).__name__}: Missing key(s): "
                f"{missing}. Unexpected key(s): {unexpected}."
            )
    saved = []
    try:
        for name, value in tensors.items():
            owner, leaf = _resolve(module, name)
            if leaf in owner._parameters:
                saved.append((owner, "_parameters", leaf, owner._parameters[leaf]))
                owner._parameters[leaf] = value
            elif leaf in owner._buffers:
                saved.append((owner, "_buffers", leaf, owner._buffers[leaf]))
                owner._buffers[leaf] = value
            else:
                had = leaf in owner.__dict__
                saved.append((owner, None, leaf, owner.__dict__.get(leaf) if had else _MISSING))
                object.__setattr__(owner, leaf, value)
        yield
    finally:
        for owner, where, leaf, old in reversed(saved):
            if where is not None:
                getattr(owner, where)[leaf] = old
            elif old is _MISSING:
                object.__delattr__(owner, leaf)
            else:
                object.__setattr__(owner, leaf, old)


_MISSING = object()


def functional_call(
    module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False
):
    """Calls ``module(*args, **kwargs)`` with the given tensors in place of its parameters and
    buffers (the module's own are restored afterwards)."""
    if isinstance(parameter_and_buffer_dicts, dict):
        tensors = dict(parameter_and_buffer_dicts)
    else:
        tensors = {}
        for d in parameter_and_buffer_dicts:
            overlap = set(tensors) & set(d)
            if overlap:
                raise ValueError(
                    f"{sorted(overlap)} appeared in multiple dictionaries; behavior "
                    "of functional call is ambiguous"
                )
            tensors.update(d)
    if tie_weights:
        # A tensor shared under several names (tied weights) follows whichever name was given.
        by_id = {}
        for name, p in list(module.named_parameters(remove_duplicate=False)) + list(
            module.named_buffers(remove_duplicate=False)
        ):
            by_id.setdefault(id(p), []).append(name)
        for names in by_id.values():
            given = [n for n in names if n in tensors]
            if given:
                values = {id(tensors[n]) for n in given}
                if len(values) > 1:
                    raise ValueError(
                        f"functional_call got multiple values for keys {given}, "
                        "which are tied. Consider using tie_weights=False"
                    )
                for n in names:
                    tensors.setdefault(n, tensors[given[0]])
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, tensors, strict):
        return module(*args, **(kwargs or {}))


def stack_module_state(models):
    """(params, buffers): each model's parameters and buffers stacked along a new first dim.
    The stacked parameters are new leaves that require grad (as PyTorch's)."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    first = type(models[0])
    if not all(type(m) is first for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = {
        name: ember.stack(
            [dict(m.named_parameters())[name].detach() for m in models]
        ).requires_grad_(p.requires_grad)
        for name, p in models[0].named_parameters()
    }
    buffers = {
        name: ember.stack([dict(m.named_buffers())[name] for m in models])
        for name, _ in models[0].named_buffers()
    }
    return params, buffers
