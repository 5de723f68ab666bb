// F.linear's fused form (one op: addmm / mm on the flattened input; its node is recorded by the
// api layer, which also writes F.linear's other forms and F.bilinear as composites).
#include <algorithm>
#include <string>

#include "ops/creation.h"
#include "ops/matmul.h"
#include "ops/nn/conv_util.h"
#include "ops/nn/linear.h"
#include "ops/shape_util.h"
#include "ops/views.h"

namespace ember {
namespace native {

void check_linear_args(const Tensor& input, const Tensor& weight) {
  EMBER_CHECK(input.dim() >= 1 && weight.dim() >= 1, "[linear] both arguments to linear need to ",
              "be at least 1D, but they are ", input.dim(), "D and ", weight.dim(), "D");
  EMBER_CHECK(weight.dim() <= 2, "[linear] t() expects a tensor with <= 2 dimensions, but self is ",
              weight.dim(), "D");
  EMBER_CHECK(input.dtype() == weight.dtype(), "[linear] expected m1 and m2 to have the same ",
              "dtype, but got: ", torch_cpp_type_name(input.dtype()),
              " != ", torch_cpp_type_name(weight.dtype()));
}

namespace {

// x2 (rows, in) @ weight^T + bias as one GEMM whose epilogue adds the bias, or undefined where
// that does not apply. addmm would first copy the broadcast bias into every row of the output
// and then read it back as the GEMM's C (beta 1): on a language model's 4096 x 256 -> 1024
// Linear those two extra passes over a 16 MB output cost 10% of the product. float32 on the CPU
// with unit column strides only (the epilogue GEMM's operands); one row stays a
// matrix-vector product (addmm's route).
Tensor fused_bias_linear(const Tensor& x2, const Tensor& weight, const Tensor& bias) {
  // (linear has checked that bias is 1-D.)
  if (!bias.defined() || bias.size(0) != weight.size(0)) return {};
  if (!x2.device().is_cpu() || x2.dtype() != ScalarType::Float32 || x2.size(0) < 2) return {};
  if (weight.device() != x2.device() || bias.device() != x2.device()) return {};
  const int64_t k = x2.size(1);
  if (k == 0 || weight.size(0) == 0) return {};
  // The GEMM's layout contract: a unit column stride and a row stride of at least k, which an
  // expanded (stride 0) input or weight does not have.
  if (x2.stride(1) != 1 || weight.stride(1) != 1 || bias.stride(0) != 1) return {};
  if (x2.stride(0) < k || weight.stride(0) < k) return {};
  Tensor out = empty({x2.size(0), weight.size(0)}, TensorOptions(x2.dtype(), x2.device()));
  GemmEpilogue e;
  e.bias = bias.data_ptr();
  linear_epilogue_into(out, x2, weight, e);
  return out;
}

}  // namespace

void linear_epilogue_into(const Tensor& out, const Tensor& x, const Tensor& w,
                          const GemmEpilogue& epilogue) {
  if (x.size(0) == 0) return;
  GemmParams p;
  p.dtype = x.dtype();
  p.m = x.size(0);
  p.n = w.size(0);
  p.k = w.size(1);
  p.a = {x.data_ptr(), 0, x.stride(0), 1};
  p.b = {w.data_ptr(), 0, 1, w.stride(0)};  // B = w^T: element (k, n) is w[n][k]
  p.c = {out.data_ptr(), 0, out.stride(0), 1};
  gemm_epilogue_stub(x.device(), p, epilogue);
}

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  check_linear_args(input, weight);
  EMBER_CHECK(weight.dim() == 2 && (!bias.defined() || bias.dim() == 1),
              "[linear] the fused form takes a 2-D weight and a 1-D bias, but got weight of size ",
              sizes_list(weight.sizes()), " and bias of size ",
              bias.defined() ? sizes_list(bias.sizes()) : std::string("None"));
  const int64_t in_features = weight.size(1), out_features = weight.size(0);
  const int64_t last = input.size(input.dim() - 1);
  const int64_t rows = input.dim() == 1 ? 1 : input.numel() / std::max<int64_t>(last, 1);
  EMBER_CHECK(last == in_features, "[linear] mat1 and mat2 shapes cannot be multiplied (", rows,
              "x", last, " and ", in_features, "x", out_features, ")");
  if (bias.defined()) {
    EMBER_CHECK(bias.size(0) == out_features || bias.size(0) == 1, "[linear] bias of size ",
                sizes_list(bias.sizes()), " does not match the ", out_features,
                " output features of weight ", sizes_list(weight.sizes()));
    EMBER_CHECK(bias.dtype() == input.dtype(), "[linear] self and mat2 must have the same dtype, ",
                "but got ", torch_cpp_type_name(bias.dtype()), " and ",
                torch_cpp_type_name(input.dtype()));
  }
  Tensor x2 = reshape(input, {-1, in_features});
  Tensor out2 = fused_bias_linear(x2, weight, bias);
  if (!out2.defined()) {
    Tensor wt = matrix_t(weight);
    out2 = bias.defined() ? addmm(bias, x2, wt) : mm(x2, wt);
  }
  DimVector shape = dims_slice(input.sizes(), 0, -1);
  shape.push_back(out_features);
  return view(out2, shape);
}

}  // namespace native
}  // namespace ember
