"""Eager-mode quantization (``torch.ao.quantization``; also ``ember.quantization``): observers,
qconfigs and quantize_dynamic over Ember's int8 kernels (docs/design/quantization.md)."""

from .observer import (  # noqa: F401
    MinMaxObserver,
    MovingAverageMinMaxObserver,
    MovingAveragePerChannelMinMaxObserver,
    ObserverBase,
    PerChannelMinMaxObserver,
    PlaceholderObserver,
    default_dynamic_quant_observer,
    default_observer,
    default_per_channel_weight_observer,
    default_placeholder_observer,
    default_weight_observer,
)
from .qconfig import (  # noqa: F401
    QConfig,
    QConfigDynamic,
    default_dynamic_qconfig,
    default_qconfig,
    per_channel_dynamic_qconfig,
)
from .quantize import (  # noqa: F401
    convert,
    get_default_dynamic_quant_module_mappings,
    propagate_qconfig_,
    quantize_dynamic,
    swap_module,
)
from .utils import quantize_weight  # noqa: F401
