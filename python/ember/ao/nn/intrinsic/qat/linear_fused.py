"""Linear + BatchNorm1d for quantization-aware training (``torch.ao.nn.intrinsic.qat.
LinearBn1d``): the batch norm stays trainable; the weight is fake-quantized as it will be
once convert() folds the batch norm into it (see conv_fused for the design)."""

import ember
import ember.ao.nn.intrinsic as nni
from ember import nn
from ember.nn import functional as F
from ember.nn import init
from ember.nn.parameter import Parameter

__all__ = ["LinearBn1d"]


class LinearBn1d(nn.Linear):
    """Linear + BatchNorm1d for QAT (from nn.intrinsic.LinearBn1d); converts to a quantized
    Linear with the batch norm folded in. Forward: ``bn(linear(x, fq(W * s), 0) / s + b)``
    with ``s = gamma / running_std`` of the previous batches."""

    def __init__(self, in_features, out_features, bias=True, eps=1e-05, momentum=0.1,
                 freeze_bn=False, qconfig=None):
        nn.Linear.__init__(self, in_features, out_features, bias)
        if not qconfig:
            raise AssertionError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.freeze_bn = freeze_bn if self.training else True
        self.bn = nn.BatchNorm1d(out_features, eps, momentum, True, True)
        self.weight_fake_quant = self.qconfig.weight()
        self.reset_bn_parameters()
        if self.training and not freeze_bn:
            self.update_bn_stats()
        else:
            self.freeze_bn_stats()

    def reset_running_stats(self):
        self.bn.reset_running_stats()

    def reset_bn_parameters(self):
        self.bn.reset_running_stats()
        init.uniform_(self.bn.weight)
        init.zeros_(self.bn.bias)

    def update_bn_stats(self):
        self.freeze_bn = False
        self.bn.training = True
        return self

    def freeze_bn_stats(self):
        self.freeze_bn = True
        self.bn.training = False
        return self

    def _scale_factor(self):
        if self.bn.running_var is None:
            raise AssertionError("self.bn.running_var must not be None")
        return self.bn.weight / ember.sqrt(self.bn.running_var + self.bn.eps)

    def forward(self, input):
        # Scaling by the previous batches' running statistics keeps the fake-quantized weight
        # from jittering with each batch's (arXiv:1806.08342, p. 18).
        scale_factor = self._scale_factor()
        scaled_weight = self.weight_fake_quant(self.weight * scale_factor.reshape(-1, 1))
        linear_out = F.linear(input, scaled_weight, ember.zeros(self.out_features))
        linear_out_orig = linear_out / scale_factor.reshape(1, -1)
        if self.bias is not None:
            linear_out_orig = linear_out_orig + self.bias.reshape(1, -1)
        return self.bn(linear_out_orig)

    def train(self, mode=True):
        """Sets the mode, but leaves a frozen batch norm in eval."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        if not self.freeze_bn:
            for module in self.children():
                module.train(mode)
        return self

    def _folded_float(self):
        """The float Linear computing this module in eval (running statistics folded in, the
        weight scaled by forward's expression)."""
        with ember.no_grad():
            scale_factor = self._scale_factor()
            weight = self.weight * scale_factor.reshape(-1, 1)
            bias = self.bias if self.bias is not None else ember.zeros(self.out_features)
            bias = (bias - self.bn.running_mean) * scale_factor + self.bn.bias
        linear = nn.Linear(self.in_features, self.out_features)
        linear.weight = Parameter(weight.detach())
        linear.bias = Parameter(bias.detach())
        return linear

    def _for_convert(self):
        """The folded float Linear carrying the qconfig, weight fake quant and output observer
        that the quantized Linear's from_float reads."""
        linear = self._folded_float()
        linear.qconfig = self.qconfig
        linear.weight_fake_quant = self.weight_fake_quant
        if hasattr(self, "activation_post_process"):
            linear.activation_post_process = self.activation_post_process
        return linear

    def to_float(self):
        linear = self._folded_float()
        linear.train(self.training)
        return linear

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The QAT module of a fused float nn.intrinsic.LinearBn1d with a qconfig; it shares
        the float modules' parameters and buffers."""
        if type(mod) is not nni.LinearBn1d:
            raise AssertionError(f"qat.{cls.__name__}.from_float only works for "
                                 f"{nni.LinearBn1d.__name__}")
        if not hasattr(mod, "qconfig"):
            raise AssertionError("Input float module must have qconfig defined")
        if not mod.qconfig:
            raise AssertionError("Input float module must have a valid config")
        linear, bn = mod[0], mod[1]
        qat = cls(linear.in_features, linear.out_features, linear.bias is not None, bn.eps,
                  bn.momentum, False, mod.qconfig)
        qat.weight = linear.weight
        qat.bias = linear.bias
        qat.bn.weight = bn.weight
        qat.bn.bias = bn.bias
        qat.bn.running_mean = bn.running_mean
        qat.bn.running_var = bn.running_var
        qat.bn.num_batches_tracked = bn.num_batches_tracked
        return qat
