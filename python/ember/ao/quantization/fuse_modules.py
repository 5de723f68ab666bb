"""fuse_modules: folds Conv/Linear + BatchNorm into one float layer and pairs a layer with its
ReLU, so that each group quantizes as one module (``torch.ao.quantization.fuse_modules``).
Fusion is for eval mode: a module in training raises, as PyTorch's non-QAT fusion."""

from __future__ import annotations

import copy

import ember
from ember import nn

__all__ = ["fuse_conv_bn_eval", "fuse_known_modules", "fuse_linear_bn_eval", "fuse_modules"]


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


def fuse_known_modules(mod_list, is_qat=False, additional_fuser_method_mapping=None):
    """[fused, Identity, ...] for a list of modules of a known pattern."""
    import ember.ao.nn.intrinsic as nni

    types = tuple(type(m) for m in mod_list)
    if is_qat:
        raise ValueError("fuse_modules: QAT fusion (is_qat=True) keeps batch norm trainable; "
                         "use fuse_modules_qat")
    if types == (nn.Linear, nn.ReLU):
        fused = nni.LinearReLU(*mod_list)
    elif types == (nn.Conv2d, nn.ReLU):
        fused = nni.ConvReLU2d(*mod_list)
    elif types == (nn.Conv1d, nn.ReLU):
        fused = nni.ConvReLU1d(*mod_list)
    elif types == (nn.Conv1d, nn.BatchNorm1d, nn.ReLU):
        fused = nni.ConvReLU1d(fuse_conv_bn_eval(mod_list[0], mod_list[1]), mod_list[2])
    elif types in ((nn.Conv2d, nn.BatchNorm2d), (nn.Conv1d, nn.BatchNorm1d)):
        fused = fuse_conv_bn_eval(*mod_list)
    elif types == (nn.Conv2d, nn.BatchNorm2d, nn.ReLU):
        fused = nni.ConvReLU2d(fuse_conv_bn_eval(mod_list[0], mod_list[1]), mod_list[2])
    elif types == (nn.Linear, nn.BatchNorm1d):
        fused = fuse_linear_bn_eval(*mod_list)
    else:
        names = ", ".join(t.__name__ for t in types)
        raise NotImplementedError(
            f"Cannot fuse modules: ({names}): the patterns are (Linear, ReLU), (Conv1d|Conv2d, "
            "ReLU), (Conv1d|Conv2d, BatchNorm1d|BatchNorm2d[, ReLU]) and (Linear, BatchNorm1d)")
    out = [fused] + [nn.Identity() for _ in mod_list[1:]]
    # Hooks of the first module move to the fused one, as PyTorch.
    for hook in mod_list[0]._forward_pre_hooks.values():
        fused.register_forward_pre_hook(hook)
    for hook in mod_list[-1]._forward_hooks.values():
        fused.register_forward_hook(hook)
    fused.train(mod_list[0].training)
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


def fuse_modules(model, modules_to_fuse, inplace=False, fuser_func=fuse_known_modules,
                 fuse_custom_config_dict=None):
    """Fuses each group of qualified names (a list of names, or a list of such lists)."""
    if not inplace:
        model = copy.deepcopy(model)
    groups = modules_to_fuse if modules_to_fuse and isinstance(modules_to_fuse[0],
                                                               (list, tuple)) else [modules_to_fuse]
    for group in groups:
        fused = fuser_func([_get(model, name) for name in group])
        for name, module in zip(group, fused):
            _set(model, name, module)
    return model
