"""Parameters <-> one flat vector (``torch.nn.utils.convert_parameters``)."""

import ember
from ember import Tensor
from ember.nn.modules.module import _typename

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_param_device(param: Tensor, old_param_device):
    """-1 for CPU, the device index otherwise; raises if parameters sit on several devices."""
    device = param.device
    current = device.index if device.type != "cpu" else -1
    if current is None:
        current = 0
    if old_param_device is None:
        return current
    if current != old_param_device:
        raise TypeError(
            "Found two parameters on different devices, this is currently not supported."
        )
    return old_param_device


def parameters_to_vector(parameters) -> Tensor:
    """All parameters flattened and concatenated into one 1-D tensor (a copy)."""
    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.view(-1))
    return ember.cat(vec)


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Makes each parameter's data the matching slice of ``vec`` (views of it, as PyTorch)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected ember.Tensor, but got: {_typename(vec)}")
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param
