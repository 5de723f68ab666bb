"""Join for uneven inputs, as torch.distributed.algorithms.Join: a context manager over
Joinables (here DistributedDataParallel), each of which knows how to shadow the collectives of
the ranks still running once its own rank has run out of inputs."""

from __future__ import annotations

import contextlib


class JoinHook:
    def main_hook(self):
        pass

    def post_hook(self, is_last_joiner: bool):
        pass


class Joinable:
    """Something a Join manages: it gives the context a ``join`` of its own."""


class Join:
    """``with Join([ddp_model]): ...`` runs each DDP model's ``join()`` context around the
    block (DDP is the Joinable Ember has)."""

    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        if not joinables:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = list(joinables)
        self._enable, self._throw = enable, throw_on_early_termination
        self._stack = None

    def __enter__(self):
        self._stack = contextlib.ExitStack()
        for j in self._joinables:
            if not hasattr(j, "join"):
                raise TypeError(f"{type(j).__name__} is not joinable")
            self._stack.enter_context(j.join(enable=self._enable,
                                             throw_on_early_termination=self._throw))
        return self

    def __exit__(self, *exc):
        return self._stack.__exit__(*exc)
