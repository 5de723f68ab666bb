#include "ops/elementwise.h"

#include "ops/creation.h"
#include "ops/elementwise_common.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(add_stub, IterScalarFn);
EMBER_DEFINE_STUB(mul_stub, IterFn);
EMBER_DEFINE_STUB(div_true_stub, IterFn);

namespace {
void check_alpha(const char* op, ScalarType common, const Scalar& alpha) {
  if (common == ScalarType::Bool) {
    EMBER_CHECK(alpha.is_bool() || alpha.is_integral(), "[", op,
                "] Boolean alpha only supported for Boolean results.");
  } else if (is_integral(common, false)) {
    EMBER_CHECK(!alpha.is_floating() && !alpha.is_complex(), "[", op,
                "] For integral input tensors, argument alpha must not be a floating point "
                "number.");
  } else if (!is_complex(common)) {
    EMBER_CHECK(!alpha.is_complex(), "[", op,
                "] For non-complex input tensors, argument alpha must not be a complex number.");
  }
}
}  // namespace

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha, const Tensor& out) {
  auto iter = build_elementwise("add", ResultKind::Promote, out, {a, b});
  check_alpha("add", iter.common_dtype(), alpha);
  add_stub(iter.device(), iter, alpha);
  return finish_elementwise(iter, out);
}

Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha, const Tensor& out) {
  EMBER_CHECK(a.dtype() != ScalarType::Bool || b.dtype() != ScalarType::Bool,
              "[sub] Subtraction, the `-` operator, with two bool tensors is not supported. "
              "Use the `^` or `logical_xor()` operator instead.");
  auto iter = build_elementwise("sub", ResultKind::Promote, out, {a, b});
  check_alpha("sub", iter.common_dtype(), alpha);
  Scalar neg = alpha.is_complex()    ? Scalar(-alpha.to_complex())
               : alpha.is_floating() ? Scalar(-alpha.to_double())
                                     : Scalar(-alpha.to_int64());
  add_stub(iter.device(), iter, neg);
  return finish_elementwise(iter, out);
}

Tensor mul(const Tensor& a, const Tensor& b, const Tensor& out) {
  auto iter = build_elementwise("mul", ResultKind::Promote, out, {a, b});
  mul_stub(iter.device(), iter);
  return finish_elementwise(iter, out);
}

Tensor div(const Tensor& a, const Tensor& b, const Tensor& out) {
  auto iter = build_elementwise("div", ResultKind::PromoteToFloat, out, {a, b});
  div_true_stub(iter.device(), iter);
  return finish_elementwise(iter, out);
}

}  // namespace native
}  // namespace ember
