// Which CPU capability level this translation unit is compiled for (core/cpu_capability.h).
// CMake compiles every SIMD kernel file once per level with -DEMBER_CPU_LEVEL=<n> and that
// level's instruction-set flags; everything else is the baseline build, level 0.
//
// Every kernel file and kernel header puts its code inside `inline namespace EMBER_CPU_NS`, so
// each level's copy of an inline function or template has its own symbol. Without it the linker
// would keep one copy of, say, vmath::exp for the whole library, perhaps the AVX-512 one, and the
// baseline kernels would call it on a CPU without AVX-512 (docs/design/cpu-dispatch.md).
#pragma once

#ifndef EMBER_CPU_LEVEL
#define EMBER_CPU_LEVEL 0
#endif

#if EMBER_CPU_LEVEL == 0
#define EMBER_CPU_NS cpu_default
#elif EMBER_CPU_LEVEL == 1
#define EMBER_CPU_NS cpu_avx2
#elif EMBER_CPU_LEVEL == 2
#define EMBER_CPU_NS cpu_avx512
#elif EMBER_CPU_LEVEL == 3
#define EMBER_CPU_NS cpu_avx512_vnni_bf16
#else
#error "EMBER_CPU_LEVEL must be 0..3"
#endif
