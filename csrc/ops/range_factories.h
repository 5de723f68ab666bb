// Factories that compute their values: arange, range, linspace, logspace, eye, and complex /
// polar, which build complex tensors from real ones.
#pragma once
#include "core/scalar.h"
#include "core/tensor.h"
#include "dispatch/stub.h"
#include "dispatch/tensor_iterator.h"
#include "kernels/range_factories_stubs.h"
#include "ops/creation.h"

namespace ember {
namespace native {

// The kernel stubs are in kernels/range_factories_stubs.h.

// [start, end) in steps of `step`. dtype Undefined: int64 when all three are integers, else the
// default dtype. The length is computed as PyTorch does (in double unless everything is int64).
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions opts = {});
// Deprecated torch.range: [start, end] inclusive; dtype defaults to the default dtype.
Tensor range(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions opts = {});
// `steps` evenly spaced values from start to end inclusive; dtype defaults to the default dtype
// (its complex counterpart when start or end is complex).
Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, TensorOptions opts = {});
// base ** linspace(start, end, steps).
Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base,
                TensorOptions opts = {});
// n x m with ones on the diagonal (the binding passes m = n for eye(n)).
Tensor eye(int64_t n, int64_t m, TensorOptions opts = {});

// real + i * imag (both float32 or both float64, broadcast).
Tensor complex(const Tensor& real, const Tensor& imag, const Tensor& out = {});
// abs * (cos(angle) + i sin(angle)).
Tensor polar(const Tensor& abs, const Tensor& angle, const Tensor& out = {});

}  // namespace native
}  // namespace ember
