// Kernel stubs of the computed factories (ops/range_factories.h includes this header; the ops are
// ops/range_factories.cpp, the kernels kernels/cpu/range_kernels.cpp).
#pragma once
#include "core/scalar.h"
#include "core/tensor.h"
#include "dispatch/stub.h"
#include "dispatch/tensor_iterator.h"

namespace ember {
namespace native {

// Kernels write a contiguous 1-D `out`; element i is computed from i alone (parallel-safe).
using ArangeFn = void (*)(const Tensor& out, const Scalar& start, const Scalar& step);
using LinspaceFn = void (*)(const Tensor& out, const Scalar& start, const Scalar& end);
using LogspaceFn = void (*)(const Tensor& out, const Scalar& start, const Scalar& end, double base);
using ComplexFromRealFn = void (*)(TensorIterator& iter);  // out complex, inputs (a, b) real

EMBER_DECLARE_STUB(arange_stub, ArangeFn);
EMBER_DECLARE_STUB(linspace_stub, LinspaceFn);
EMBER_DECLARE_STUB(logspace_stub, LogspaceFn);
EMBER_DECLARE_STUB(complex_stub, ComplexFromRealFn);
EMBER_DECLARE_STUB(polar_stub, ComplexFromRealFn);

}  // namespace native
}  // namespace ember
