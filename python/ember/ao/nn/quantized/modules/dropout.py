"""Quantized Dropout (``torch.ao.nn.quantized.Dropout``): an identity, so that a model whose
float version has dropout runs on quantized tensors in train and eval mode alike."""

from ember import nn

__all__ = ["Dropout"]


class Dropout(nn.Dropout):
    """Returns its quantized input unchanged (dropout is a training-time regulariser; the
    quantized model only infers)."""

    def forward(self, input):
        return input

    def _get_name(self):
        return "QuantizedDropout"

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return cls(mod.p, mod.inplace)

    @classmethod
    def from_reference(cls, mod, scale, zero_point):
        return cls(mod.p, mod.inplace)
