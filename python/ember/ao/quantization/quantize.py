"""The eager-mode workflows (``torch.ao.quantization.quantize``): qconfig propagation, module
swapping, and quantize_dynamic."""

from __future__ import annotations

import copy
import itertools

import ember
from ember import nn

from .qconfig import default_dynamic_qconfig

__all__ = ["convert", "get_default_dynamic_quant_module_mappings", "propagate_qconfig_",
           "quantize_dynamic", "swap_module"]


def get_default_dynamic_quant_module_mappings():
    """float module type -> its dynamically quantized counterpart."""
    import ember.ao.nn.quantized.dynamic as nnqd

    return {nn.Linear: nnqd.Linear, nn.MultiheadAttention: nnqd.MultiheadAttention}


def propagate_qconfig_(module, qconfig_dict=None, prepare_custom_config_dict=None):
    """Sets ``qconfig`` on every submodule: the entry for its exact type, overridden by the entry
    for its qualified name, else its parent's."""
    qconfig_dict = qconfig_dict or {}

    def visit(m, parent_qconfig, prefix):
        qconfig = qconfig_dict.get(type(m), parent_qconfig)
        qconfig = qconfig_dict.get(prefix, qconfig)
        qconfig = getattr(m, "qconfig", None) if qconfig is None and hasattr(m, "qconfig") \
            else qconfig
        m.qconfig = qconfig
        for name, child in m.named_children():
            visit(child, qconfig, prefix + "." + name if prefix else name)

    visit(module, qconfig_dict.get("", None), "")


def swap_module(mod, mapping, custom_module_class_mapping=None):
    """``mapping[type(mod)].from_float(mod)`` when mod has a qconfig and its exact type is
    mapped (a subclass, e.g. MultiheadAttention's out_proj, is not); else mod itself."""
    if getattr(mod, "qconfig", None) is not None and type(mod) in mapping:
        new_mod = mapping[type(mod)].from_float(mod)
        # Hooks registered on the float module keep firing on its replacement.
        for hook in mod._forward_pre_hooks.values():
            new_mod.register_forward_pre_hook(hook)
        for hook in mod._forward_hooks.values():
            new_mod.register_forward_hook(hook)
        return new_mod
    return mod


def convert(module, mapping=None, inplace=False, remove_qconfig=True, is_reference=False,
            convert_custom_config_dict=None, use_precomputed_fake_quant=False):
    """Replaces every mapped submodule by its quantized counterpart."""
    if mapping is None:
        mapping = get_default_dynamic_quant_module_mappings()
    if not inplace:
        module = copy.deepcopy(module)
    _convert(module, mapping)
    if remove_qconfig:
        for m in module.modules():
            if hasattr(m, "qconfig"):
                del m.qconfig
    return module


def _convert(module, mapping):
    for name, child in list(module.named_children()):
        if type(child) not in mapping:
            _convert(child, mapping)
        swapped = swap_module(child, mapping)
        if swapped is not child:
            setattr(module, name, swapped)


def quantize_dynamic(model, qconfig_spec=None, dtype=None, mapping=None, inplace=False):
    """A copy of ``model`` (or the model itself, with ``inplace``) whose layers named in
    ``qconfig_spec`` (a set of types, or a dict of types / qualified names to QConfigs) are
    replaced by dynamically quantized ones: int8 weights, activations quantized per call. The
    default set is ``{nn.Linear}``."""
    dtype = ember.qint8 if dtype is None else dtype
    if dtype != ember.qint8:
        raise ValueError(f"quantize_dynamic: dtype {dtype} is not supported; Ember quantizes "
                         "dynamically to qint8 (keep the model float for float16)")
    if qconfig_spec is None:
        qconfig_spec = {nn.Linear: default_dynamic_qconfig}
    elif isinstance(qconfig_spec, set):
        qconfig_spec = dict(zip(qconfig_spec, itertools.repeat(default_dynamic_qconfig)))
    if mapping is None:
        mapping = get_default_dynamic_quant_module_mappings()
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    propagate_qconfig_(model, qconfig_spec)
    convert(model, mapping, inplace=True)
    return model

