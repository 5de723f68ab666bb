"""ember.backends.quantized: the quantized engine (``torch.backends.quantized``). Ember has one
set of int8 kernels (design/quantization.md), exact on every CPU level, which serves each of
PyTorch's engine names: they differ only in the default qconfigs they imply (7-bit activations
for ``x86`` / ``fbgemm``, 8-bit for ``onednn`` and ``qnnpack``; per-tensor weights for
``qnnpack``). PyTorch's x86 builds list ``qnnpack`` too (torchvision's quantized MobileNets set
it), so Ember accepts it and runs the same kernels."""

from . import ContextProp, PropModule, _install

__all__ = ["supported_engines"]  # and `engine`, a property of the module

supported_engines = ["qnnpack", "none", "onednn", "x86", "fbgemm"]


class QuantizedModule(PropModule):
    engine = ContextProp("quantized.engine")
    supported_engines = supported_engines


_install(__name__, QuantizedModule)
