// ember.special's native ops: dtype rules and argument checks; the kernels are in
// kernels/cpu/special_*_kernels.cpp.
#include "ops/special.h"

#include <algorithm>

#include "ops/elementwise_common.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(special_bessel_stub, SpecialFn);
EMBER_DEFINE_STUB(special_erf_stub, SpecialFn);
EMBER_DEFINE_STUB(special_binary_stub, SpecialFn);
EMBER_DEFINE_STUB(special_poly_stub, SpecialFn);
EMBER_DEFINE_STUB(mvlgamma_stub, MvlgammaFn);

Tensor special_unary(SpecialOp op, const char* name, const Tensor& a, const Tensor& out) {
  EMBER_CHECK(op <= SpecialOp::entr, "[", name, "] is not a one-argument special function");
  auto iter = build_elementwise(name, ResultKind::PromoteToFloat, out, {a});
  if (op <= SpecialOp::airy_ai) {
    special_bessel_stub(iter.device(), iter, op, name);
  } else {
    special_erf_stub(iter.device(), iter, op, name);
  }
  return finish_elementwise(iter, out);
}

Tensor special_binary(SpecialOp op, const char* name, const Tensor& a, const Tensor& b,
                      const Tensor& out) {
  EMBER_CHECK(op >= SpecialOp::igamma, "[", name, "] is not a two-argument special function");
  const bool keeps_dtype = op == SpecialOp::igamma || op == SpecialOp::igammac;
  auto iter = build_elementwise(
      name, keeps_dtype ? ResultKind::Promote : ResultKind::PromoteToFloat, out, {a, b});
  if (op <= SpecialOp::zeta) {
    special_binary_stub(iter.device(), iter, op, name);
  } else {
    special_poly_stub(iter.device(), iter, op, name);
  }
  return finish_elementwise(iter, out);
}

// mvlgamma sums p log-gammas per element, so its cost is p times the element count; PyTorch
// materialises the same p terms per element, as a tensor. Past this much work the call would run
// for minutes (the CI fuzzer found p = 2^63 - 2 on a scalar hanging), so it is refused.
constexpr int64_t kMvlgammaMaxTerms = int64_t(1) << 26;

Tensor mvlgamma(const Tensor& a, int64_t p, const Tensor& out) {
  EMBER_CHECK(p >= 1, "[mvlgamma] p has to be greater than or equal to 1, got p = ", p);
  const int64_t elements = std::max<int64_t>(a.numel(), 1);
  EMBER_CHECK(p <= kMvlgammaMaxTerms / elements, "[mvlgamma] p = ", p, " over ", a.numel(),
              " elements needs p log-gamma terms per element, more than the ", kMvlgammaMaxTerms,
              " terms Ember evaluates in one call; split the input into smaller tensors");
  auto iter = build_elementwise("mvlgamma", ResultKind::PromoteToFloat, out, {a});
  mvlgamma_stub(iter.device(), iter, p);
  return finish_elementwise(iter, out);
}

}  // namespace native
}  // namespace ember
