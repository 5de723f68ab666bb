"""QuantStub, DeQuantStub and QuantWrapper: where a statically quantized model enters and
leaves the quantized domain (``torch.ao.quantization.stubs``). Identities until convert()
swaps them for nn.quantized.Quantize / DeQuantize."""

from ember import nn

__all__ = ["DeQuantStub", "QuantStub", "QuantWrapper"]


class QuantStub(nn.Module):
    """Before calibration, an identity that an observer watches; after convert(), a Quantize
    with the observed scale and zero point."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class DeQuantStub(nn.Module):
    """An identity that convert() turns into a DeQuantize."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class QuantWrapper(nn.Module):
    """``module`` between a QuantStub and a DeQuantStub, taking over its qconfig."""

    def __init__(self, module):
        super().__init__()
        qconfig = getattr(module, "qconfig", None)
        self.add_module("quant", QuantStub(qconfig))
        self.add_module("dequant", DeQuantStub(qconfig))
        self.add_module("module", module)
        self.train(module.training)

    def forward(self, X):
        return self.dequant(self.module(self.quant(X)))
