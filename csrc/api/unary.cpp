// Public unary elementwise ops: the autograd node when recording, else the native op. The float
// ones are generated from their rows in tables/unary.def.
#include "api/unary.h"

#include "api/binary.h"
#include "api/complex.h"
#include "api/views.h"
#include "autograd/derivatives/elementwise.h"
#include "autograd/derivatives/formula.h"
#include "autograd/record.h"
#include "autograd/variable.h"

namespace ember {

namespace {

using autograd::FunctionNode;
using autograd::variable_list;
using namespace derivatives::formula;  // NOLINT(build/namespaces): the rows' operators

enum class Saves { SELF, RESULT };
// The row's backward: the input's gradient from (grad, self, result); the one not saved is
// undefined.
using Backward = Tensor (*)(const Tensor& grad, const Tensor& self, const Tensor& result);

// The row's forward-mode derivative: the output's tangent from (self_t, self, result).
using Jvp = Tensor (*)(const Tensor& self_t, const Tensor& self, const Tensor& result);

// Records a float unary op: a node named `node_name` whose formulas are the row's backward and
// JVP, the native op run once, and the one tensor the formulas read saved (for an in-place call
// the input is copied first, since the op overwrites it).
Tensor record_float_unary(const char* node_name, const char* op, const Tensor& self,
                          const Tensor& out, Saves saves, Backward backward, Jvp jvp,
                          Tensor (*forward)(const Tensor&, const Tensor&)) {
  auto node = autograd::new_node(
      node_name, {self}, [saves, backward](FunctionNode& n, const variable_list& g) {
        const Tensor saved = n.saved(0);
        return variable_list{saves == Saves::SELF ? backward(g[0], saved, Tensor())
                                                  : backward(g[0], Tensor(), saved)};
      });
  if (node->has_forward()) {
    node->set_jvp([saves, jvp](FunctionNode& n, const variable_list& t) {
      if (!t[0].defined()) return variable_list{Tensor()};
      const Tensor saved = n.saved(0);
      return variable_list{saves == Saves::SELF ? jvp(t[0], saved, Tensor())
                                                : jvp(t[0], Tensor(), saved)};
    });
  }
  if (saves == Saves::SELF)
    node->save(out.defined() && out.is_same(self) ? ember::clone(self) : self);
  Tensor result = autograd::record(node, {self}, out, op, [&] { return forward(self, out); });
  if (saves == Saves::RESULT) node->save(result, /*is_output=*/true);
  return result;
}

}  // namespace

#define EMBER_UNARY_OP(name, dtype, node, saves, backward, jvp, doc)                   \
  Tensor name(const Tensor& self, const Tensor& out) {                                 \
    if (!autograd::should_record(self)) return native::name(self, out);                \
    return record_float_unary(                                                         \
        #node, #name, self, out, Saves::saves,                                         \
        [](const Tensor& grad, const Tensor& self, const Tensor& result) -> Tensor {   \
          (void)self;                                                                  \
          (void)result;                                                                \
          return backward;                                                             \
        },                                                                             \
        [](const Tensor& self_t, const Tensor& self, const Tensor& result) -> Tensor { \
          (void)self;                                                                  \
          (void)result;                                                                \
          return jvp;                                                                  \
        },                                                                             \
        [](const Tensor& t, const Tensor& o) { return native::name(t, o); });          \
  }
#include "tables/unary.def"
#undef EMBER_UNARY_OP

#define EMBER_DEFINE_RECORDED_UNARY_OP(name)                          \
  Tensor name(const Tensor& a, const Tensor& out) {                   \
    if (autograd::should_record(a)) return derivatives::name(a, out); \
    return native::name(a, out);                                      \
  }
EMBER_DEFINE_RECORDED_UNARY_OP(neg)
EMBER_DEFINE_RECORDED_UNARY_OP(sgn)
EMBER_DEFINE_RECORDED_UNARY_OP(frac)
EMBER_DEFINE_RECORDED_UNARY_OP(abs)
EMBER_DEFINE_RECORDED_UNARY_OP(angle)
#undef EMBER_DEFINE_RECORDED_UNARY_OP

// Piecewise-constant ops that keep the input's dtype: recorded with zero gradients, as PyTorch.
#define EMBER_DEFINE_STEP_UNARY_OP(name, node)                                  \
  Tensor name(const Tensor& a, const Tensor& out) {                             \
    if (autograd::should_record(a)) {                                           \
      return derivatives::zero_gradient(                                        \
          node, #name, a, out,                                                  \
          [](const Tensor& t, const Tensor& o) { return native::name(t, o); }); \
    }                                                                           \
    return native::name(a, out);                                                \
  }
EMBER_DEFINE_STEP_UNARY_OP(floor, "FloorBackward0")
EMBER_DEFINE_STEP_UNARY_OP(ceil, "CeilBackward0")
EMBER_DEFINE_STEP_UNARY_OP(round, "RoundBackward0")
EMBER_DEFINE_STEP_UNARY_OP(trunc, "TruncBackward0")
EMBER_DEFINE_STEP_UNARY_OP(sign, "SignBackward0")
#undef EMBER_DEFINE_STEP_UNARY_OP

Tensor conj_physical(const Tensor& a, const Tensor& out) {
  // The conjugate of a real tensor is the tensor itself; real inputs record nothing.
  if (!a.is_complex() && !out.defined()) return a;
  if (a.is_complex() && autograd::should_record(a)) return derivatives::conj_physical(a, out);
  return native::conj_physical(a, out);
}

Tensor square(const Tensor& a, const Tensor& out) {
  // PyTorch defines square as pow(a, 2) (its node is PowBackward0), so bool squares to int64
  // like bool * int does.
  return pow(a, Scalar(int64_t(2)), out);
}

Tensor round(const Tensor& a, int64_t decimals, const Tensor& out) {
  if (decimals == 0) return round(a, out);  // RoundBackward0
  if (autograd::should_record(a)) return derivatives::round(a, decimals, out);
  return native::round(a, decimals, out);
}

Tensor polygamma(int64_t n, const Tensor& a, const Tensor& out) {
  if (autograd::should_record(a)) return derivatives::polygamma(n, a, out);
  return native::polygamma(n, a, out);
}

Tensor logit(const Tensor& a, std::optional<double> eps, const Tensor& out) {
  if (autograd::should_record(a)) return derivatives::logit(a, eps, out);
  return native::logit(a, eps, out);
}

Tensor nan_to_num(const Tensor& a, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf, const Tensor& out) {
  if (autograd::should_record(a)) return derivatives::nan_to_num(a, nan, posinf, neginf, out);
  return native::nan_to_num(a, nan, posinf, neginf, out);
}

// clamp, clamp_min and clamp_max compute alike (derivatives::clamp runs native clamp) but are
// separate ops in PyTorch, with their own nodes.
Tensor clamp(const Tensor& a, const std::optional<Scalar>& min, const std::optional<Scalar>& max,
             const Tensor& out) {
  if (autograd::should_record(a)) return derivatives::clamp("ClampBackward1", a, min, max, out);
  return native::clamp(a, min, max, out);
}

Tensor clamp(const Tensor& a, const Tensor& min, const Tensor& max, const Tensor& out) {
  if (autograd::should_record(a, min, max)) {
    return derivatives::clamp("ClampBackward0", a, min, max, out);
  }
  return native::clamp(a, min, max, out);
}

Tensor clamp_min(const Tensor& a, const Scalar& min, const Tensor& out) {
  if (autograd::should_record(a)) {
    return derivatives::clamp("ClampMinBackward0", a, min, std::nullopt, out);
  }
  return native::clamp_min(a, min, out);
}

Tensor clamp_max(const Tensor& a, const Scalar& max, const Tensor& out) {
  if (autograd::should_record(a)) {
    return derivatives::clamp("ClampMaxBackward0", a, std::nullopt, max, out);
  }
  return native::clamp_max(a, max, out);
}

Tensor clamp_min(const Tensor& a, const Tensor& min, const Tensor& out) {
  if (autograd::should_record(a, min)) {
    return derivatives::clamp("ClampMinBackward1", a, min, Tensor(), out);
  }
  return native::clamp_min(a, min, out);
}

Tensor clamp_max(const Tensor& a, const Tensor& max, const Tensor& out) {
  if (autograd::should_record(a, max)) {
    return derivatives::clamp("ClampMaxBackward1", a, Tensor(), max, out);
  }
  return native::clamp_max(a, max, out);
}

}  // namespace ember
