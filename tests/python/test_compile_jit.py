"""ember.compile, Module.compile, ember.compiler and ember.jit: eager, with PyTorch's shapes
(docs/design/compile-jit.md)."""

import pickle
from typing import Dict, List, Optional, Tuple

import numpy as np
import pytest

import ember
import ember.nn as nn


def _model():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))


def test_compile_module_wraps_and_matches_eager():
    model = _model()
    x = ember.randn(5, 4)
    compiled = ember.compile(model)
    assert type(compiled).__name__ == "OptimizedModule"
    assert compiled._orig_mod is model
    np.testing.assert_array_equal(compiled(x).numpy(), model(x).numpy())
    # PyTorch's key prefix, which programs strip when they load a compiled model's checkpoint
    keys = list(compiled.state_dict())
    assert keys == ["_orig_mod." + k for k in model.state_dict()]
    # attributes reach the original module, both ways
    with pytest.raises(TypeError, match="not subscriptable"):  # as PyTorch's wrapper
        compiled[0]
    assert compiled.__getattr__("0") is model[0]
    assert len(compiled) == 3
    compiled.extra_flag = 7
    assert model.extra_flag == 7
    compiled.eval()
    assert not model.training and not compiled.training
    compiled.train()
    assert model.training


def test_compile_module_trains_and_hooks_fire():
    model = _model()
    compiled = ember.compile(model, mode="max-autotune")
    calls = []
    model.register_forward_hook(lambda m, i, o: calls.append(o.shape))
    opt = ember.optim.SGD(compiled.parameters(), lr=0.1)
    x, y = ember.randn(16, 4), ember.randn(16, 3)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = nn.functional.mse_loss(compiled(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    assert calls == [(16, 3)] * 5
    assert model[0].weight.grad is not None


def test_compile_function_and_decorators():
    def f(a, b=1.0):
        return ember.sin(a) * b

    g = ember.compile(f, fullgraph=True, dynamic=False, backend="eager")
    assert g._torchdynamo_orig_callable is f and g.__name__ == "f"
    x = ember.randn(3)
    np.testing.assert_array_equal(g(x, b=2.0).numpy(), f(x, b=2.0).numpy())

    @ember.compile
    def h(a):
        return a + 1

    @ember.compile(options={"max_autotune": True})
    def k(a):
        return a * 2

    np.testing.assert_array_equal(h(x).numpy(), (x + 1).numpy())
    np.testing.assert_array_equal(k(x).numpy(), (x * 2).numpy())
    assert ember.compile(f, disable=True) is f


def test_compile_bad_arguments():
    with pytest.raises(RuntimeError, match="Either mode or options"):
        ember.compile(_model(), mode="default", options={})
    with pytest.raises(RuntimeError, match="Unrecognized mode"):
        ember.compile(_model(), mode="fastest")
    with pytest.raises(TypeError, match="options must be a dict"):
        ember.compile(_model(), options=["x"])
    with pytest.raises(TypeError, match="expected a callable"):
        ember.compile(3)
    with pytest.raises(RuntimeError, match="Model can't be None"):
        ember.compile()(None)
    with pytest.raises(TypeError, match="unexpected keyword"):
        ember.compile(_model(), fulgraph=True)  # a typo, refused as by PyTorch
    assert ember.compile(_model(), name="m", recompile_limit=4).__class__.__name__ == (
        "OptimizedModule")


def test_compiled_module_checkpoint_round_trip(tmp_path):
    model = _model()
    compiled = ember.compile(model)
    path = tmp_path / "ckpt.pt"
    ember.save({"model": compiled.state_dict()}, path)
    state = ember.load(path)["model"]
    prefix = "_orig_mod."
    fresh = _model()
    for p in fresh.parameters():
        p.data.zero_()
    fresh.load_state_dict({k[len(prefix):]: v for k, v in state.items()})
    x = ember.randn(2, 4)
    np.testing.assert_array_equal(fresh(x).numpy(), model(x).numpy())
    # the wrapper pickles as a wrapper of the same module
    clone = pickle.loads(pickle.dumps(compiled))
    np.testing.assert_array_equal(clone(x).numpy(), model(x).numpy())
    assert list(clone.state_dict()) == list(compiled.state_dict())


def test_module_compile_in_place():
    model = _model()
    x = ember.randn(3, 4)
    before = model(x).numpy()
    keys = list(model.state_dict())
    assert model.compile(mode="reduce-overhead") is None
    np.testing.assert_array_equal(model(x).numpy(), before)
    assert list(model.state_dict()) == keys
    with pytest.raises(RuntimeError, match="Either mode or options"):
        _model().compile(mode="default", options={})


def test_compiler_namespace():
    assert ember.compiler.is_compiling() is False
    assert ember.compiler.is_dynamo_compiling() is False
    assert ember.compiler.is_exporting() is False
    assert ember.compiler.compile is ember.compile

    def f(x):
        return x

    assert ember.compiler.disable(f) is f
    assert ember.compiler.disable(recursive=False)(f) is f
    assert ember.compiler.allow_in_graph(f) is f
    assert ember.compiler.reset() is None


def test_jit_script_and_trace_return_their_argument():
    model = _model()

    @ember.jit.script
    def gelu_like(x):
        return x * ember.sigmoid(1.702 * x)

    x = ember.randn(4)
    np.testing.assert_array_equal(gelu_like(x).numpy(), (x * ember.sigmoid(1.702 * x)).numpy())
    assert ember.jit.script(model) is model
    assert ember.jit.trace(model, ember.randn(1, 4)) is model
    assert ember.jit.trace_module(model, {"forward": ember.randn(1, 4)}) is model
    assert not isinstance(ember.jit.script(model), ember.jit.ScriptModule)
    with pytest.raises(RuntimeError, match="expected a function or a Module"):
        ember.jit.script(3)
    with pytest.raises(AttributeError, match="nn.Module"):
        ember.jit.trace_module(lambda x: x, {})


def test_jit_decorators_and_queries():
    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(2, 2)

        @ember.jit.unused
        def aux(self, x):
            return x * 3

        @ember.jit.ignore
        def debug(self, x):
            return x - 1

        @ember.jit.ignore(drop=True)
        def dropped(self, x):
            return x + 5

        @ember.jit.export
        def exported(self, x):
            return self.proj(x)

        def forward(self, x):
            if ember.jit.is_scripting() or ember.jit.is_tracing():
                return x
            return self.proj(x)

    head = Head()
    x = ember.ones(1, 2)
    assert head.aux(x).tolist() == [[3.0, 3.0]]
    assert head.debug(x).tolist() == [[0.0, 0.0]]
    assert head.dropped(x).tolist() == [[6.0, 6.0]]
    np.testing.assert_array_equal(head.exported(x).numpy(), head(x).numpy())
    assert ember.jit.annotate(List[int], []) == []
    assert ember.jit.Attribute(5, int) == 5
    future = ember.jit.fork(lambda a, b: a + b, 2, b=3)
    assert ember.jit.wait(future) == 5
    failing = ember.jit.fork(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        ember.jit.wait(failing)


@pytest.mark.parametrize(
    "value, kind, expected",
    [
        ([1, 2], List[int], True),
        ([1, "a"], List[int], False),
        ({"a": ember.ones(1)}, Dict[str, ember.Tensor], True),
        ({"a": 1}, Dict[str, ember.Tensor], False),
        ((1, "a"), Tuple[int, str], True),
        ((1, 2, 3), Tuple[int, ...], True),
        ((1, 2), Tuple[int], False),
        (None, Optional[int], True),
        (3.0, Optional[int], False),
        (ember.ones(1), ember.Tensor, True),
    ],
)
def test_jit_isinstance(value, kind, expected):
    assert ember.jit.isinstance(value, kind) is expected


def test_jit_freeze_and_optimize_for_inference():
    model = _model()
    with pytest.raises(RuntimeError, match="eval mode"):
        ember.jit.freeze(model)
    assert ember.jit.freeze(model.eval()) is model
    with pytest.raises(RuntimeError, match="ScriptModule"):
        ember.jit.freeze(lambda x: x)
    train_model = _model()
    assert ember.jit.optimize_for_inference(train_model) is train_model
    assert not train_model.training


def test_jit_save_and_load_say_what_to_do(tmp_path):
    with pytest.raises(RuntimeError, match="ember.save"):
        ember.jit.save(_model(), tmp_path / "m.pt")
    path = tmp_path / "state.pt"
    ember.save(_model().state_dict(), path)
    with pytest.raises(RuntimeError, match="never runs code"):
        ember.jit.load(path)
    with pytest.raises(RuntimeError, match="TorchScript"):
        ember.jit.ScriptModule()
