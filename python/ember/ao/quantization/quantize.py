"""The eager-mode workflows (``torch.ao.quantization.quantize``): qconfig propagation, module
swapping, and quantize_dynamic."""

from __future__ import annotations

import copy
import itertools

import ember
from ember import nn

from .qconfig import default_dynamic_qconfig

__all__ = ["add_observer_", "convert", "get_default_dynamic_quant_module_mappings",
           "get_default_qat_module_mappings", "get_default_static_quant_module_mappings",
           "prepare", "prepare_qat", "propagate_qconfig_", "quantize", "quantize_dynamic",
           "quantize_qat", "swap_module"]


def _check_engine_and_qconfigs(model, static):
    """The engine must be set, and every qconfig must make what Ember's int8 kernels take:
    qint8 weights and (static) quint8 activations. A mismatch is an error naming the module."""
    engine = ember.backends.quantized.engine
    if engine == "none":
        raise RuntimeError("quantization: ember.backends.quantized.engine is 'none'; set it to "
                           "one of 'x86', 'fbgemm' or 'onednn'")
    for name, m in model.named_modules():
        qconfig = getattr(m, "qconfig", None)
        if qconfig is None:
            continue
        weight = qconfig.weight()
        if isinstance(m, (nn.Embedding, nn.EmbeddingBag)):
            if getattr(weight, "qscheme", None) != ember.per_channel_affine_float_qparams or \
                    weight.dtype not in (ember.quint8, ember.quint4x2):
                raise RuntimeError(f"quantization: {name or 'the model'} is an embedding; "
                                   "embedding quantization is only supported with "
                                   "float_qparams_weight_only_qconfig (or its _4bit form): set "
                                   "that module's qconfig")
            continue
        if getattr(weight, "qscheme", None) == ember.per_channel_affine_float_qparams:
            continue  # a weight-only embedding qconfig set on a parent: its embeddings use it
        weight_dtype = getattr(weight, "dtype", None)
        if weight_dtype == ember.float16 and not static:
            continue  # float16 dynamic linears and RNNs
        if weight_dtype != ember.qint8:
            raise RuntimeError(f"quantization: the qconfig of {name or 'the model'} makes "
                               f"{weight_dtype} weights, but the {engine!r} engine's kernels take "
                               "qint8 weights")
        if static:
            act_dtype = getattr(qconfig.activation(), "dtype", None)
            if act_dtype != ember.quint8:
                raise RuntimeError(f"quantization: the qconfig of {name or 'the model'} makes "
                                   f"{act_dtype} activations, but the {engine!r} engine's "
                                   "kernels take quint8 activations")


def get_default_static_quant_module_mappings():
    """float (or fused, or QAT) module type -> its statically quantized counterpart."""
    import ember.ao.nn.intrinsic as nni
    import ember.ao.nn.intrinsic.qat as nniqat
    import ember.ao.nn.intrinsic.quantized as nniq
    import ember.ao.nn.qat as nnqat
    import ember.ao.nn.quantized as nnq
    from ember.ao.nn.quantized.modules import activation as nnq_activation

    from .stubs import DeQuantStub, QuantStub

    mapping = {
        QuantStub: nnq.Quantize, DeQuantStub: nnq.DeQuantize, nn.Linear: nnq.Linear,
        nn.Conv1d: nnq.Conv1d, nn.Conv2d: nnq.Conv2d, nn.ConvTranspose1d: nnq.ConvTranspose1d,
        nn.ConvTranspose2d: nnq.ConvTranspose2d, nn.ReLU: nnq.ReLU, nn.ReLU6: nnq.ReLU6,
        nn.BatchNorm2d: nnq.BatchNorm2d, nn.Dropout: nnq.Dropout, nn.ELU: nnq.ELU,
        nn.GroupNorm: nnq.GroupNorm, nn.Hardswish: nnq.Hardswish, nn.LayerNorm: nnq.LayerNorm,
        nn.LeakyReLU: nnq.LeakyReLU, nn.Sigmoid: nnq.Sigmoid, nn.Softmax: nnq.Softmax,
        # PyTorch leaves these two float, its quantized kernels fixing their output parameters;
        # Ember's float ops do not, so they convert to modules that do (see activation.py).
        nn.Hardsigmoid: nnq_activation._Hardsigmoid, nn.Tanh: nnq_activation._Tanh,
        nni.LinearReLU: nniq.LinearReLU, nni.ConvReLU1d: nniq.ConvReLU1d,
        nni.ConvReLU2d: nniq.ConvReLU2d, nni.BNReLU2d: nniq.BNReLU2d,
        nni.BNReLU3d: nniq.BNReLU3d,
        nnqat.Linear: nnq.Linear, nnqat.Conv1d: nnq.Conv1d, nnqat.Conv2d: nnq.Conv2d,
        nniqat.LinearReLU: nniq.LinearReLU, nniqat.ConvReLU1d: nniq.ConvReLU1d,
        nniqat.ConvReLU2d: nniq.ConvReLU2d, nniqat.ConvBnReLU1d: nniq.ConvReLU1d,
        nniqat.ConvBnReLU2d: nniq.ConvReLU2d,
        # These make exactly nnq.Conv1d / Conv2d / Linear, with the batch norm folded in.
        nniqat.ConvBn1d: nniq._FoldedConvBn1d, nniqat.ConvBn2d: nniq._FoldedConvBn2d,
        nniqat.LinearBn1d: nniq._FoldedLinearBn1d,
        nnq.FloatFunctional: nnq.QFunctional,
        nn.Embedding: nnq.Embedding, nn.EmbeddingBag: nnq.EmbeddingBag,
    }
    # The float modules Ember's nn does not have yet.
    for name in ("BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"):
        if hasattr(nn, name):
            mapping[getattr(nn, name)] = getattr(nnq, name)
    return mapping


def get_default_qat_module_mappings():
    """float (or fused) module type -> its quantization-aware training counterpart."""
    import ember.ao.nn.intrinsic as nni
    import ember.ao.nn.intrinsic.qat as nniqat
    import ember.ao.nn.qat as nnqat

    return {nn.Linear: nnqat.Linear, nn.Conv1d: nnqat.Conv1d, nn.Conv2d: nnqat.Conv2d,
            nni.LinearReLU: nniqat.LinearReLU, nni.ConvReLU1d: nniqat.ConvReLU1d,
            nni.ConvReLU2d: nniqat.ConvReLU2d, nni.ConvBn1d: nniqat.ConvBn1d,
            nni.ConvBn2d: nniqat.ConvBn2d, nni.ConvBnReLU1d: nniqat.ConvBnReLU1d,
            nni.ConvBnReLU2d: nniqat.ConvBnReLU2d, nni.LinearBn1d: nniqat.LinearBn1d}


def get_default_dynamic_quant_module_mappings():
    """float module type -> its dynamically quantized counterpart."""
    import ember.ao.nn.quantized as nnq
    import ember.ao.nn.quantized.dynamic as nnqd

    return {nn.Linear: nnqd.Linear, nn.MultiheadAttention: nnqd.MultiheadAttention,
            nn.LSTM: nnqd.LSTM, nn.GRU: nnqd.GRU, nn.LSTMCell: nnqd.LSTMCell,
            nn.GRUCell: nnqd.GRUCell, nn.RNNCell: nnqd.RNNCell, nn.Embedding: nnq.Embedding,
            nn.EmbeddingBag: nnq.EmbeddingBag}


def _check_qconfig(qconfig, module):
    """PyTorch's rule: transposed convolutions take per-tensor weights only."""
    if qconfig is None or not isinstance(module, (nn.ConvTranspose1d, nn.ConvTranspose2d)):
        return
    qscheme = getattr(qconfig.weight(), "qscheme", None)
    if qscheme in (ember.per_channel_symmetric, ember.per_channel_affine):
        raise AssertionError(
            f"{type(module).__name__}: per-channel weight observers are not supported for "
            "transposed convolution (nor by PyTorch): give it a qconfig with a per-tensor "
            "weight observer (default_weight_observer), as get_default_qconfig_mapping() does")


def propagate_qconfig_(module, qconfig_dict=None, prepare_custom_config_dict=None):
    """Sets ``qconfig`` on every submodule: its own ``qconfig`` attribute if it has one, else the
    entry for its qualified name, else for its exact type, else its parent's. ``qconfig_dict``
    may also be a QConfigMapping (module name > name regex > object type > global)."""
    from .qconfig_mapping import QConfigMapping

    mapping = qconfig_dict if isinstance(qconfig_dict, QConfigMapping) else None
    qconfig_dict = {} if mapping is not None else (qconfig_dict or {})

    def visit(m, parent_qconfig, prefix):
        if mapping is not None:
            found = mapping.qconfig_for(prefix, m)
            qconfig = parent_qconfig if found is ... else found
        else:
            qconfig = qconfig_dict.get(type(m), parent_qconfig)
            qconfig = qconfig_dict.get(prefix, qconfig)
        qconfig = getattr(m, "qconfig", qconfig)  # a module's own qconfig wins, as PyTorch
        _check_qconfig(qconfig, m)
        m.qconfig = qconfig
        for name, child in m.named_children():
            visit(child, qconfig, prefix + "." + name if prefix else name)

    visit(module, None if mapping is not None else qconfig_dict.get("", None), "")


def swap_module(mod, mapping, custom_module_class_mapping=None):
    """``mapping[type(mod)].from_float(mod)`` when mod has a qconfig and its exact type is
    mapped (a subclass, e.g. MultiheadAttention's out_proj, is not); else mod itself."""
    if getattr(mod, "qconfig", None) is not None and type(mod) in mapping:
        new_mod = mapping[type(mod)].from_float(mod)
        # Hooks registered on the float module keep firing on its replacement (not the
        # observer hooks of prepare()).
        for hook in mod._forward_pre_hooks.values():
            new_mod.register_forward_pre_hook(hook)
        for hook in mod._forward_hooks.values():
            if hook is not _observer_forward_hook:
                new_mod.register_forward_hook(hook)
        return new_mod
    return mod


def convert(module, mapping=None, inplace=False, remove_qconfig=True, is_reference=False,
            convert_custom_config_dict=None, use_precomputed_fake_quant=False):
    """Replaces every mapped submodule (with a qconfig) by its quantized counterpart: the static
    mapping by default, after prepare() and calibration."""
    if mapping is None:
        mapping = get_default_static_quant_module_mappings()
    if not inplace:
        module = copy.deepcopy(module)
    _convert(module, mapping)
    if remove_qconfig:
        for m in module.modules():
            if hasattr(m, "qconfig"):
                del m.qconfig
            # Observers go; the Identity of an unquantized FloatFunctional stays (it calls it).
            if not isinstance(m._modules.get("activation_post_process", nn.Identity()),
                              nn.Identity):
                del m.activation_post_process
            for key, hook in list(m._forward_hooks.items()):
                if hook is _observer_forward_hook:
                    del m._forward_hooks[key]
    return module


def _observer_forward_hook(module, input, output):
    return module.activation_post_process(output)


def add_observer_(module, qconfig_propagation_list=None):
    """Gives each module to be quantized (a mapped type with a qconfig) an output observer,
    ``activation_post_process``, run by a forward hook. Fused modules are observed whole.

    Hardsigmoid, Sigmoid, Softmax and Tanh get fixed output parameters instead (1/256 and 0,
    or 2/256 and 128 for tanh), which is what PyTorch's quantized kernels output: in training
    a FixedQParamsFakeQuantize, as PyTorch's prepare_qat, so that QAT sees that rounding; in
    eval a FixedQParamsObserver. Dropout is not observed (quantized, it is an identity)."""
    import ember.ao.nn.quantized as nnq

    from .fake_quantize import (
        default_fixed_qparams_range_0to1_fake_quant,
        default_fixed_qparams_range_neg1to1_fake_quant,
    )
    from .observer import (
        default_fixed_qparams_range_0to1_observer,
        default_fixed_qparams_range_neg1to1_observer,
    )
    from .stubs import DeQuantStub

    zero_to_one = (default_fixed_qparams_range_0to1_fake_quant,
                   default_fixed_qparams_range_0to1_observer)
    fixed_qparams = {nn.Hardsigmoid: zero_to_one, nn.Sigmoid: zero_to_one,
                     nn.Softmax: zero_to_one,
                     nn.Tanh: (default_fixed_qparams_range_neg1to1_fake_quant,
                               default_fixed_qparams_range_neg1to1_observer)}
    if qconfig_propagation_list is None:
        qconfig_propagation_list = set(get_default_static_quant_module_mappings())
    for child in module.children():
        has_qconfig = getattr(child, "qconfig", None) is not None
        if type(child) is nn.Dropout:
            continue
        if type(child) is nnq.FloatFunctional:
            # Its ops call activation_post_process on their results themselves.
            if has_qconfig:
                child.activation_post_process = child.qconfig.activation()
        elif type(child) in fixed_qparams:
            if has_qconfig:
                fake_quant, observer = fixed_qparams[type(child)]
                child.add_module("activation_post_process",
                                 fake_quant() if child.training else observer())
                child.register_forward_hook(_observer_forward_hook)
        elif type(child) in qconfig_propagation_list:
            # A DeQuantStub's output is float: nothing to observe (as PyTorch).
            if has_qconfig and type(child) is not DeQuantStub:
                child.add_module("activation_post_process", child.qconfig.activation())
                child.register_forward_hook(_observer_forward_hook)
        else:
            add_observer_(child, qconfig_propagation_list)


def prepare(model, inplace=False, allow_list=None, observer_non_leaf_module_list=None,
            prepare_custom_config_dict=None):
    """A copy of ``model`` (or the model itself) with observers after every module that
    convert() will quantize. Set ``model.qconfig`` (or submodules' qconfig) first; then run
    calibration data through the result."""
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model, None)
    _check_engine_and_qconfigs(model, static=True)
    if not any(getattr(m, "qconfig", None) for m in model.modules()):
        import warnings

        warnings.warn("None of the submodule got qconfig applied. Make sure you passed correct "
                      "configuration through `qconfig_dict` or by assigning the `.qconfig` "
                      "attribute directly on submodules", stacklevel=2)
    add_observer_(model, allow_list)
    return model


def prepare_qat(model, mapping=None, inplace=False):
    """A copy of ``model`` (or the model itself) ready for quantization-aware training: its
    mapped layers swapped for QAT ones (fake-quantized weights) and fake quantization after
    every module that convert() will quantize. Set ``model.qconfig`` first (e.g.
    get_default_qat_qconfig('x86')); train; then convert(model.eval())."""
    if not inplace:
        model = copy.deepcopy(model)
    if mapping is None:
        mapping = get_default_qat_module_mappings()
    propagate_qconfig_(model, None)
    _check_engine_and_qconfigs(model, static=True)
    convert(model, mapping, inplace=True, remove_qconfig=False)
    add_observer_(model, set(get_default_static_quant_module_mappings()))
    return model


def quantize_qat(model, run_fn, run_args, inplace=False):
    """prepare_qat, run_fn(model, *run_args) for training, convert."""
    if not inplace:
        model = copy.deepcopy(model)
    model.train()
    prepare_qat(model, inplace=True)
    run_fn(model, *run_args)
    convert(model.eval(), inplace=True)
    return model


def quantize(model, run_fn, run_args, mapping=None, inplace=False):
    """prepare, run_fn(model, *run_args) for calibration, convert."""
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    prepare(model, inplace=True)
    run_fn(model, *run_args)
    convert(model, mapping, inplace=True)
    return model


def _convert(module, mapping):
    for name, child in list(module.named_children()):
        if type(child) not in mapping:
            _convert(child, mapping)
        swapped = swap_module(child, mapping)
        if swapped is not child:
            setattr(module, name, swapped)


def quantize_dynamic(model, qconfig_spec=None, dtype=None, mapping=None, inplace=False):
    """A copy of ``model`` (or the model itself, with ``inplace``) whose layers named in
    ``qconfig_spec`` (a set of types, a dict of types / qualified names to QConfigs, or a
    QConfigMapping) are replaced by dynamically quantized ones: int8 weights with activations
    quantized per call (``dtype=qint8``), or float16 weights (``dtype=float16``). The default
    set is ``{nn.Linear, nn.LSTM, nn.GRU}``."""
    from .qconfig import float16_dynamic_qconfig

    dtype = ember.qint8 if dtype is None else dtype
    if dtype not in (ember.qint8, ember.float16):
        raise ValueError(f"quantize_dynamic: dtype {dtype} is not supported: use ember.qint8 "
                         "or ember.float16")
    default = default_dynamic_qconfig if dtype == ember.qint8 else float16_dynamic_qconfig
    if qconfig_spec is None:  # PyTorch's default set
        qconfig_spec = {nn.Linear: default, nn.LSTM: default, nn.GRU: default,
                        nn.LSTMCell: default, nn.RNNCell: default, nn.GRUCell: default}
    elif isinstance(qconfig_spec, set):
        qconfig_spec = dict(zip(qconfig_spec, itertools.repeat(default)))
    if mapping is None:
        mapping = get_default_dynamic_quant_module_mappings()
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    propagate_qconfig_(model, qconfig_spec)
    _check_engine_and_qconfigs(model, static=False)
    convert(model, mapping, inplace=True)
    return model

