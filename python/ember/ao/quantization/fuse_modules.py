"""fuse_modules: folds Conv/Linear + BatchNorm into one float layer and pairs a layer with its
ReLU, so that each group quantizes as one module (``torch.ao.quantization.fuse_modules``).
Fusion is for eval mode: a module in training raises, as PyTorch's non-QAT fusion.

fuse_modules_qat keeps the batch norm instead, as a fused float module (nn.intrinsic.ConvBn2d,
...) that prepare_qat turns into a QAT module training the batch norm with the fake-quantized
folded weight; convert() folds it at the end."""

from __future__ import annotations

import copy

import ember
from ember import nn

__all__ = ["fuse_conv_bn", "fuse_conv_bn_eval", "fuse_conv_bn_relu", "fuse_known_modules",
           "fuse_linear_bn", "fuse_linear_bn_eval", "fuse_modules", "fuse_modules_qat",
           "get_fuser_method"]


def _bn_factors(bn):
    scale = bn.weight.detach() / ember.sqrt(bn.running_var + bn.eps) if bn.affine else \
        1 / ember.sqrt(bn.running_var + bn.eps)
    shift = (bn.bias.detach() if bn.affine else ember.zeros_like(bn.running_mean)) - \
        bn.running_mean * scale
    return scale, shift


def fuse_conv_bn_eval(conv, bn):
    """A Conv2d computing conv followed by bn (running statistics)."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    scale, shift = _bn_factors(bn)
    with ember.no_grad():
        fused.weight.copy_(conv.weight * scale.reshape(-1, *([1] * (conv.weight.dim() - 1))))
        bias = conv.bias.detach() if conv.bias is not None else ember.zeros_like(shift)
        fused.bias = nn.Parameter(bias * scale + shift)
    return fused


def fuse_linear_bn_eval(linear, bn):
    """A Linear computing linear followed by a BatchNorm1d (running statistics)."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(linear)
    scale, shift = _bn_factors(bn)
    with ember.no_grad():
        fused.weight.copy_(linear.weight * scale.unsqueeze(1))
        bias = linear.bias.detach() if linear.bias is not None else ember.zeros_like(shift)
        fused.bias = nn.Parameter(bias * scale + shift)
    return fused


def _check_qat_bn(bn, channels, layer):
    if bn.num_features != channels:
        raise AssertionError(f"Output channel of {layer} must match num_features of "
                             f"{type(bn).__name__}")
    if not bn.affine:
        raise AssertionError(f"Only support fusing {type(bn).__name__} with affine set to True")
    if not bn.track_running_stats:
        raise AssertionError(f"Only support fusing {type(bn).__name__} with "
                             "tracking_running_stats set to True")


def fuse_conv_bn(is_qat, conv, bn):
    """Conv + BatchNorm: for QAT the fused nn.intrinsic.ConvBn1d/2d (the batch norm kept
    trainable), else one Conv with the batch norm folded in (eval only)."""
    import ember.ao.nn.intrinsic as nni

    if conv.training != bn.training:
        raise AssertionError("Conv and BN both must be in the same mode (train or eval).")
    if is_qat:
        _check_qat_bn(bn, conv.out_channels, type(conv).__name__)
        fused_module_class = {nn.Conv1d: nni.ConvBn1d, nn.Conv2d: nni.ConvBn2d}.get(type(conv))
        if fused_module_class is None:
            raise NotImplementedError(f"Cannot fuse train modules: {(conv, bn)}")
        return fused_module_class(conv, bn)
    return fuse_conv_bn_eval(conv, bn)


def fuse_conv_bn_relu(is_qat, conv, bn, relu):
    """Conv + BatchNorm + ReLU: for QAT nn.intrinsic.ConvBnReLU1d/2d, else ConvReLU1d/2d of
    the folded Conv (eval only)."""
    import ember.ao.nn.intrinsic as nni

    if not conv.training == bn.training == relu.training:
        raise AssertionError("Conv and BN both must be in the same mode (train or eval).")
    if is_qat:
        _check_qat_bn(bn, conv.out_channels, type(conv).__name__)
        fused_module = {nn.Conv1d: nni.ConvBnReLU1d, nn.Conv2d: nni.ConvBnReLU2d}.get(type(conv))
        if fused_module is None:
            raise NotImplementedError(f"Cannot fuse train modules: {(conv, bn, relu)}")
        return fused_module(conv, bn, relu)
    fused_module = {nn.Conv1d: nni.ConvReLU1d, nn.Conv2d: nni.ConvReLU2d}.get(type(conv))
    if fused_module is None:
        raise NotImplementedError(f"Cannot fuse eval modules: {(conv, bn, relu)}")
    return fused_module(fuse_conv_bn_eval(conv, bn), relu)


def fuse_linear_bn(is_qat, linear, bn):
    """Linear + BatchNorm1d: for QAT nn.intrinsic.LinearBn1d, else one Linear with the batch
    norm folded in (eval only)."""
    import ember.ao.nn.intrinsic as nni

    if linear.training != bn.training:
        raise AssertionError("Linear and BN both must be in the same mode (train or eval).")
    if is_qat:
        _check_qat_bn(bn, linear.out_features, "Linear")
        return nni.LinearBn1d(linear, bn)
    return fuse_linear_bn_eval(linear, bn)


def _sequential_wrapper2(name):
    """A fuser method putting two modules in the nn.intrinsic Sequential ``name`` (the same
    for QAT and post-training fusion)."""

    def fuser_method(is_qat, m1, m2):
        import ember.ao.nn.intrinsic as nni

        return getattr(nni, name)(m1, m2)

    return fuser_method


def _default_op_list_to_fuser_method():
    mapping = {
        (nn.Conv1d, nn.BatchNorm1d): fuse_conv_bn,
        (nn.Conv1d, nn.BatchNorm1d, nn.ReLU): fuse_conv_bn_relu,
        (nn.Conv2d, nn.BatchNorm2d): fuse_conv_bn,
        (nn.Conv2d, nn.BatchNorm2d, nn.ReLU): fuse_conv_bn_relu,
        (nn.Conv1d, nn.ReLU): _sequential_wrapper2("ConvReLU1d"),
        (nn.Conv2d, nn.ReLU): _sequential_wrapper2("ConvReLU2d"),
        (nn.Linear, nn.BatchNorm1d): fuse_linear_bn,
        (nn.Linear, nn.ReLU): _sequential_wrapper2("LinearReLU"),
        (nn.BatchNorm2d, nn.ReLU): _sequential_wrapper2("BNReLU2d"),
    }
    if hasattr(nn, "BatchNorm3d"):  # once ember.nn has it
        mapping[(nn.BatchNorm3d, nn.ReLU)] = _sequential_wrapper2("BNReLU3d")
    return mapping


def get_fuser_method(op_list, additional_fuser_method_mapping=None):
    """The fuser method ``f(is_qat, *modules)`` for a tuple of module types (the default
    patterns, overridden by ``additional_fuser_method_mapping``)."""
    mapping = {**_default_op_list_to_fuser_method(), **(additional_fuser_method_mapping or {})}
    fuser_method = mapping.get(op_list, None)
    if fuser_method is None:
        raise AssertionError(f"did not find fuser method for: {op_list} ")
    return fuser_method


def fuse_known_modules(mod_list, is_qat=False, additional_fuser_method_mapping=None):
    """[fused, Identity, ...] for a list of modules of a known pattern: (Conv1d|Conv2d,
    BatchNorm[, ReLU]), (Conv1d|Conv2d, ReLU), (Linear, BatchNorm1d), (Linear, ReLU) and
    (BatchNorm2d, ReLU). ``is_qat`` keeps the batch norms as trainable fused modules."""
    types = tuple(type(m) for m in mod_list)
    mapping = {**_default_op_list_to_fuser_method(), **(additional_fuser_method_mapping or {})}
    fuser_method = mapping.get(types)
    if fuser_method is None:
        names = ", ".join(t.__name__ for t in types)
        raise NotImplementedError(
            f"Cannot fuse modules: ({names}): the patterns are (Linear, ReLU), (Conv1d|Conv2d, "
            "ReLU), (Conv1d|Conv2d, BatchNorm1d|BatchNorm2d[, ReLU]), (Linear, BatchNorm1d) "
            "and (BatchNorm2d, ReLU)")
    fused = fuser_method(is_qat, *mod_list)
    # Hooks of the first module (pre) and the last (post) move to the fused one, as PyTorch;
    # a QAT fusion keeps those modules inside, where they would fire again.
    for hook in mod_list[0]._forward_pre_hooks.values():
        fused.register_forward_pre_hook(hook)
    mod_list[0]._forward_pre_hooks.clear()
    for hook in mod_list[-1]._forward_hooks.values():
        fused.register_forward_hook(hook)
    mod_list[-1]._forward_hooks.clear()
    fused.train(mod_list[0].training)
    out = [fused]
    for _ in mod_list[1:]:
        identity = nn.Identity()
        identity.training = mod_list[0].training
        out.append(identity)
    return out


def _get(model, name):
    for part in name.split("."):
        model = getattr(model, part)
    return model


def _set(model, name, module):
    *parents, last = name.split(".")
    for part in parents:
        model = getattr(model, part)
    setattr(model, last, module)


def _fuse_modules(model, modules_to_fuse, is_qat, inplace=False, fuser_func=fuse_known_modules,
                  fuse_custom_config_dict=None):
    if not inplace:
        model = copy.deepcopy(model)
    additional = (fuse_custom_config_dict or {}).get("additional_fuser_method_mapping", {})
    groups = modules_to_fuse if modules_to_fuse and isinstance(modules_to_fuse[0],
                                                               (list, tuple)) else [modules_to_fuse]
    for group in groups:
        fused = fuser_func([_get(model, name) for name in group], is_qat, additional)
        for name, module in zip(group, fused):
            _set(model, name, module)
    return model


def fuse_modules(model, modules_to_fuse, inplace=False, fuser_func=fuse_known_modules,
                 fuse_custom_config_dict=None):
    """Fuses each group of qualified names (a list of names, or a list of such lists), for
    post-training quantization: batch norms are folded (eval mode only). ``fuser_func(modules,
    is_qat, additional_fuser_method_mapping)`` makes each group's modules;
    ``fuse_custom_config_dict={"additional_fuser_method_mapping": {types: f}}`` adds patterns
    to the default one."""
    return _fuse_modules(model, modules_to_fuse, False, inplace, fuser_func,
                         fuse_custom_config_dict)


def fuse_modules_qat(model, modules_to_fuse, inplace=False, fuser_func=fuse_known_modules,
                     fuse_custom_config_dict=None):
    """fuse_modules for quantization-aware training (model in train mode): Conv/Linear +
    BatchNorm become nn.intrinsic.ConvBn*/ConvBnReLU*/LinearBn1d, whose batch norm keeps
    training after prepare_qat and is folded by convert()."""
    return _fuse_modules(model, modules_to_fuse, True, inplace, fuser_func,
                         fuse_custom_config_dict)
