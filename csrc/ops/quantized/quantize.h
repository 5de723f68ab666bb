// Quantized tensors: quantize (per tensor, per channel, dynamic), dequantize, int_repr and
// building one from integers (PyTorch's quantize_per_tensor & co.). The tensor model is in
// core/quantizer.h; see docs/design/quantization.md.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "core/quantizer.h"
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

// A new contiguous per-tensor quantized tensor, its integers uninitialised (a quantized op's
// output); scale and zero_point are checked against the dtype's range.
Tensor empty_per_tensor_quantized(IntArrayRef sizes, ScalarType dtype, double scale,
                                  int64_t zero_point, const char* op);

// Per-channel quantization with real-valued zero points (per_channel_affine_float_qparams:
// PyTorch's embedding weights): q = clamp(round(x / scale + zp)), quint8 or quint4x2.
Tensor quantize_per_channel_float_qparams(const Tensor& x, const std::vector<double>& scales,
                                          const std::vector<double>& zero_points, int64_t axis,
                                          ScalarType dtype);

// Two 4-bit values per byte, the even element in the low nibble (quint4x2's int_repr and file
// form), and back for n values.
Tensor pack_4bit(const Tensor& values);
Tensor unpack_4bit(const Tensor& packed, int64_t n);

// A quantized tensor of `sizes` from what int_repr() gave (packed for quint4x2) and its
// parameters (zero points as reals; integral ones for the affine schemes): pickling and files.
Tensor make_quantized_from_int_repr(const Tensor& ints, ScalarType dtype, QScheme scheme,
                                    const std::vector<double>& scales,
                                    const std::vector<double>& zero_points, int64_t axis,
                                    IntArrayRef sizes);

// float32 (q - zero_point) * scale.
Tensor dequantize(const Tensor& q);
// The integers, as a new int8 / uint8 / int32 tensor.
Tensor int_repr(const Tensor& q);
// A quantized tensor holding a copy of the integers `ints` (int8 -> qint8, uint8 -> quint8,
// int32 -> qint32) with the given parameters.
Tensor make_per_tensor_quantized(const Tensor& ints, double scale, int64_t zero_point);
Tensor make_per_channel_quantized(const Tensor& ints, const std::vector<double>& scales,
                                  const std::vector<int64_t>& zero_points, int64_t axis);

// q's quantization parameters; a TypeError naming `op` when q is not a (complete) quantized
// tensor.
const Quantizer& quantizer_of(const Tensor& q, const char* op);

// The integers of q as a plain tensor over the same memory (no copy).
Tensor quantized_storage_view(const Tensor& q);

// An op on quantized tensors that only moves integers (cat, stack, index_select, roll, gather,
// ...): requires every input to share one dtype and one quantizer, runs `op` on the integers,
// and gives its result those parameters again. Per-channel inputs are refused unless
// `per_channel_ok` (the caller checked that the channel axis stays in place). `op_name` names
// the op in errors.
template <typename F>
Tensor on_quantized_integers(const std::vector<Tensor>& inputs, const char* op_name, F&& op,
                             bool per_channel_ok = false);

// The fixed output parameters PyTorch's quantized kernels give "sigmoid" and "hardsigmoid"
// ([0, 1] on 256 steps) and "tanh" ([-1, 1]) for quint8 / qint8; false (untouched) otherwise.
bool fixed_output_qparams(const char* op, ScalarType dtype, double* scale, int64_t* zero_point);

// op(dequantize(q)) quantized again with q's dtype and parameters (or the fixed ones above): how a
// per-tensor quantized input takes the ops that are exact on the integers in real terms (relu,
// clamp, max pooling) or round once (averages, hardswish), as PyTorch's quantized kernels keep the
// input's parameters for them. With `out` defined (an in-place op), the integers land in out.
Tensor quantized_via_float(const Tensor& q, const char* op,
                           const std::function<Tensor(const Tensor&)>& f,
                           const Tensor& out = Tensor());

// The result of an integer op relabelled as quantized with `like`'s dtype and parameters.
Tensor relabel_quantized(const Tensor& ints, const Tensor& like);

void check_same_quantization(const std::vector<Tensor>& inputs, const char* op_name);

template <typename F>
Tensor on_quantized_integers(const std::vector<Tensor>& inputs, const char* op_name, F&& op,
                             bool per_channel_ok) {
  check_same_quantization(inputs, op_name);
  EMBER_CHECK(per_channel_ok || !quantizer_of(inputs[0], op_name).per_channel(), "[", op_name,
              "] is not supported on a per-channel quantized tensor: dequantize() first");
  std::vector<Tensor> ints;
  ints.reserve(inputs.size());
  for (const Tensor& t : inputs) ints.push_back(quantized_storage_view(t));
  return relabel_quantized(op(ints), inputs[0]);
}

}  // namespace native
}  // namespace ember
