// F.linear (one op with one node, LinearBackward0) and F.bilinear (a composite of recorded ops).
#include "autograd/derivatives/nn_conv.h"
#include "autograd/variable.h"
#include "ops/elementwise.h"
#include "ops/matmul.h"
#include "ops/nn_conv.h"
#include "ops/nn_conv_util.h"
#include "ops/shape_util.h"
#include "ops/views.h"

namespace ember {
namespace native {

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  EMBER_CHECK(input.dim() >= 1 && weight.dim() >= 1, "[linear] both arguments to linear need to ",
              "be at least 1D, but they are ", input.dim(), "D and ", weight.dim(), "D");
  EMBER_CHECK(weight.dim() <= 2, "[linear] t() expects a tensor with <= 2 dimensions, but self is ",
              weight.dim(), "D");
  EMBER_CHECK(input.dtype() == weight.dtype(), "[linear] expected m1 and m2 to have the same ",
              "dtype, but got: ", torch_cpp_type_name(input.dtype()),
              " != ", torch_cpp_type_name(weight.dtype()));
  if (weight.dim() == 1 || (bias.defined() && bias.dim() != 1)) {
    // Uncommon forms (a weight vector, a broadcast bias): the recorded composite.
    Tensor r = matmul(input, matrix_t(weight));
    return bias.defined() ? add(r, bias) : r;
  }
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
  if (autograd::should_record(input, weight, bias)) {
    return derivatives::linear(input, weight, bias);
  }
  Tensor x2 = reshape(input, {-1, in_features});
  Tensor wt = matrix_t(weight);
  Tensor out2 = bias.defined() ? addmm(bias, x2, wt) : mm(x2, wt);
  DimVector shape = dims_slice(input.sizes(), 0, -1);
  shape.push_back(out_features);
  return view(out2, shape);
}

Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                const Tensor& bias) {
  const char* op = "bilinear";
  EMBER_CHECK(input1.dim() == input2.dim(), "[", op, "] bilinear(): input dimensions do not ",
              "match: got ", input1.dim(), " and ", input2.dim());
  EMBER_CHECK(input1.dim() >= 1, "[", op, "] bilinear(): expected inputs of at least 1 dim");
  for (int64_t i = 0; i + 1 < input1.dim(); ++i) {
    EMBER_CHECK(input1.size(i) == input2.size(i), "[", op, "] bilinear(): input batch ",
                "dimensions do not match at dim ", i, ": got ", input1.size(i), " and ",
                input2.size(i));
  }
  EMBER_CHECK(weight.dim() == 3, "[", op, "] bilinear(): weight must be 3-D (out, in1, in2), ",
              "but got weight of size ", sizes_list(weight.sizes()));
  EMBER_CHECK(input1.size(input1.dim() - 1) == weight.size(1), "[", op,
              "] bilinear(): input1 size does not ", "match weight size: got ",
              input1.size(input1.dim() - 1), " but expected ", weight.size(1));
  EMBER_CHECK(input2.size(input2.dim() - 1) == weight.size(2), "[", op,
              "] bilinear(): input2 size does not ", "match weight size: got ",
              input2.size(input2.dim() - 1), " but expected ", weight.size(2));
  EMBER_CHECK(!bias.defined() || (bias.dim() >= 1 && bias.size(0) == weight.size(0)), "[", op,
              "] bilinear(): bias size does not match weight size: got ",
              bias.defined() && bias.dim() >= 1 ? bias.size(0) : 0, " but expected ",
              weight.size(0));
  const int64_t o = weight.size(0), i1 = weight.size(1), i2 = weight.size(2);
  // y[b, o] = sum_j (x1[b] @ W[:, i, :])[o, j] * x2[b, j]: one GEMM for x1 against all of W,
  // then a batched dot with x2.
  Tensor x1 = reshape(input1, {-1, i1}), x2 = reshape(input2, {-1, i2});
  Tensor wm = reshape(permute(weight, {1, 0, 2}), {i1, o * i2});
  Tensor t = view(mm(x1, wm), {x1.size(0), o, i2});
  Tensor y = view(bmm(t, unsqueeze(x2, 2)), {x1.size(0), o});
  DimVector shape = dims_slice(input1.sizes(), 0, -1);
  shape.push_back(o);
  y = reshape(y, shape);
  return bias.defined() ? add(y, bias) : y;
}

}  // namespace native
}  // namespace ember
