"""QConfigMapping (``torch.ao.quantization.QConfigMapping``): which qconfig each part of a model
gets, by precedence global < object type < module name regex < module name (< module name and
object type and index, PyTorch's FX-only level, kept for round trips). Eager mode's ``prepare``,
``prepare_qat`` and ``quantize_dynamic`` accept one wherever they accept a qconfig dict."""

from __future__ import annotations

import re
from collections import OrderedDict

__all__ = ["QConfigMapping", "get_default_qat_qconfig_mapping", "get_default_qconfig_mapping"]

_GLOBAL = ""
_OBJECT_TYPE = "object_type"
_REGEX = "module_name_regex"
_NAME = "module_name"
_NAME_OBJECT_TYPE_ORDER = "module_name_object_type_order"


class QConfigMapping:
    """Set with ``set_global``, ``set_object_type``, ``set_module_name_regex``,
    ``set_module_name`` (each returns the mapping, so calls chain); ``None`` as a qconfig keeps
    that part float."""

    def __init__(self):
        self.global_qconfig = None
        self.object_type_qconfigs = OrderedDict()
        self.module_name_regex_qconfigs = OrderedDict()
        self.module_name_qconfigs = OrderedDict()
        self.module_name_object_type_order_qconfigs = OrderedDict()

    def set_global(self, global_qconfig):
        self.global_qconfig = global_qconfig
        return self

    def set_object_type(self, object_type, qconfig):
        self.object_type_qconfigs[object_type] = qconfig
        return self

    def set_module_name_regex(self, module_name_regex, qconfig):
        self.module_name_regex_qconfigs[module_name_regex] = qconfig
        return self

    def set_module_name(self, module_name, qconfig):
        self.module_name_qconfigs[module_name] = qconfig
        return self

    def set_module_name_object_type_order(self, module_name, object_type, index, qconfig):
        self.module_name_object_type_order_qconfigs[(module_name, object_type, index)] = qconfig
        return self

    def qconfig_for(self, name, module):
        """The qconfig of the module at qualified name ``name`` by this mapping's precedence,
        or ``...`` (Ellipsis) when no entry matches it (it then inherits its parent's)."""
        if name in self.module_name_qconfigs:
            return self.module_name_qconfigs[name]
        for pattern, qconfig in self.module_name_regex_qconfigs.items():
            if re.match(pattern, name):
                return qconfig
        if type(module) in self.object_type_qconfigs:
            return self.object_type_qconfigs[type(module)]
        if name == "":
            return self.global_qconfig
        return ...

    def __repr__(self):
        parts = [f"{type(self).__name__} (", f" global_qconfig\n  {self.global_qconfig}"]
        for label, entries in ((_OBJECT_TYPE, self.object_type_qconfigs),
                               (_REGEX, self.module_name_regex_qconfigs),
                               (_NAME, self.module_name_qconfigs),
                               (_NAME_OBJECT_TYPE_ORDER,
                                self.module_name_object_type_order_qconfigs)):
            parts.append(f" {label}_qconfigs")
            parts += [f"  {key}: {value}" for key, value in entries.items()]
        return "\n".join(parts) + "\n)"

    def to_dict(self):
        """PyTorch's dict form: {"": global, "object_type": [(type, qconfig)], ...}."""
        return {
            _GLOBAL: self.global_qconfig,
            _OBJECT_TYPE: list(self.object_type_qconfigs.items()),
            _REGEX: list(self.module_name_regex_qconfigs.items()),
            _NAME: list(self.module_name_qconfigs.items()),
            _NAME_OBJECT_TYPE_ORDER: [(*key, value) for key, value in
                                      self.module_name_object_type_order_qconfigs.items()],
        }

    @classmethod
    def from_dict(cls, qconfig_dict):
        mapping = cls()
        if _GLOBAL in qconfig_dict:
            mapping.set_global(qconfig_dict[_GLOBAL])
        for object_type, qconfig in qconfig_dict.get(_OBJECT_TYPE, []):
            mapping.set_object_type(object_type, qconfig)
        for regex, qconfig in qconfig_dict.get(_REGEX, []):
            mapping.set_module_name_regex(regex, qconfig)
        for name, qconfig in qconfig_dict.get(_NAME, []):
            mapping.set_module_name(name, qconfig)
        for name, object_type, index, qconfig in qconfig_dict.get(_NAME_OBJECT_TYPE_ORDER, []):
            mapping.set_module_name_object_type_order(name, object_type, index, qconfig)
        return mapping


def _with_transposed_convs_per_tensor(mapping, qconfig):
    """PyTorch's default mappings give transposed convolutions the global qconfig's activation
    observer with a per-tensor symmetric weight observer (they take no per-channel weights)."""
    from ember import nn

    from .observer import default_weight_observer
    from .qconfig import QConfig

    transposed = QConfig(activation=qconfig.activation, weight=default_weight_observer)
    for module_type in (nn.ConvTranspose1d, nn.ConvTranspose2d):
        mapping.set_object_type(module_type, transposed)
    return mapping


def get_default_qconfig_mapping(backend="x86", version=0):
    """The global post-training qconfig of ``backend`` (transposed convolutions with per-tensor
    weights), with PyTorch's fixed-parameter qconfigs for its sigmoid-like activations left to
    the observers prepare() attaches."""
    from .qconfig import get_default_qconfig

    qconfig = get_default_qconfig(backend, version)
    return _with_transposed_convs_per_tensor(QConfigMapping().set_global(qconfig), qconfig)


def get_default_qat_qconfig_mapping(backend="x86", version=1):
    from .qconfig import get_default_qat_qconfig

    qconfig = get_default_qat_qconfig(backend, version)
    return QConfigMapping().set_global(qconfig)
