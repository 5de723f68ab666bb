"""Shrinking a one-call reproducer: fewer arguments, smaller and contiguous tensors, as long as
the call still crashes (or hangs) the same way. Makes corpus files short enough to read."""

from __future__ import annotations

import copy
import json

from .spec import numel


def _tensor_variants(t: dict):
    """Simpler versions of tensor spec t, simplest first."""
    if t.get("l", "C") != "C":
        yield dict(t, l="C")
    if t.get("g"):
        yield {k: v for k, v in t.items() if k != "g"}
    shape = t["s"]
    if numel(shape) > 1:
        small = [min(s, 1) for s in shape]
        yield dict(t, s=small, v=t["v"][: numel(small)])
        small = [min(s, 2) for s in shape]
        if small != shape:
            yield dict(t, s=small, v=t["v"][: numel(small)])
    if len(shape) > 1:
        yield dict(t, s=shape[1:], v=t["v"][: numel(shape[1:])])


def _value_slots(call: dict):
    """(container, key) of every argument value, one level into lists and tuples."""
    for box in (call["args"], call["kwargs"], call.get("ctor", []), call.get("ckw", {})):
        keys = range(len(box)) if isinstance(box, list) else list(box)
        for k in keys:
            yield box, k
            v = box[k]
            if isinstance(v, dict) and ("list" in v or "tuple" in v):
                items = v.get("list", v.get("tuple"))
                for j in range(len(items)):
                    yield items, j


def variants(call: dict):
    """Simpler calls than `call`: one change each."""
    for key in list(call["kwargs"]):
        c = copy.deepcopy(call)
        del c["kwargs"][key]
        yield c
    min_args = 1 if call["fn"].startswith("Tensor.") else 0
    if len(call["args"]) > min_args and '"ref"' not in json.dumps(call):
        c = copy.deepcopy(call)
        c["args"].pop()
        yield c
    n = len(list(_value_slots(call)))
    for i in range(n):
        box, k = list(_value_slots(call))[i]
        v = box[k]
        if not (isinstance(v, dict) and "tensor" in v):
            continue
        for t in _tensor_variants(v["tensor"]):
            c = copy.deepcopy(call)
            cbox, ck = list(_value_slots(c))[i]
            cbox[ck] = {"tensor": t}
            yield c


def shrink(run_one, call: dict, budget: int = 16):
    """The simplest variant of call for which run_one(call) is still True (it reproduces), and the
    number of runs spent. Greedy: take the first simpler variant that reproduces, repeat."""
    runs = 0
    progress = True
    while progress and runs < budget:
        progress = False
        for c in variants(call):
            if runs >= budget:
                break
            runs += 1
            if run_one(c):
                call, progress = c, True
                break
    return call, runs
