// Dropout ops (ops/nn/dropout.h). The kernel is in kernels/cpu/nn/dropout_kernels.cpp.
#include "ops/nn/dropout.h"

#include "dispatch/copy.h"
#include "ops/creation.h"
#include "ops/elementwise_common.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(dropout_stub, DropoutFn);
EMBER_DEFINE_STUB(dropout_backward_stub, DropoutBackwardFn);

void check_dropout_probability(double p) {
  EMBER_CHECK(p >= 0.0 && p <= 1.0,
              "[dropout] dropout probability has to be between 0 and 1, "
              "but got ",
              p);
}

void check_dropout_input(const Tensor& t, const char* op) {
  EMBER_CHECK_T(NotImplementedError, t.is_floating_point(), "[", op, "] not implemented for dtype ",
                dtype_name(t.dtype()), " (dropout needs a floating point input)");
}

std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, std::optional<bool> train,
                                          const Tensor& out, Generator* gen) {
  const char* op = "native_dropout";
  check_dropout_probability(p);
  check_dropout_input(input, op);
  const bool inplace = out.defined();
  EMBER_CHECK(!inplace || out.is_same(input), "[", op, "] out must be the input (in-place form)");
  const TensorOptions bool_opts(ScalarType::Bool, input.device());
  if (train.has_value() && !*train) {
    Tensor mask = ones(input.sizes(), bool_opts);
    return {inplace ? input : clone(input), mask};
  }
  Tensor mask = empty(input.sizes(), bool_opts);
  if (input.numel() == 0) return {inplace ? input : clone(input), mask};
  const double scale = p == 1.0 ? 0.0 : 1.0 / (1.0 - p);
  const uint64_t nblocks =
      (static_cast<uint64_t>(input.numel()) + kDropoutValuesPerBlock - 1) / kDropoutValuesPerBlock;
  const PhiloxState st = generator_or_default(gen).reserve(nblocks);
  const Tensor x = contiguous(input);
  if (inplace && input.is_contiguous()) {
    dropout_stub(input.device(), input, mask, x, p, scale, st);
    input.bump_version();
    return {input, mask};
  }
  Tensor result = empty(input.sizes(), TensorOptions(input.dtype(), input.device()));
  dropout_stub(input.device(), result, mask, x, p, scale, st);
  if (inplace) {
    copy_into(input, result, op);
    return {input, mask};
  }
  return {result, mask};
}

Tensor native_dropout_backward(const Tensor& grad, const Tensor& mask, double scale) {
  EMBER_CHECK(mask.dtype() == ScalarType::Bool,
              "[native_dropout_backward] Mask should be Bool "
              "Scalar Type ",
              dtype_name(mask.dtype()));
  auto iter =
      build_elementwise_typed("native_dropout_backward", grad.dtype(), Tensor(), {grad, mask});
  dropout_backward_stub(iter.device(), iter, scale);
  return finish_elementwise(iter, Tensor());
}

}  // namespace native
}  // namespace ember
