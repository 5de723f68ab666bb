"""Eager-mode quantization (``torch.ao.quantization``; also ``ember.quantization``): observers,
qconfigs and quantize_dynamic over Ember's int8 kernels (docs/design/quantization.md)."""

from .fake_quantize import (  # noqa: F401
    FakeQuantize,
    FixedQParamsFakeQuantize,
    default_affine_fixed_qparams_fake_quant,
    default_fake_quant,
    default_fixed_qparams_range_0to1_fake_quant,
    default_fixed_qparams_range_neg1to1_fake_quant,
    default_per_channel_weight_fake_quant,
    default_symmetric_fixed_qparams_fake_quant,
    default_weight_fake_quant,
    disable_fake_quant,
    disable_observer,
    enable_fake_quant,
    enable_observer,
)
from .fuse_modules import (  # noqa: F401
    fuse_conv_bn,
    fuse_conv_bn_eval,
    fuse_conv_bn_relu,
    fuse_known_modules,
    fuse_linear_bn,
    fuse_linear_bn_eval,
    fuse_modules,
    fuse_modules_qat,
    get_fuser_method,
)
from .observer import (  # noqa: F401
    FixedQParamsObserver,
    HistogramObserver,
    MinMaxObserver,
    MovingAverageMinMaxObserver,
    MovingAveragePerChannelMinMaxObserver,
    ObserverBase,
    PerChannelMinMaxObserver,
    PlaceholderObserver,
    default_affine_fixed_qparams_observer,
    default_dynamic_quant_observer,
    default_fixed_qparams_range_0to1_observer,
    default_fixed_qparams_range_neg1to1_observer,
    default_float_qparams_observer,
    default_float_qparams_observer_4bit,
    default_observer,
    default_per_channel_weight_observer,
    default_placeholder_observer,
    default_symmetric_fixed_qparams_observer,
    default_weight_observer,
)
from .qconfig import (  # noqa: F401
    QConfig,
    QConfigDynamic,
    default_dynamic_qconfig,
    default_qat_qconfig,
    default_qconfig,
    float16_dynamic_qconfig,
    float_qparams_weight_only_qconfig,
    float_qparams_weight_only_qconfig_4bit,
    get_default_qat_qconfig,
    get_default_qconfig,
    per_channel_dynamic_qconfig,
)
from .qconfig_mapping import (  # noqa: F401
    QConfigMapping,
    get_default_qat_qconfig_mapping,
    get_default_qconfig_mapping,
)
from .quantize import (  # noqa: F401
    add_observer_,
    convert,
    get_default_dynamic_quant_module_mappings,
    get_default_qat_module_mappings,
    get_default_static_quant_module_mappings,
    prepare,
    prepare_qat,
    propagate_qconfig_,
    quantize,
    quantize_dynamic,
    quantize_qat,
    swap_module,
)
from .report import int8_report  # noqa: F401
from .stubs import DeQuantStub, QuantStub, QuantWrapper  # noqa: F401
from .utils import quantize_weight  # noqa: F401
