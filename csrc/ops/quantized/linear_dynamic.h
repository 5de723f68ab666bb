// Dynamically quantized linear (PyTorch's quantized::linear_dynamic): int8 weights packed once
// per module; per call the float input is quantized to uint8 with parameters chosen from its
// own range, multiplied on the int8 GEMM and dequantized in the GEMM's epilogue, bias and ReLU
// included. See docs/design/quantization.md.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/tensor.h"
#include "kernels/quantized_stubs.h"

namespace ember {
namespace native {

struct QuantParams {
  float scale = 1.f;
  int32_t zero_point = 0;
};

// PyTorch's ChooseQuantizationParams (quant_utils.h): the affine parameters that map
// [min(min, 0), max(max, 0)] onto [qmin, qmax] with zero exactly representable; reduce_range
// halves the range first (7-bit activations on x86).
QuantParams choose_quantization_params(float min, float max, int32_t qmin, int32_t qmax,
                                       bool reduce_range);

// q = clamp(zero_point + nearbyint(w * (1 / scale)), -128, 127) of a float (N, K) weight, per
// tensor (scales and zero_points of one value) or per output channel (N values each): what
// quantize_per_tensor / quantize_per_channel(axis 0) give for qint8. Returns int8 (N, K).
Tensor quantize_weight_s8(const Tensor& weight, const std::vector<double>& scales,
                          const std::vector<int64_t>& zero_points);

// An int8 weight (N, K) with its quantization parameters and bias, packed for the int8 GEMM of
// the CPU level in use.
struct PackedLinearWeight {
  Tensor weight;                     // int8 (N, K), contiguous: what unpack() returns
  std::vector<double> scales;        // 1 (per tensor) or N (per channel)
  std::vector<int64_t> zero_points;  // as scales
  Tensor bias;                       // float32 (N,) or undefined
  PackedInt8Weights packed;
  std::vector<float> column_scales;         // N scales as float (per tensor repeated)
  std::vector<int32_t> column_zero_points;  // N, or empty when every zero point is 0
  bool per_channel = false;                 // qscheme per_channel_affine (axis 0)
};

std::shared_ptr<PackedLinearWeight> pack_linear_weight(const Tensor& weight_int8,
                                                       std::vector<double> scales,
                                                       std::vector<int64_t> zero_points,
                                                       bool per_channel, const Tensor& bias);

// uint8 activations for the int8 GEMM: m rows `lda` apart (lda >= int8_gemm_padded_k(k), zero
// beyond k), with their quantization parameters.
struct Int8Activations {
  const uint8_t* a = nullptr;
  int64_t m = 0, lda = 0;
  bool seven_bit = false;  // every value <= 127 (the faster product on AVX2)
  QuantParams params;
  // Or rows made on the fly, a block at a time (Int8GemmArgs::fill_a); `a` unused then.
  void (*fill)(const void* context, int64_t i0, int64_t i1, uint8_t* a, int64_t lda) = nullptr;
  const void* fill_context = nullptr;
};

// Where the GEMM's epilogue writes: floats, or (u8 set) uint8 requantized with scale and
// zero_point, rows `ldo` apart; ReLU first when `relu`.
struct Int8Output {
  float* f32 = nullptr;
  uint8_t* u8 = nullptr;
  int64_t ldo = 0;
  double scale = 1.0;
  int64_t zero_point = 0;
  bool relu = false;
};

// out (m x N) = act(dequant(a) @ dequant(w)^T + bias), optionally requantized: the int8 GEMM with
// its fused epilogue, parallel over the CPU's threads.
void int8_linear_gemm(const Int8Activations& a, const PackedLinearWeight& w, const Int8Output& out);

// y (..., N) = dequant(quant(x) @ dequant(w)^T) + bias, ReLU when `relu`. x (..., K) floating
// point; the result has x's dtype (computed in float32).
Tensor linear_dynamic(const Tensor& x, const PackedLinearWeight& w, bool reduce_range, bool relu);

// linear_dynamic into a preallocated out (m, N) float32 contiguous, x (m, K) float32 contiguous
// (the transformer fastpath's linears; no allocation but the uint8 copy of x).
void linear_dynamic_into(const Tensor& out, const Tensor& x, const PackedLinearWeight& w,
                         bool reduce_range, bool relu);

// The statically quantized linear (PyTorch's quantized::linear): a quint8 per-tensor input,
// the int8 GEMM with the float epilogue, then requantized to quint8 with the output's scale and
// zero point.
Tensor linear_quantized(const Tensor& q_input, const PackedLinearWeight& w, double out_scale,
                        int64_t out_zero_point, bool relu);

}  // namespace native
}  // namespace ember
