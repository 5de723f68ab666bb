// Unary elementwise ops without extra arguments: ember.op(input, *, out=None), Tensor.op(),
// Tensor.op_() and the unary operators (-t, abs(t), ~t, +t).
#include "bindings/elementwise_bindings.h"
#include "ops/compare_ops.h"
#include "ops/unary_ops.h"

namespace ember {

namespace {

using UnaryFn = Tensor (*)(const Tensor&, const Tensor&);

struct UnaryEntry {
  const char* name;
  UnaryFn fn;
  UnaryForms forms;
  const char* alias = nullptr;  // a second name with the same forms (arcsin for asin)
};

#define EMBER_UNARY(name) [](const Tensor& a, const Tensor& o) { return ember::name(a, o); }

}  // namespace

void init_elementwise_unary(py::module_& m, TensorClass& cls) {
  const UnaryForms kAll{};
  const UnaryForms kNoInplace{true, false, nullptr};
  const UnaryEntry entries[] = {
      {"exp", EMBER_UNARY(exp), kAll},
      {"exp2", EMBER_UNARY(exp2), kAll},
      {"expm1", EMBER_UNARY(expm1), kAll},
      {"log", EMBER_UNARY(log), kAll},
      {"log2", EMBER_UNARY(log2), kAll},
      {"log10", EMBER_UNARY(log10), kAll},
      {"log1p", EMBER_UNARY(log1p), kAll},
      {"sqrt", EMBER_UNARY(sqrt), kAll},
      {"rsqrt", EMBER_UNARY(rsqrt), kAll},
      {"reciprocal", EMBER_UNARY(reciprocal), kAll},
      {"square", EMBER_UNARY(square), kAll},
      {"sin", EMBER_UNARY(sin), kAll},
      {"cos", EMBER_UNARY(cos), kAll},
      {"tan", EMBER_UNARY(tan), kAll},
      {"asin", EMBER_UNARY(asin), kAll, "arcsin"},
      {"acos", EMBER_UNARY(acos), kAll, "arccos"},
      {"atan", EMBER_UNARY(atan), kAll, "arctan"},
      {"sinh", EMBER_UNARY(sinh), kAll},
      {"cosh", EMBER_UNARY(cosh), kAll},
      {"tanh", EMBER_UNARY(tanh), kAll},
      {"asinh", EMBER_UNARY(asinh), kAll, "arcsinh"},
      {"acosh", EMBER_UNARY(acosh), kAll, "arccosh"},
      {"atanh", EMBER_UNARY(atanh), kAll, "arctanh"},
      {"sigmoid", EMBER_UNARY(sigmoid), kAll},
      {"erf", EMBER_UNARY(erf), kAll},
      {"erfc", EMBER_UNARY(erfc), kAll},
      {"erfinv", EMBER_UNARY(erfinv), kAll},
      {"lgamma", EMBER_UNARY(lgamma), kAll},
      {"digamma", EMBER_UNARY(digamma), kAll},
      {"neg", EMBER_UNARY(neg), {true, true, "__neg__"}, "negative"},
      {"abs", EMBER_UNARY(abs), {true, true, "__abs__"}, "absolute"},
      {"sign", EMBER_UNARY(sign), kAll},
      {"sgn", EMBER_UNARY(sgn), kAll},
      {"floor", EMBER_UNARY(floor), kAll},
      {"ceil", EMBER_UNARY(ceil), kAll},
      {"trunc", EMBER_UNARY(trunc), kAll, "fix"},
      {"frac", EMBER_UNARY(frac), kAll},
      {"bitwise_not", EMBER_UNARY(bitwise_not), kAll},
      {"logical_not", EMBER_UNARY(logical_not), kAll},
      {"conj_physical", EMBER_UNARY(conj_physical), kAll},
      {"angle", EMBER_UNARY(angle), kNoInplace},
      {"isnan", EMBER_UNARY(isnan), kNoInplace},
      {"isinf", EMBER_UNARY(isinf), kNoInplace},
      {"isfinite", EMBER_UNARY(isfinite), kNoInplace},
      {"isposinf", EMBER_UNARY(isposinf), kNoInplace},
      {"isneginf", EMBER_UNARY(isneginf), kNoInplace},
      {"signbit", EMBER_UNARY(signbit), kNoInplace},
      {"isreal", EMBER_UNARY(isreal), kNoInplace},
  };
  for (const UnaryEntry& e : entries) {
    def_unary(m, cls, e.name, e.fn, e.forms);
    if (e.alias) def_unary(m, cls, e.alias, e.fn, {e.forms.method, e.forms.inplace, nullptr});
  }

  // ~t raises TypeError for floating tensors (bitwise_not raises NotImplementedError).
  cls.def("__invert__", [](const Tensor& a) {
    NoGilIfLarge nogil(a.numel());
    return invert(a);
  });
  m.def(
      "positive", [](const Tensor& a) { return positive(a); }, py::arg("input"));
  cls.def("positive", [](const Tensor& a) { return positive(a); });
  cls.def("__pos__", [](const Tensor& a) { return positive(a); });
}

}  // namespace ember
