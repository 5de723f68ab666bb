# The SIMD kernel files: compiled once for the baseline (level 0, as part of libember's own
# sources) and once more for each higher CPU capability level below, into the same library.
# See docs/design/cpu-dispatch.md. A file on this list must keep all of its code inside
# `inline namespace EMBER_CPU_NS` (kernels/cpu/cpu_level.h), and so must every kernels/cpu
# header it includes.
set(EMBER_SIMD_KERNEL_SOURCES
  binary_div_kernels.cpp
  binary_float_kernels.cpp
  binary_kernels.cpp
  compare_kernels.cpp
  conj_copy_kernel.cpp
  copy_kernel.cpp
  fft_kernels.cpp
  fft_plan.cpp
  fill_kernel.cpp
  gemm_packed_kernels.cpp
  gemv_kernels.cpp
  logical_bitwise_kernels.cpp
  optim_kernels.cpp
  pow_kernels.cpp
  reduce_kernels.cpp
  reduce_logical_kernels.cpp
  reduce_loops.cpp
  reduce_minmax_kernels.cpp
  reduce_scan_kernels.cpp
  reduce_stats_kernels.cpp
  unary_basic_kernels.cpp
  unary_exp_log_kernels.cpp
  unary_predicate_kernels.cpp
  unary_special_kernels.cpp
  unary_trig_kernels.cpp
  nn/activation_backward_kernels.cpp
  nn/attention_kernels.cpp
  nn/activation_kernels.cpp
  nn/batch_norm_kernels.cpp
  nn/glu_prelu_kernels.cpp
  nn/loss_nll_kernels.cpp
  nn/loss_pointwise_kernels.cpp
  nn/norm_kernels.cpp
  nn/softmax_kernels.cpp
  quantized/int8_conv_kernels.cpp
  quantized/int8_gemm_kernels.cpp)
list(TRANSFORM EMBER_SIMD_KERNEL_SOURCES PREPEND ${CMAKE_CURRENT_LIST_DIR}/)

# Instruction-set flags per level (x86-64 microarchitecture levels, as defined by the psABI).
set(EMBER_CPU_LEVEL_NAMES default avx2 avx512 avx512_vnni_bf16)
set(EMBER_CPU_LEVEL_FLAGS_0 -march=x86-64-v2)
set(EMBER_CPU_LEVEL_FLAGS_1 -march=x86-64-v3)
set(EMBER_CPU_LEVEL_FLAGS_2 -march=x86-64-v4 -mprefer-vector-width=512)
set(EMBER_CPU_LEVEL_FLAGS_3 -march=x86-64-v4 -mavx512vnni -mavx512bf16 -mprefer-vector-width=512)
# The files worth a fourth copy: those whose code differs with VNNI or BF16 instructions.
set(EMBER_VNNI_BF16_KERNEL_SOURCES ${CMAKE_CURRENT_LIST_DIR}/quantized/int8_gemm_kernels.cpp
  ${CMAKE_CURRENT_LIST_DIR}/quantized/int8_conv_kernels.cpp)
