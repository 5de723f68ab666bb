"""Grad-mode context managers and decorators, as ``torch.autograd.grad_mode``."""

from __future__ import annotations

import functools
import inspect

from ember._C import _autograd as _ag

__all__ = [
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
]


def is_grad_enabled() -> bool:
    return _ag.is_grad_enabled()


def is_inference_mode_enabled() -> bool:
    return _ag.is_inference_mode_enabled()


class _DecoratorContextManager:
    """A context manager that also works as a decorator (a fresh instance per call)."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise RuntimeError(f"{type(self).__name__} cannot decorate a class")
        if inspect.isgeneratorfunction(func):

            @functools.wraps(func)
            def gen_wrapper(*args, **kwargs):
                gen = func(*args, **kwargs)
                try:
                    with self.clone():
                        response = gen.send(None)
                    while True:
                        try:
                            request = yield response
                        except GeneratorExit:
                            with self.clone():
                                gen.close()
                            raise
                        except BaseException as e:  # noqa: BLE001 - forwarded into the generator
                            with self.clone():
                                response = gen.throw(e)
                        else:
                            with self.clone():
                                response = gen.send(request)
                except StopIteration as stop:
                    return stop.value

            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return wrapper

    def clone(self):
        return type(self)()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also usable as a bare decorator (``@no_grad`` as well as ``@no_grad()``)."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Disables gradient recording inside the block (``torch.no_grad``)."""

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _ag.is_grad_enabled()
        _ag.set_grad_enabled(False)

    def __exit__(self, *exc) -> None:
        _ag.set_grad_enabled(self.prev)


class enable_grad(_NoParamDecoratorContextManager):
    """Enables gradient recording inside the block (``torch.enable_grad``)."""

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _ag.is_grad_enabled()
        _ag.set_grad_enabled(True)

    def __exit__(self, *exc) -> None:
        _ag.set_grad_enabled(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode on or off; takes effect at once, and as a context manager restores it."""

    def __init__(self, mode: bool) -> None:
        self.prev = _ag.is_grad_enabled()
        self.mode = bool(mode)
        _ag.set_grad_enabled(self.mode)

    def __call__(self, func):
        _ag.set_grad_enabled(self.prev)
        return super().__call__(func)

    def __enter__(self) -> None:
        _ag.set_grad_enabled(self.mode)

    def __exit__(self, *exc) -> None:
        _ag.set_grad_enabled(self.prev)

    def clone(self):
        return type(self)(self.mode)


class inference_mode(_DecoratorContextManager):
    """Inference mode (``torch.inference_mode``): no recording, and tensors made inside can
    never join an autograd graph later."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)
        self._prev = None

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        # Used as a bare decorator: @inference_mode
        return cls()(mode)

    def __enter__(self) -> None:
        self._prev = _ag._set_inference_mode(self.mode)

    def __exit__(self, *exc) -> None:
        _ag._restore_state(*self._prev)

    def clone(self):
        return type(self)(self.mode)
