// Comparisons, logical and bitwise ops, isclose / allclose / equal and where.
#include "ops/compare.h"

#include "kernels/elementwise_stubs.h"
#include "ops/elementwise_common.h"
#include "ops/unary.h"
#include "ops/views.h"

namespace ember {
namespace native {

namespace {

Tensor run_binary(const char* op, ResultKind kind, const DispatchStub<IterFn>& stub,
                  const Tensor& a, const Tensor& b, const Tensor& out) {
  auto iter = build_elementwise(op, kind, out, {a, b});
  stub(iter.device(), iter);
  return finish_elementwise(iter, out);
}

// Whether every element of a freshly allocated (dense) bool tensor is true.
bool all_true(const Tensor& t) {
  const auto* p = static_cast<const unsigned char*>(t.data_ptr());
  const int64_t n = t.numel();
  unsigned char acc = 1;
  for (int64_t i = 0; i < n; ++i) acc &= p[i];
  return acc != 0;
}

}  // namespace

#define EMBER_DEFINE_BOOL_BINARY(name, stub)                            \
  Tensor name(const Tensor& a, const Tensor& b, const Tensor& out) {    \
    return run_binary(#name, ResultKind::Bool, stub##_stub, a, b, out); \
  }
EMBER_DEFINE_BOOL_BINARY(eq, eq)
EMBER_DEFINE_BOOL_BINARY(ne, ne)
EMBER_DEFINE_BOOL_BINARY(lt, lt)
EMBER_DEFINE_BOOL_BINARY(le, le)
EMBER_DEFINE_BOOL_BINARY(gt, gt)
EMBER_DEFINE_BOOL_BINARY(ge, ge)
EMBER_DEFINE_BOOL_BINARY(logical_and, logical_and)
EMBER_DEFINE_BOOL_BINARY(logical_or, logical_or)
EMBER_DEFINE_BOOL_BINARY(logical_xor, logical_xor)
#undef EMBER_DEFINE_BOOL_BINARY

#define EMBER_DEFINE_PROMOTE_BINARY(name, stub)                            \
  Tensor name(const Tensor& a, const Tensor& b, const Tensor& out) {       \
    return run_binary(#name, ResultKind::Promote, stub##_stub, a, b, out); \
  }
EMBER_DEFINE_PROMOTE_BINARY(bitwise_and, bitwise_and)
EMBER_DEFINE_PROMOTE_BINARY(bitwise_or, bitwise_or)
EMBER_DEFINE_PROMOTE_BINARY(bitwise_xor, bitwise_xor)
EMBER_DEFINE_PROMOTE_BINARY(bitwise_left_shift, lshift)
EMBER_DEFINE_PROMOTE_BINARY(bitwise_right_shift, rshift)
#undef EMBER_DEFINE_PROMOTE_BINARY

Tensor invert(const Tensor& a) {
  EMBER_CHECK_T(TypeError, is_integral(a.dtype(), /*include_bool=*/true),
                "[bitwise_not] ~ (operator.invert) is only implemented on integer and "
                "Boolean-type tensors");
  return bitwise_not(a);
}

Tensor isclose(const Tensor& a, const Tensor& b_in, double rtol, double atol, bool equal_nan) {
  // A Python number is compared in a's dtype (PyTorch accepts only tensors here).
  const Tensor b = b_in.impl()->is_wrapped_number() ? to_dtype(b_in, a.dtype()) : b_in;
  EMBER_CHECK(a.dtype() == b.dtype(), "[isclose] ", dtype_name(a.dtype()), " did not match ",
              dtype_name(b.dtype()));
  EMBER_CHECK(rtol >= 0, "[isclose] rtol must be greater than or equal to zero, but got ", rtol);
  EMBER_CHECK(atol >= 0, "[isclose] atol must be greater than or equal to zero, but got ", atol);
  auto iter = build_elementwise("isclose", ResultKind::Bool, Tensor(), {a, b});
  isclose_stub(iter.device(), iter, rtol, atol, equal_nan);
  return finish_elementwise(iter, Tensor());
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  return all_true(isclose(a, b, rtol, atol, equal_nan));
}

bool equal(const Tensor& a, const Tensor& b) {
  if (!a.sizes().equals(b.sizes())) return false;
  return all_true(eq(a, b));
}

Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y, const Tensor& out) {
  EMBER_CHECK(cond.dtype() == ScalarType::Bool || cond.dtype() == ScalarType::UInt8,
              "[where] where expected condition to be a boolean tensor, but got a tensor with "
              "dtype ",
              dtype_name(cond.dtype()));
  const ScalarType common = result_type({x, y});
  auto iter = build_elementwise_typed(
      "where", common, out,
      {to_dtype(x, common), to_dtype(y, common), to_dtype(cond, ScalarType::Bool)});
  where_stub(iter.device(), iter);
  return finish_elementwise(iter, out);
}

}  // namespace native
}  // namespace ember
