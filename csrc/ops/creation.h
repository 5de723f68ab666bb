// Tensor creation ops (the C++ side of ember.empty/zeros/ones/full/...).
#pragma once
#include "core/factory.h"
#include "core/scalar.h"
#include "core/tensor.h"

namespace ember {
namespace native {

struct TensorOptions {
  ScalarType dtype = ScalarType::Undefined;  // Undefined: the op's default
  Device device;
  TensorOptions() = default;
  TensorOptions(ScalarType d, Device dev = Device()) : dtype(d), device(dev) {}  // NOLINT
  ScalarType dtype_or(ScalarType fallback) const {
    return dtype == ScalarType::Undefined ? fallback : dtype;
  }
};

Tensor empty(IntArrayRef sizes, TensorOptions opts = {});
Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, TensorOptions opts = {});
Tensor zeros(IntArrayRef sizes, TensorOptions opts = {});
Tensor ones(IntArrayRef sizes, TensorOptions opts = {});
// dtype defaults to the Python number's natural dtype (int64, default float, bool, complex).
Tensor full(IntArrayRef sizes, const Scalar& value, TensorOptions opts = {});

// 0-d tensor of `dtype` (Undefined: natural dtype) holding `value`.
Tensor scalar_tensor(const Scalar& value, ScalarType dtype = ScalarType::Undefined);
// A Python number as a 0-d tensor that takes part in type promotion by category only.
Tensor wrap_scalar(const Scalar& value);

// Writes value into every element of t (fill_). Bumps t's version.
Tensor& fill_(Tensor& t, const Scalar& value);
Tensor& zero_(Tensor& t);
// fill_ / zero_ for a tensor the caller just allocated: no version bump (it starts at 0).
Tensor& fill_fresh(Tensor& t, const Scalar& value);
Tensor& zero_fresh(Tensor& t);

// Makes `out` hold `sizes` elements contiguously, reallocating only when its storage is too
// small (the out= convention). Returns out.
const Tensor& resize_output(const Tensor& out, IntArrayRef sizes, const char* op);

}  // namespace native
}  // namespace ember
