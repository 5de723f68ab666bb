"""ember.backends.cpu: the CPU capability level Ember's SIMD kernels run at."""

import ember

__all__ = ["get_cpu_capability"]


def get_cpu_capability():
    """The instruction-set level the CPU kernels dispatch to, in PyTorch's spelling: "DEFAULT"
    (x86-64-v2), "AVX2", "AVX512" or "AVX512_VNNI_BF16" (the last is Ember's own: AVX-512 with
    VNNI and BF16 instructions). The highest level the CPU supports unless the environment
    variable EMBER_CPU_CAPABILITY (read at import, lower-case names) asks for a lower one."""
    return ember._C._get_cpu_capability().upper()
