"""BatchedTensor and the vmap levels: the state behind ember.func.vmap.

A BatchedTensor stands, inside a vmapped function, for one sample of a batch. It is an
ember.Tensor subclass (so type checks accept it) whose own data is a detached alias of the
batched value; the real value, with the batch as dim 0, is ``_bv``, and the vmap level it
belongs to is ``_bl``. While a vmap runs, every binding call that receives a BatchedTensor is
handed to ``_rules.handle`` (Note [Batching through the observer] in
csrc/bindings/op_observer.cpp), which applies the op's batching rule to the real values.
"""

from __future__ import annotations

import threading

import ember
from ember._C import _profiler as _hooks


class BatchedTensor(ember.Tensor):
    """One sample's view of a batched value (see the module docstring)."""

    def __new__(cls, value, level):
        shell = ember.Tensor._make_subclass(cls, _plain(value), False)
        shell._bv = value
        shell._bl = level
        return shell

    def __init__(self, value, level):
        pass

    # ember.Tensor's dim / numel / shape are hand-written descriptors that no binding hook sees:
    # the sample's answers are given here.
    @property
    def shape(self):
        return ember.Size(tuple(self._bv.shape)[1:])

    def dim(self):
        return self._bv.dim() - 1

    def numel(self):
        n = 1
        for s in tuple(self._bv.shape)[1:]:
            n *= s
        return n

    def __repr__(self):
        return f"BatchedTensor(lvl={self._bl}, bdim=0, value=\n{ember.Tensor.__repr__(self._bv)})"

    __str__ = __repr__


def _plain(value):
    """The innermost real tensor of a (possibly nested) batched value, for the shell's data."""
    while isinstance(value, BatchedTensor):
        value = value._bv
    return value


class _State(threading.local):
    def __init__(self):
        self.levels = []  # (level id, batch size, randomness), innermost last


_state = _State()
_lock = threading.Lock()
_active = 0  # vmaps running in the process: the handler is installed while > 0
_next_level = 0


def enter_level(batch_size: int, randomness: str) -> int:
    global _active, _next_level
    from ember.func import _rules

    with _lock:
        level = _next_level
        _next_level += 1
        if _active == 0:
            _hooks._set_batch_handler(_rules.handle, BatchedTensor, _rules.RANDOM_OPS)
        _active += 1
    _state.levels.append((level, batch_size, randomness))
    return level


def exit_level(level: int) -> None:
    global _active
    assert _state.levels and _state.levels[-1][0] == level
    _state.levels.pop()
    with _lock:
        _active -= 1
        if _active == 0:
            _hooks._set_batch_handler(None, None)


def level_info(level: int):
    """(batch size, randomness) of an open level."""
    for lvl, size, randomness in _state.levels:
        if lvl == level:
            return size, randomness
    raise RuntimeError(f"vmap: level {level} is not active (a BatchedTensor escaped its vmap)")


def open_levels():
    """(level id, batch size, randomness) of this thread's open levels, innermost last."""
    return list(_state.levels)


def current_level():
    """The innermost open level on this thread, or None."""
    return _state.levels[-1][0] if _state.levels else None


def wrap(value, level):
    return BatchedTensor(value, level)


def unwrap(x, level):
    """x's value with the batch at dim 0 if x is batched at ``level``, else None."""
    if isinstance(x, BatchedTensor) and x._bl == level:
        return x._bv
    return None
