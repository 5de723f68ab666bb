"""ember.nn.Module, Parameter, hooks, state_dict and containers, with custom modules built
from core ops (the layer functionals are tested elsewhere). Where PyTorch is installed the
same module built with torch gives the same repr, names and errors."""

import copy
import pickle
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.nn import Parameter


# ---------------------------------------------------------------------------- helpers
class Affine(nn.Module):
    """y = x * w + b, from core ops only."""

    def __init__(self, n=3):
        super().__init__()
        self.w = Parameter(ember.ones(n))
        self.b = Parameter(ember.zeros(n))
        self.register_buffer("count", ember.zeros((), dtype=ember.int64))

    def forward(self, x):
        return x * self.w + self.b

    def extra_repr(self):
        return f"n={self.w.shape[0]}"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Affine(3)
        self.seq = nn.Sequential(Affine(3), Affine(3))
        self.register_buffer("stat", ember.ones(2))
        self.register_buffer("tmp", ember.zeros(1), persistent=False)

    def forward(self, x):
        return self.seq(self.a(x))


def torch_or_skip():
    return pytest.importorskip("torch")


# ---------------------------------------------------------------------------- Parameter
def test_parameter_is_tensor_and_shares_storage():
    t = ember.arange(6.0).reshape(2, 3)
    p = Parameter(t)
    assert isinstance(p, ember.Tensor) and isinstance(p, Parameter)
    assert type(p) is Parameter
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert p._base is None
    assert p.data_ptr() == t.data_ptr()
    with ember.no_grad():
        p.mul_(2)
    np.testing.assert_array_equal(t.numpy(), np.arange(6.0).reshape(2, 3) * 2)
    assert Parameter(t, requires_grad=False).requires_grad is False


def test_parameter_default_and_repr():
    p = Parameter()
    assert p.shape == (0,) and p.requires_grad
    p = Parameter(ember.tensor([1.0, 2.0]))
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    assert str(p) == repr(p)
    assert repr(Parameter(ember.tensor([1.0]), requires_grad=False)) == (
        "Parameter containing:\ntensor([1.])"
    )


def test_parameter_int_dtype_cannot_require_grad():
    with pytest.raises(RuntimeError, match="floating point"):
        Parameter(ember.tensor([1, 2]))
    p = Parameter(ember.tensor([1, 2]), requires_grad=False)
    assert p.dtype == ember.int64


def test_parameter_rejects_non_tensor():
    with pytest.raises(TypeError):
        Parameter([1.0, 2.0])


def test_parameter_ops_return_tensors_inplace_returns_self():
    p = Parameter(ember.ones(3))
    q = p * 2
    assert type(q) is ember.Tensor and q.grad_fn is not None
    assert type(p.detach()) is ember.Tensor
    with ember.no_grad():
        r = p.add_(1)
    assert r is p
    assert p.data.data_ptr() == p.data_ptr() and type(p.data) is ember.Tensor


def test_parameter_identity_through_ops_and_lists():
    p = Parameter(ember.ones(2))
    m = nn.Module()
    m.p = p
    assert m.p is p
    assert list(m.parameters())[0] is p


def test_parameter_backward_accumulates():
    p = Parameter(ember.tensor([1.0, 2.0, 3.0]))
    (p * p).sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), [2.0, 4.0, 6.0])
    assert isinstance(p, Parameter)


def test_parameter_deepcopy_and_pickle():
    p = Parameter(ember.tensor([1.0, 2.0]))
    q = copy.deepcopy(p)
    assert type(q) is Parameter and q.requires_grad
    assert q.data_ptr() != p.data_ptr()
    np.testing.assert_array_equal(q.numpy(), p.detach().numpy())
    r = pickle.loads(pickle.dumps(p))
    assert type(r) is Parameter and r.requires_grad
    np.testing.assert_array_equal(r.detach().numpy(), [1.0, 2.0])
    p2 = Parameter(ember.tensor([3.0]), requires_grad=False)
    p2.tag = "x"
    r2 = pickle.loads(pickle.dumps(p2))
    assert r2.tag == "x" and not r2.requires_grad


def test_make_subclass_checks():
    with pytest.raises(TypeError):
        ember.Tensor._make_subclass(int, ember.ones(1))


def test_tensor_data_property_and_setter():
    x = ember.ones(3, requires_grad=True)
    d = x.data
    assert not d.requires_grad and d.data_ptr() == x.data_ptr() and d is not x.data
    x.data = ember.zeros(2, dtype=ember.float64)
    assert x.dtype == ember.float64 and x.shape == (2,) and x.requires_grad and x.is_leaf
    (x * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])
    assert x.grad.dtype == ember.float64
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got int"):
        x.data = 3


def test_buffer_marker():
    m = nn.Module()
    m.b = nn.Buffer(ember.ones(2))
    m.c = nn.Buffer(ember.ones(2), persistent=False)
    assert "b" in m._buffers and "c" in m._buffers
    assert list(m.state_dict().keys()) == ["b"]
    assert isinstance(m.b, nn.Buffer) and not isinstance(ember.ones(1), nn.Buffer)


# ---------------------------------------------------------------------------- registration
def test_attribute_routing():
    m = Net()
    assert set(m._parameters) == set()
    assert set(m._modules) == {"a", "seq"}
    assert set(m._buffers) == {"stat", "tmp"}
    assert m._non_persistent_buffers_set == {"tmp"}
    names = [n for n, _ in m.named_parameters()]
    assert names == ["a.w", "a.b", "seq.0.w", "seq.0.b", "seq.1.w", "seq.1.b"]
    assert [n for n, _ in m.named_buffers()] == [
        "stat", "tmp", "a.count", "seq.0.count", "seq.1.count",
    ]
    assert [n for n, _ in m.named_modules()] == ["", "a", "seq", "seq.0", "seq.1"]
    assert [n for n, _ in m.named_children()] == ["a", "seq"]
    assert len(list(m.modules())) == 5 and len(list(m.children())) == 2
    assert len(list(m.parameters(recurse=False))) == 0
    assert [n for n, _ in m.named_parameters(prefix="net")][0] == "net.a.w"


def test_reassigning_switches_kind():
    m = nn.Module()
    m.x = Parameter(ember.ones(1))
    assert "x" in m._parameters
    m.x = None  # a parameter slot keeps the name
    assert m._parameters["x"] is None and m.x is None
    with pytest.raises(TypeError, match="cannot assign 'ember.nn.modules.module.Module' as "
                                        "parameter 'x'"):
        m.x = nn.Module()  # as PyTorch: a parameter slot only takes a Parameter or None
    del m.x
    m.x = nn.Module()
    assert "x" in m._modules and "x" not in m._parameters
    m.x = Parameter(ember.ones(1))
    assert "x" in m._parameters and "x" not in m._modules
    del m.x
    assert not hasattr(m, "x")


def test_assign_errors_match_torch():
    m = nn.Module()
    m.p = Parameter(ember.ones(1))
    with pytest.raises(TypeError, match=r"cannot assign 'ember.FloatTensor' as parameter 'p' "
                                        r"\(ember.nn.Parameter or None expected\)"):
        m.p = ember.ones(1)
    m.c = nn.Linear(1, 1)
    with pytest.raises(TypeError, match=r"cannot assign 'int' as child module 'c'"):
        m.c = 3
    m.register_buffer("b", ember.ones(1))
    with pytest.raises(TypeError, match=r"cannot assign 'str' as buffer 'b'"):
        m.b = "x"
    m.b = ember.zeros(2)  # a tensor assigned to a buffer name stays a buffer
    assert m._buffers["b"].shape == (2,)


def test_register_errors():
    m = nn.Module()
    with pytest.raises(KeyError, match='buffer name can.*t contain "."'):
        m.register_buffer("a.b", ember.ones(1))
    with pytest.raises(KeyError, match="empty string"):
        m.register_parameter("", None)
    with pytest.raises(TypeError, match="buffer name should be a string"):
        m.register_buffer(1, None)
    m.attr = 1
    with pytest.raises(KeyError, match="attribute 'attr' already exists"):
        m.register_parameter("attr", None)
    with pytest.raises(TypeError, match="cannot assign 'ember.FloatTensor' object to parameter"):
        m.register_parameter("w", ember.ones(1))
    x = ember.ones(1, requires_grad=True)
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor to parameter 'w'"):
        m.register_parameter("w", _non_leaf_param(x))
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("x", 3)
    with pytest.raises(KeyError, match='module name can.*t contain ".", got: a.b'):
        m.add_module("a.b", nn.Module())
    with pytest.raises(TypeError, match="cannot assign 'list' object to buffer 'z'"):
        m.register_buffer("z", [1])


def _non_leaf_param(x):
    # A Parameter whose grad_fn is set cannot be built through the public API; use a
    # function whose output claims to be a Parameter through the _is_param flag.
    y = x * 2
    y._is_param = True
    return y


def test_before_init_errors():
    class Bad(nn.Module):
        def __init__(self):
            self.w = Parameter(ember.ones(1))

    with pytest.raises(AttributeError, match="cannot assign parameters before Module.__init__"):
        Bad()

    class Bad2(nn.Module):
        def __init__(self):
            self.m = nn.Module()

    with pytest.raises(AttributeError, match="cannot assign module before Module.__init__"):
        Bad2()


def test_init_rejects_arguments():
    with pytest.raises(TypeError, match="unexpected keyword argument 'x'"):
        nn.Module(x=1)
    with pytest.raises(TypeError, match="takes 1 positional argument but 2 were given"):
        nn.Module(1)


def test_getattr_error_and_dir():
    m = Net()
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'nope'"):
        _ = m.nope
    d = dir(m)
    assert "a" in d and "stat" in d and "forward" in d and "seq" in d
    assert "0" not in dir(m.seq)


def test_get_submodule_parameter_buffer():
    m = Net()
    assert m.get_submodule("seq.1") is m.seq[1]
    assert m.get_submodule("") is m
    assert m.get_parameter("seq.0.w") is m.seq[0].w
    assert m.get_buffer("a.count") is m.a.count
    with pytest.raises(AttributeError, match="Sequential has no attribute `5`"):
        m.get_submodule("seq.5")
    with pytest.raises(AttributeError, match="`stat` is not an nn.Module"):
        m.get_submodule("stat.x")
    with pytest.raises(AttributeError, match="`count` is not an nn.Parameter"):
        m.get_parameter("a.count")
    with pytest.raises(AttributeError, match="`w` is not a buffer"):
        m.get_buffer("a.w")
    m.set_submodule("seq.0", nn.Identity())
    assert isinstance(m.seq[0], nn.Identity)


def test_shared_parameters_and_remove_duplicate():
    m = nn.Module()
    shared = Affine(2)
    m.x = shared
    m.y = shared
    assert len(list(m.parameters())) == 2
    assert [n for n, _ in m.named_parameters(remove_duplicate=False)] == [
        "x.w", "x.b", "y.w", "y.b",
    ]
    assert [n for n, _ in m.named_modules()] == ["", "x"]
    assert [n for n, _ in m.named_modules(remove_duplicate=False)] == ["", "x", "y"]


# ---------------------------------------------------------------------------- modes, grads
def test_train_eval_apply_requires_grad():
    m = Net()
    assert m.training and m.seq[1].training
    assert m.eval() is m
    assert not any(x.training for x in m.modules())
    m.train()
    assert all(x.training for x in m.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        m.train(1)
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Affine", "Affine", "Affine", "Sequential", "Net"]
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


def test_zero_grad():
    m = Affine(3)
    m(ember.ones(3)).sum().backward()
    assert m.w.grad is not None
    m.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(m.w.grad.numpy(), [0, 0, 0])
    m.zero_grad()
    assert m.w.grad is None and m.b.grad is None


def test_forward_unimplemented():
    with pytest.raises(NotImplementedError, match=r'Module \[Module\] is missing the required '
                                                  r'"forward" function'):
        nn.Module()(1)


# ---------------------------------------------------------------------------- conversion
def test_to_dtype_keeps_parameter_identity():
    m = Net()
    w = m.a.w
    m(ember.ones(3)).sum().backward()
    assert m.double() is m
    assert m.a.w is w and isinstance(w, Parameter)
    assert w.dtype == ember.float64 and w.grad.dtype == ember.float64
    assert m.a.count.dtype == ember.int64  # integer buffers keep their dtype
    assert m.stat.dtype == ember.float64
    m.float()
    assert w.dtype == ember.float32
    m.to(ember.float64)
    assert w.dtype == ember.float64
    m.to("cpu", ember.float32)
    assert w.dtype == ember.float32
    m.to(dtype=ember.float16)
    assert w.dtype == ember.float16
    m.to(ember.zeros(1, dtype=ember.float64))
    assert w.dtype == ember.float64
    m.half().bfloat16().cpu()
    assert w.dtype == ember.bfloat16 and w.requires_grad and w.is_leaf
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex"):
        m.to(ember.int32)
    # The parameter still trains after the conversion.
    m.float()
    m.zero_grad()
    m(ember.ones(3)).sum().backward()
    assert m.a.w.grad.dtype == ember.float32


def test_to_parity_with_torch():
    torch = torch_or_skip()
    tm = torch.nn.Module()
    tm.w = torch.nn.Parameter(torch.ones(2))
    w = tm.w
    tm.double()
    em = nn.Module()
    em.w = Parameter(ember.ones(2))
    ew = em.w
    em.double()
    assert (tm.w is w) == (em.w is ew)


# ---------------------------------------------------------------------------- state_dict
def test_state_dict_keys_order_and_metadata():
    m = Net()
    sd = m.state_dict()
    assert list(sd.keys()) == [
        "stat", "a.w", "a.b", "a.count", "seq.0.w", "seq.0.b", "seq.0.count", "seq.1.w",
        "seq.1.b", "seq.1.count",
    ]
    assert isinstance(sd, OrderedDict)
    assert dict(sd._metadata) == {
        "": {"version": 1}, "a": {"version": 1}, "seq": {"version": 1},
        "seq.0": {"version": 1}, "seq.1": {"version": 1},
    }
    assert not sd["a.w"].requires_grad and type(sd["a.w"]) is ember.Tensor
    assert sd["a.w"].data_ptr() == m.a.w.data_ptr()
    kv = m.state_dict(keep_vars=True)
    assert kv["a.w"] is m.a.w
    pre = m.state_dict(prefix="model.")
    assert next(iter(pre)) == "model.stat"


def test_state_dict_matches_torch_layout():
    torch = torch_or_skip()

    class TAffine(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.ones(3))
            self.b = torch.nn.Parameter(torch.zeros(3))
            self.register_buffer("count", torch.zeros((), dtype=torch.int64))

    class TNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = TAffine()
            self.seq = torch.nn.Sequential(TAffine(), TAffine())
            self.register_buffer("stat", torch.ones(2))
            self.register_buffer("tmp", torch.zeros(1), persistent=False)

    tsd, esd = TNet().state_dict(), Net().state_dict()
    assert list(tsd.keys()) == list(esd.keys())
    assert dict(tsd._metadata) == dict(esd._metadata)


def test_load_state_dict_roundtrip_and_result():
    src, dst = Net(), Net()
    with ember.no_grad():
        src.a.w.fill_(5.0)
        src.seq[1].count.fill_(7)
    w = dst.a.w
    result = dst.load_state_dict(src.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    assert dst.a.w is w  # copied in place
    np.testing.assert_array_equal(dst.a.w.detach().numpy(), [5, 5, 5])
    assert int(dst.seq[1].count) == 7
    assert dst.a.w.data_ptr() != src.a.w.data_ptr()


def test_load_state_dict_strict_errors():
    m = Net()
    sd = m.state_dict()
    del sd["a.w"]
    sd["a.extra"] = ember.ones(1)
    sd["nothere.x"] = ember.ones(1)
    with pytest.raises(RuntimeError) as info:
        m.load_state_dict(sd)
    msg = str(info.value)
    assert msg.startswith("Error(s) in loading state_dict for Net:\n\t")
    assert 'Missing key(s) in state_dict: "a.w". ' in msg
    # Unexpected keys in the order PyTorch finds them: the root's first, then each child's.
    assert 'Unexpected key(s) in state_dict: "nothere.x", "a.extra". ' in msg
    result = m.load_state_dict(sd, strict=False)  # reported, not raised
    assert result.missing_keys == ["a.w"]
    assert result.unexpected_keys == ["nothere.x", "a.extra"]


def test_load_state_dict_strict_reports_like_torch():
    torch = torch_or_skip()
    tm = torch.nn.Linear(2, 3)
    tsd = tm.state_dict()
    del tsd["bias"]
    tsd["junk"] = torch.ones(1)
    with pytest.raises(RuntimeError) as tinfo:
        tm.load_state_dict(tsd)
    em = nn.Linear(2, 3)
    esd = em.state_dict()
    del esd["bias"]
    esd["junk"] = ember.ones(1)
    with pytest.raises(RuntimeError) as einfo:
        em.load_state_dict(esd)
    assert str(einfo.value) == str(tinfo.value)
    t_res = tm.load_state_dict(tsd, strict=False)
    e_res = em.load_state_dict(esd, strict=False)
    assert repr(t_res) == repr(e_res)


def test_load_state_dict_size_mismatch_message_as_torch():
    torch = torch_or_skip()
    tm, em = torch.nn.Linear(2, 3), nn.Linear(2, 3)
    with pytest.raises(RuntimeError) as tinfo:
        tm.load_state_dict({"weight": torch.ones(3, 4), "bias": torch.ones(3)})
    with pytest.raises(RuntimeError) as einfo:
        em.load_state_dict({"weight": ember.ones(3, 4), "bias": ember.ones(3)})
    t_msg = str(tinfo.value).replace("torch.Size", "ember.Size")
    assert str(einfo.value) == t_msg
    assert "size mismatch for weight: copying a param with shape ember.Size([3, 4]) from " \
           "checkpoint, the shape in current model is ember.Size([3, 2])." in str(einfo.value)


def test_load_state_dict_type_errors():
    m = Affine()
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        m.load_state_dict([1])
    with pytest.raises(RuntimeError, match='expected ember.Tensor or Tensor-like object from '
                                           'checkpoint but received <class \'int\'>'):
        m.load_state_dict({"w": 1, "b": ember.ones(3), "count": ember.zeros(())})


def test_load_state_dict_scalar_from_one_element():
    m = Affine()
    sd = m.state_dict()
    sd["count"] = ember.tensor([4])
    m.load_state_dict(sd)
    assert int(m.count) == 4


def test_load_state_dict_assign():
    m = Affine()
    w_old = m.w
    new = ember.full((3,), 2.0)
    m.load_state_dict({"w": new, "b": ember.zeros(3), "count": ember.zeros((), dtype=ember.int64)},
                      assign=True)
    assert m.w is not w_old and isinstance(m.w, Parameter) and m.w.requires_grad
    assert m.w.data_ptr() == new.data_ptr()


def test_load_state_dict_version_metadata_and_hooks():
    calls = []

    class Versioned(nn.Module):
        _version = 3

        def __init__(self):
            super().__init__()
            self.p = Parameter(ember.zeros(2))

        def _load_from_state_dict(self, state_dict, prefix, local_metadata, *args):
            calls.append(local_metadata.get("version"))
            # Upgrade an old checkpoint that named the parameter "old".
            if local_metadata.get("version", 0) < 3 and prefix + "old" in state_dict:
                state_dict[prefix + "p"] = state_dict.pop(prefix + "old")
            super()._load_from_state_dict(state_dict, prefix, local_metadata, *args)

    m = Versioned()
    sd = m.state_dict()
    assert sd._metadata[""] == {"version": 3}
    old = OrderedDict(old=ember.ones(2))
    old._metadata = {"": {"version": 1}}
    m.load_state_dict(old)
    assert calls == [1]
    np.testing.assert_array_equal(m.p.detach().numpy(), [1, 1])

    post = []
    h = m.register_load_state_dict_post_hook(lambda mod, keys: post.append(tuple(keys)))
    m.load_state_dict(m.state_dict())
    assert post == [([], [])]
    h.remove()
    pre = []
    m.register_load_state_dict_pre_hook(lambda mod, sd, prefix, *a: pre.append(prefix))
    m.load_state_dict(m.state_dict())
    assert pre == [""]


def test_state_dict_hooks():
    m = Affine()
    seen = []
    m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: seen.append(prefix))

    def post(mod, sd, prefix, meta):
        sd[prefix + "extra"] = ember.ones(1)

    m.register_state_dict_post_hook(post)
    sd = m.state_dict()
    assert seen == [""] and "extra" in sd

    def bad(mod, sd, prefix, meta):
        return {}

    m.register_state_dict_post_hook(bad)
    with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
        m.state_dict()


def test_extra_state():
    class WithExtra(nn.Module):
        def __init__(self):
            super().__init__()
            self.value = 1

        def get_extra_state(self):
            return {"value": self.value}

        def set_extra_state(self, state):
            self.value = state["value"]

    m = WithExtra()
    m.value = 42
    sd = m.state_dict()
    assert sd["_extra_state"] == {"value": 42}
    n = WithExtra()
    n.load_state_dict(sd)
    assert n.value == 42
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "_extra_state"'):
        n.load_state_dict({})


# ---------------------------------------------------------------------------- hooks
def test_forward_pre_and_post_hooks():
    m = Affine()
    order = []

    def pre(mod, args):
        order.append("pre")
        return (args[0] * 2,)

    def post(mod, args, out):
        order.append("post")
        return out + 1

    h1 = m.register_forward_pre_hook(pre)
    h2 = m.register_forward_hook(post)
    out = m(ember.ones(3))
    np.testing.assert_array_equal(out.detach().numpy(), [3, 3, 3])
    assert order == ["pre", "post"]
    h1.remove()
    h2.remove()
    np.testing.assert_array_equal(m(ember.ones(3)).detach().numpy(), [1, 1, 1])
    h1.remove()  # removing twice is harmless


def test_hooks_with_kwargs_prepend_and_non_tuple_result():
    class KW(nn.Module):
        def forward(self, x, scale=1.0):
            return x * scale

    m = KW()
    order = []
    m.register_forward_pre_hook(lambda mod, args: order.append("a"))
    m.register_forward_pre_hook(lambda mod, args: order.append("b"), prepend=True)

    def pre_kw(mod, args, kwargs):
        kwargs = dict(kwargs)
        kwargs["scale"] = 3.0
        return args, kwargs

    m.register_forward_pre_hook(pre_kw, with_kwargs=True)

    def post_kw(mod, args, kwargs, out):
        assert kwargs["scale"] == 3.0
        return out * 10

    m.register_forward_hook(post_kw, with_kwargs=True)
    out = m(ember.ones(2), scale=2.0)
    np.testing.assert_array_equal(out.numpy(), [30, 30])
    assert order == ["b", "a"]
    # A pre-hook returning a single value is wrapped into a tuple.
    n = KW()
    n.register_forward_pre_hook(lambda mod, args: ember.full((2,), 4.0))
    np.testing.assert_array_equal(n(ember.ones(2)).numpy(), [4, 4])

    bad = KW()
    bad.register_forward_pre_hook(lambda mod, a, k: 5, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
        bad(ember.ones(1))


def test_forward_hook_always_call():
    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    m = Boom()
    called = []
    m.register_forward_hook(lambda mod, args, out: called.append("always"), always_call=True)
    m.register_forward_hook(lambda mod, args, out: called.append("normal"))
    with pytest.raises(ValueError, match="boom"):
        m(ember.ones(1))
    assert called == ["always"]


def test_handle_context_manager():
    m = Affine()
    calls = []
    with m.register_forward_hook(lambda *a: calls.append(1)):
        m(ember.ones(3))
    m(ember.ones(3))
    assert calls == [1]


def test_global_forward_hooks():
    from ember.nn.modules import module as module_mod

    calls = []
    h = module_mod.register_module_forward_hook(lambda mod, args, out: calls.append(type(mod)))
    try:
        Affine()(ember.ones(3))
    finally:
        h.remove()
    Affine()(ember.ones(3))
    assert calls == [Affine]


def _grad_hook_setup():
    class Two(nn.Module):
        def forward(self, x, y):
            return x * y, x + y

    return Two()


def test_full_backward_hook_values():
    m = _grad_hook_setup()
    records = []

    def hook(mod, grad_input, grad_output):
        records.append((grad_input, grad_output))

    m.register_full_backward_hook(hook)
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = ember.tensor([3.0, 4.0], requires_grad=True)
    a, b = m(x, y)
    assert a.grad_fn is not None
    (a * 2 + b * 3).sum().backward()
    assert len(records) == 1
    gi, go = records[0]
    np.testing.assert_allclose(go[0].numpy(), [2, 2])
    np.testing.assert_allclose(go[1].numpy(), [3, 3])
    np.testing.assert_allclose(gi[0].numpy(), [2 * 3 + 3, 2 * 4 + 3])
    np.testing.assert_allclose(gi[1].numpy(), [2 * 1 + 3, 2 * 2 + 3])
    np.testing.assert_allclose(x.grad.numpy(), [9, 11])


def test_full_backward_hook_replaces_grad_input_and_pre_hook_grad_output():
    m = _grad_hook_setup()
    m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 0, go[1]))
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 10, gi[1]))
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = ember.tensor([3.0, 4.0], requires_grad=True)
    a, b = m(x, y)
    (a * 2 + b * 3).sum().backward()
    # grad of a zeroed: dx = 3 (from b), scaled by 10; dy = 3.
    np.testing.assert_allclose(x.grad.numpy(), [30, 30])
    np.testing.assert_allclose(y.grad.numpy(), [3, 3])

    n = _grad_hook_setup()
    n.register_full_backward_hook(lambda mod, gi, go: (gi[0],))
    a, b = n(ember.ones(2, requires_grad=True), ember.ones(2, requires_grad=True))
    with pytest.raises(RuntimeError, match="Backward hook returned an invalid number of "
                                           "grad_input, got 1, but expected 2"):
        (a + b).sum().backward()


def test_full_backward_hook_gradient_placeholders():
    # As PyTorch: grad_input holds zeros for an input that does not require grad, grad_output
    # holds None for an output that received no gradient.
    m = _grad_hook_setup()
    seen = []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, go)))
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    a, b = m(x, ember.tensor([3.0, 4.0]))
    a.sum().backward()
    gi, go = seen[0]
    np.testing.assert_allclose(gi[0].numpy(), [3, 4])
    np.testing.assert_allclose(gi[1].numpy(), [0, 0])
    np.testing.assert_allclose(go[0].numpy(), [1, 1])
    assert go[1] is None


def test_full_backward_hook_no_input_requires_grad_warns():
    lin = Affine(2)
    seen = []
    lin.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, go)))
    with pytest.warns(UserWarning, match="Full backward hook is firing when gradients are "
                                         "computed with respect to module outputs"):
        lin(ember.ones(2)).sum().backward()
    assert seen[0][0] == (None,)
    np.testing.assert_allclose(seen[0][1][0].numpy(), [1, 1])


def test_backward_hook_matches_torch():
    torch = torch_or_skip()

    class TTwo(torch.nn.Module):
        def forward(self, x, y):
            return x * y, x + y

    results = {}
    for lib, mod in (("torch", TTwo()), ("ember", _grad_hook_setup())):
        rec = []
        mod.register_full_backward_pre_hook(lambda m, go, rec=rec: rec.append(("pre", len(go))))
        mod.register_full_backward_hook(
            lambda m, gi, go, rec=rec: rec.append(
                ("hook", [None if g is None else g.tolist() for g in gi],
                 [None if g is None else g.tolist() for g in go])))
        t = torch if lib == "torch" else ember
        x = t.tensor([1.0, 2.0], requires_grad=True)
        y = t.tensor([3.0, 4.0])
        a, b = mod(x, y)
        (a * 2).sum().backward()
        results[lib] = rec
    assert results["torch"] == results["ember"]


def test_mixing_full_and_legacy_backward_hooks_errors():
    m = Affine()
    m.register_full_backward_hook(lambda *a: None)
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full "
                                           "backward hooks on a single Module"):
        m.register_backward_hook(lambda *a: None)


def test_backward_hook_removal():
    m = Affine(2)
    calls = []
    h = m.register_full_backward_hook(lambda *a: calls.append(1))
    x = ember.ones(2, requires_grad=True)
    m(x).sum().backward()
    h.remove()
    m(x).sum().backward()
    assert calls == [1]


# ---------------------------------------------------------------------------- repr
def test_repr_layout():
    m = Net()
    assert repr(m) == (
        "Net(\n"
        "  (a): Affine(n=3)\n"
        "  (seq): Sequential(\n"
        "    (0): Affine(n=3)\n"
        "    (1): Affine(n=3)\n"
        "  )\n"
        ")"
    )
    assert repr(nn.Module()) == "Module()"

    class Multi(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = Affine(2)

        def extra_repr(self):
            return "line1\nline2"

    assert repr(Multi()) == "Multi(\n  line1\n  line2\n  (c): Affine(n=2)\n)"


def test_repr_matches_torch_for_nested_layers():
    torch = torch_or_skip()

    def build(lib):
        n = lib.nn
        return n.Sequential(
            OrderedDict(
                conv=n.Conv2d(1, 4, 3, padding=1),
                block=n.Sequential(n.ReLU(), n.MaxPool2d(2), n.Dropout(0.25)),
                heads=n.ModuleList([n.Linear(4, 2) for _ in range(3)] + [n.Identity()]),
                d=n.ModuleDict({"x": n.Tanh(), "y": n.GELU(approximate="tanh")}),
            )
        )

    assert repr(build(ember)) == repr(build(torch))


# ---------------------------------------------------------------------------- containers
def test_sequential():
    a, b, c = Affine(1), Affine(1), Affine(1)
    s = nn.Sequential(a, b)
    assert len(s) == 2 and s[0] is a and s[-1] is b
    assert list(s) == [a, b]
    s.append(c)
    assert s[2] is c
    sl = s[1:]
    assert isinstance(sl, nn.Sequential) and list(sl) == [b, c]
    assert list(sl._modules) == ["1", "2"]
    s.insert(0, nn.Identity())
    assert isinstance(s[0], nn.Identity) and s[1] is a and len(s) == 4
    assert s.pop(0).__class__ is nn.Identity and list(s._modules) == ["0", "1", "2"]
    del s[0]
    assert list(s) == [b, c] and list(s._modules) == ["0", "1"]
    s.extend([a])
    assert list(s) == [b, c, a]
    s[0] = a
    assert s[0] is a
    with pytest.raises(IndexError, match="index 5 is out of range"):
        s[5]
    with pytest.raises(IndexError, match="Index out of range: 9"):
        s.insert(9, a)
    od = nn.Sequential(OrderedDict([("first", a), ("second", b)]))
    assert od.first is a and list(od._modules) == ["first", "second"]
    s2 = nn.Sequential(a) + nn.Sequential(b)
    assert list(s2) == [a, b]
    s3 = nn.Sequential(a) * 3
    assert len(s3) == 3 and s3[2] is a
    with pytest.raises(ValueError, match="add operator supports only objects of Sequential"):
        nn.Sequential() + 1
    x = ember.tensor([2.0])
    np.testing.assert_array_equal(nn.Sequential(Affine(1), Affine(1))(x).detach().numpy(), [2])


def test_module_list():
    mods = [Affine(1) for _ in range(3)]
    ml = nn.ModuleList(mods)
    assert len(ml) == 3 and ml[-1] is mods[2]
    assert len(list(ml.parameters())) == 6
    ml.append(nn.Identity())
    ml.extend([nn.Tanh()])
    ml.insert(1, nn.ReLU())
    assert [type(m).__name__ for m in ml] == [
        "Affine", "ReLU", "Affine", "Affine", "Identity", "Tanh",
    ]
    assert isinstance(ml[1:3], nn.ModuleList) and len(ml[1:3]) == 2
    del ml[0]
    assert type(ml[0]).__name__ == "ReLU" and list(ml._modules) == [str(i) for i in range(5)]
    assert type(ml.pop(-1)).__name__ == "Tanh"
    ml[0] = nn.Sigmoid()
    assert isinstance(ml[0], nn.Sigmoid)
    with pytest.raises(IndexError, match="index 10 is out of range"):
        ml[10]
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable"):
        ml.extend(3)
    combined = nn.ModuleList([nn.ReLU()]) + nn.ModuleList([nn.Tanh()])
    assert len(combined) == 2
    assert repr(nn.ModuleList()) == "ModuleList()"
    assert repr(nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.Tanh()])) == (
        "ModuleList(\n  (0-1): 2 x ReLU()\n  (2): Tanh()\n)"
    )


def test_module_dict():
    md = nn.ModuleDict({"b": nn.ReLU(), "a": nn.Tanh()})
    assert list(md.keys()) == ["b", "a"]
    assert "a" in md and len(md) == 2
    md["c"] = nn.Identity()
    assert list(md) == ["b", "a", "c"]
    assert isinstance(md.pop("a"), nn.Tanh) and "a" not in md
    md.update([("d", nn.Sigmoid())])
    assert list(md.keys()) == ["b", "c", "d"]
    assert [type(v).__name__ for v in md.values()] == ["ReLU", "Identity", "Sigmoid"]
    with pytest.raises(ValueError, match="has length 3; 2 is required"):
        md.update([("x", nn.ReLU(), 1)])
    with pytest.raises(TypeError, match="ModuleDict.update should be called with an iterable"):
        md.update(3)
    md.clear()
    assert len(md) == 0


def test_parameter_list():
    pl = nn.ParameterList([ember.ones(2), Parameter(ember.zeros(3))])
    assert len(pl) == 2 and all(isinstance(p, Parameter) for p in pl)
    assert [n for n, _ in pl.named_parameters()] == ["0", "1"]
    pl.append(ember.ones(1))
    pl.extend([ember.ones(4)])
    assert len(pl) == 4 and pl[-1].shape == (4,)
    assert isinstance(pl[1:3], nn.ParameterList) and len(pl[1:3]) == 2
    pl.append("not a tensor")
    assert pl[4] == "not a tensor"
    assert repr(pl) == (
        "ParameterList(\n"
        "    (0): Parameter containing: [ember.float32 of size 2]\n"
        "    (1): Parameter containing: [ember.float32 of size 3]\n"
        "    (2): Parameter containing: [ember.float32 of size 1]\n"
        "    (3): Parameter containing: [ember.float32 of size 4]\n"
        "    (4): Object of type: str\n"
        ")"
    )
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        pl()
    with pytest.raises(TypeError, match="ParameterList.extend should be called with an iterable"):
        pl.extend(ember.ones(2))


def test_parameter_list_repr_matches_torch():
    torch = torch_or_skip()
    t = repr(torch.nn.ParameterList([torch.ones(2, 3), torch.nn.Parameter(torch.ones(1))]))
    e = repr(nn.ParameterList([ember.ones(2, 3), Parameter(ember.ones(1))]))
    assert e == t.replace("torch.", "ember.")


def test_parameter_dict():
    pd = nn.ParameterDict({"b": ember.ones(1), "a": ember.zeros(2)})
    assert list(pd.keys()) == ["a", "b"]  # a plain dict is taken in sorted order
    assert isinstance(pd["a"], Parameter)
    pd["c"] = ember.ones(3)
    assert "c" in pd and len(pd) == 3
    assert [n for n, _ in pd.named_parameters()] == ["a", "b", "c"]
    assert pd.get("zz", 5) == 5
    assert pd.setdefault("d", ember.ones(1)).shape == (1,)
    k, v = pd.popitem()
    assert k == "d" and isinstance(v, Parameter)
    assert isinstance(pd.pop("c"), Parameter) and "c" not in pd
    cp = pd.copy()
    assert cp["a"] is pd["a"]
    merged = pd | nn.ParameterDict({"z": ember.ones(1)})
    assert list(merged.keys()) == ["a", "b", "z"]
    pd.update(OrderedDict([("y", ember.ones(1)), ("x", ember.ones(1))]))
    assert list(pd.keys())[-2:] == ["y", "x"]
    with pytest.raises(TypeError, match="Index given to ParameterDict cannot be used as a key"):
        pd[1]
    pd.clear()
    assert len(pd) == 0
    with pytest.raises(RuntimeError, match="ParameterDict should not be called."):
        pd(1)


def test_parameter_dict_repr_matches_torch():
    torch = torch_or_skip()
    t = repr(torch.nn.ParameterDict({"w": torch.ones(2, 2), "s": "str"}))
    e = repr(nn.ParameterDict({"w": ember.ones(2, 2), "s": "str"}))
    assert e == t.replace("torch.", "ember.")


# ---------------------------------------------------------------------------- pickling
def test_module_deepcopy_and_pickle():
    m = Net()
    with ember.no_grad():
        m.a.w.fill_(3.0)
    c = copy.deepcopy(m)
    assert isinstance(c.a.w, Parameter) and c.a.w is not m.a.w
    np.testing.assert_array_equal(c.a.w.detach().numpy(), [3, 3, 3])
    p = pickle.loads(pickle.dumps(m))
    assert list(p.state_dict().keys()) == list(m.state_dict().keys())
    np.testing.assert_array_equal(p(ember.ones(3)).detach().numpy(),
                                  m(ember.ones(3)).detach().numpy())


def test_no_warnings_on_plain_use():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = Net()
        m(ember.ones(3)).sum().backward()
        m.state_dict()
        m.load_state_dict(m.state_dict())


def test_legacy_backward_hook_on_output_grad_fn():
    torch = torch_or_skip()

    class TAffine(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.ones(3) * 2)
            self.b = torch.nn.Parameter(torch.zeros(3))

        def forward(self, x):
            return x * self.w + self.b

    results = []
    for lib, mod in (("torch", TAffine()), ("ember", Affine())):
        if lib == "ember":
            with ember.no_grad():
                mod.w.fill_(2.0)
        rec = []
        mod.register_backward_hook(
            lambda m, gi, go, rec=rec: rec.append(
                ([g.tolist() for g in gi if g is not None], [g.tolist() for g in go])))
        t = torch if lib == "torch" else ember
        x = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
        import warnings as _w

        with _w.catch_warnings():
            _w.simplefilter("ignore")
            (mod(x) * t.tensor([1.0, 2.0, 3.0])).sum().backward()
        results.append(rec)
    assert results[0] == results[1]


def test_global_full_backward_hook():
    from ember.nn.modules import module as module_mod

    seen = []
    h = module_mod.register_module_full_backward_hook(
        lambda mod, gi, go: seen.append(type(mod).__name__))
    try:
        m = nn.Sequential(Affine(2))
        m(ember.ones(2, requires_grad=True)).sum().backward()
    finally:
        h.remove()
        module_mod._gh._global_is_full_backward_hook = None
    assert seen == ["Affine", "Sequential"]


def _noop_hook(*args):
    return None


def test_removable_handle_pickles():
    m = Affine()
    h = m.register_forward_hook(_noop_hook)
    h2 = pickle.loads(pickle.dumps(h))
    assert h2.id == h.id
    h2.remove()  # the unpickled handle points at a copy of the dict: harmless
    assert h.id in m._forward_hooks
