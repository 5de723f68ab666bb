// Comparisons, logical and bitwise ops, isclose / allclose / equal and where.
#pragma once
#include "core/tensor.h"

namespace ember {
namespace native {

// Bool results (an out= / in-place tensor of another dtype receives 0 / 1).
Tensor eq(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor ne(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor lt(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor le(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor gt(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor ge(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor logical_and(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor logical_or(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor logical_xor(const Tensor& a, const Tensor& b, const Tensor& out = {});

// Integral and bool dtypes only.
Tensor bitwise_and(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor bitwise_or(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor bitwise_xor(const Tensor& a, const Tensor& b, const Tensor& out = {});
// Shifts by a negative amount or by at least the bit width give 0 (left) or the sign fill
// (right), as PyTorch.
Tensor bitwise_left_shift(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor bitwise_right_shift(const Tensor& a, const Tensor& b, const Tensor& out = {});
// The `~` operator: TypeError for floating and complex tensors (bitwise_not raises
// NotImplementedError there, as PyTorch).
Tensor invert(const Tensor& a);

// |a - b| <= atol + rtol * |b| elementwise; a and b must share a dtype.
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
               bool equal_nan = false);
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
              bool equal_nan = false);
// Same shape and equal values (after promotion); NaN != NaN.
bool equal(const Tensor& a, const Tensor& b);

// cond ? x : y with broadcasting; x and y promote as result_type(x, y). cond must be bool
// (uint8 is accepted, as PyTorch does with a deprecation warning).
Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y, const Tensor& out = {});

}  // namespace native
}  // namespace ember
