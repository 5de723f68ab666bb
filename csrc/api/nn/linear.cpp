// Public F.linear and F.bilinear (see nn_linear.h).
#include "api/nn/linear.h"

#include "api/autocast.h"
#include "api/elementwise.h"
#include "api/matmul.h"
#include "api/nn/conv_util.h"
#include "api/views.h"
#include "autograd/derivatives/nn/linear.h"
#include "autograd/variable.h"
#include "ops/shape_util.h"

namespace ember {

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  if (autocast::active()) {  // autocast: lower precision
    const Tensor x = autocast::lower(input), w = autocast::lower(weight), b = autocast::lower(bias);
    autocast::ExcludeGuard no_autocast;
    return ember::linear(x, w, b);
  }
  if (weight.dim() == 1 || (bias.defined() && bias.dim() != 1)) {
    // Uncommon forms (a weight vector, a broadcast bias): a composite of recorded ops.
    native::check_linear_args(input, weight);
    Tensor r = ember::matmul(input, ember::matrix_t(weight));
    return bias.defined() ? ember::add(r, bias) : r;
  }
  if (autograd::should_record(input, weight, bias)) {
    return derivatives::linear(input, weight, bias);
  }
  return native::linear(input, weight, bias);
}

Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                const Tensor& bias) {
  // Not on autocast's lists: PyTorch's bilinear runs in its inputs' dtype under autocast, so
  // the mm / bmm below must not be cast down.
  if (autocast::active()) {
    autocast::ExcludeGuard no_autocast;
    return ember::bilinear(input1, input2, weight, bias);
  }
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
  Tensor x1 = ember::reshape(input1, {-1, i1}), x2 = ember::reshape(input2, {-1, i2});
  Tensor wm = ember::reshape(ember::permute(weight, {1, 0, 2}), {i1, o * i2});
  Tensor t = ember::view(ember::mm(x1, wm), {x1.size(0), o, i2});
  Tensor y = ember::view(ember::bmm(t, ember::unsqueeze(x2, 2)), {x1.size(0), o});
  DimVector shape = dims_slice(input1.sizes(), 0, -1);
  shape.push_back(o);
  y = ember::reshape(y, shape);
  return bias.defined() ? ember::add(y, bias) : y;
}

}  // namespace ember
