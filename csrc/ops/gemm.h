// The GEMM interface and the other matrix-product kernel stubs, under their ops-side name: they
// are declared in kernels/gemm_stubs.h (the op files include that header directly).
#pragma once
#include "kernels/gemm_stubs.h"
