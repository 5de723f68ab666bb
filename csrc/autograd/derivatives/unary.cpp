// Derivatives of neg and abs (the float unary ops' formulas are their rows in tables/unary.def;
// the step functions, logit, nan_to_num and polygamma are in unary_piecewise.cpp).
#include "api/unary.h"
#include "api/complex.h"
#include "api/views.h"
#include "autograd/derivatives/elementwise.h"
#include "autograd/derivatives/formula.h"
#include "autograd/record.h"
#include "ops/unary.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;
using namespace formula;  // NOLINT(build/namespaces): tensor operators

Tensor neg(const Tensor& a, const Tensor& out) {
  auto node = autograd::new_node("NegBackward0", {a}, [](FunctionNode&, const variable_list& g) {
    return variable_list{-g[0]};
  });
  return autograd::record(node, {a}, out, "neg", [&] { return native::neg(a, out); });
}

Tensor abs(const Tensor& a, const Tensor& out) {
  auto node = autograd::new_node("AbsBackward0", {a}, [](FunctionNode& n, const variable_list& g) {
    return variable_list{g[0] * ember::sgn(n.saved(0))};
  });
  node->save(out.defined() && out.is_same(a) ? ember::clone(a) : a);
  return autograd::record(node, {a}, out, "abs", [&] { return native::abs(a, out); });
}

}  // namespace derivatives
}  // namespace ember
