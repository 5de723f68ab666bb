// Quantized tensors: quantize (per tensor, per channel, dynamic), dequantize, int_repr and
// building one from integers (PyTorch's quantize_per_tensor & co.). The tensor model is in
// core/quantizer.h; see docs/design/quantization.md.
#pragma once
#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace ember {
namespace native {

// [qmin, qmax] of a quantized dtype (qint8: [-128, 127], quint8: [0, 255], qint32: int32's).
void quantized_range(ScalarType dtype, int64_t* qmin, int64_t* qmax);

// q = clamp(zero_point + nearbyint(x * (1 / scale)), qmin, qmax), computed in float32 as
// PyTorch's quantize_val; NaN lands on qmin.
Tensor quantize_per_tensor(const Tensor& x, double scale, int64_t zero_point, ScalarType dtype);
Tensor quantize_per_channel(const Tensor& x, const std::vector<double>& scales,
                            const std::vector<int64_t>& zero_points, int64_t axis,
                            ScalarType dtype);
// Parameters from x's own range (choose_quantization_params), then quantize_per_tensor.
Tensor quantize_per_tensor_dynamic(const Tensor& x, ScalarType dtype, bool reduce_range);

// float32 (q - zero_point) * scale.
Tensor dequantize(const Tensor& q);
// The integers, as a new int8 / uint8 / int32 tensor.
Tensor int_repr(const Tensor& q);
// A quantized tensor holding a copy of the integers `ints` (int8 -> qint8, uint8 -> quint8,
// int32 -> qint32) with the given parameters.
Tensor make_per_tensor_quantized(const Tensor& ints, double scale, int64_t zero_point);
Tensor make_per_channel_quantized(const Tensor& ints, const std::vector<double>& scales,
                                  const std::vector<int64_t>& zero_points, int64_t axis);

// The integers of q as a plain tensor over the same memory (no copy).
Tensor quantized_storage_view(const Tensor& q);

}  // namespace native
}  // namespace ember
