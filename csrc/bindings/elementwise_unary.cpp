// Unary elementwise ops without extra arguments: ember.op(input, *, out=None), Tensor.op(),
// Tensor.op_() and the unary operators (-t, abs(t), ~t, +t).
#include <string>

#include "bindings/elementwise_bindings.h"
#include "api/compare_ops.h"
#include "api/unary_ops.h"

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

struct Doc {
  const char* name;
  const char* text;
};
// The line after each function's signature. Dtype rules are PyTorch's: the exp ... digamma
// group gives the default float dtype for integer and bool inputs.
const Doc kDocs[] = {
    {"exp", "e ** x (vectorised; within 2 ulp)."},
    {"exp2", "2 ** x."},
    {"expm1", "e ** x - 1, accurate near 0."},
    {"log", "Natural logarithm (vectorised; within 2 ulp)."},
    {"log2", "Base-2 logarithm."},
    {"log10", "Base-10 logarithm."},
    {"log1p", "log(1 + x), accurate near 0."},
    {"sqrt", "Square root."},
    {"rsqrt", "1 / sqrt(x)."},
    {"reciprocal", "1 / x."},
    {"square", "x * x (pow(x, 2): bool gives int64)."},
    {"sin", "Sine (float32 vectorised)."},
    {"cos", "Cosine (float32 vectorised)."},
    {"tan", "Tangent."},
    {"asin", "Arcsine."},
    {"acos", "Arccosine."},
    {"atan", "Arctangent."},
    {"sinh", "Hyperbolic sine."},
    {"cosh", "Hyperbolic cosine."},
    {"tanh", "Hyperbolic tangent (vectorised)."},
    {"asinh", "Inverse hyperbolic sine."},
    {"acosh", "Inverse hyperbolic cosine."},
    {"atanh", "Inverse hyperbolic tangent."},
    {"sigmoid", "1 / (1 + e ** -x) (vectorised)."},
    {"erf", "Error function (real dtypes)."},
    {"erfc", "Complementary error function (real dtypes)."},
    {"erfinv", "Inverse error function (real dtypes)."},
    {"lgamma", "log |Gamma(x)| (real dtypes)."},
    {"digamma", "Digamma (psi) function (real dtypes)."},
    {"neg", "-x (bool raises NotImplementedError)."},
    {"abs", "|x|; complex inputs give a real result."},
    {"sign", "-1, 0 or 1 (NaN gives 0; complex raises, use sgn)."},
    {"sgn", "sign for real dtypes, x / |x| for complex."},
    {"floor", "Largest integer <= x (integer dtypes: a copy)."},
    {"ceil", "Smallest integer >= x (integer dtypes: a copy)."},
    {"trunc", "Rounds toward zero (integer dtypes: a copy)."},
    {"frac", "x - trunc(x) (floating dtypes)."},
    {"bitwise_not", "~x for integer and bool dtypes."},
    {"logical_not", "x == 0, as bool."},
    {"conj_physical", "Complex conjugate (a copy; real dtypes: a copy)."},
    {"angle", "Argument of x: atan2(imag, real); real x gives 0 or pi."},
    {"isnan", "x != x, as bool."},
    {"isinf", "x is +inf or -inf, as bool."},
    {"isfinite", "x is neither inf nor NaN, as bool."},
    {"isposinf", "x is +inf, as bool (complex raises TypeError)."},
    {"isneginf", "x is -inf, as bool (complex raises TypeError)."},
    {"signbit", "The sign bit of x, as bool."},
    {"isreal", "imag(x) == 0, as bool (True for real dtypes)."},
};

const char* doc_of(const char* name) {
  for (const Doc& d : kDocs) {
    if (std::string(d.name) == name) return d.text;
  }
  return nullptr;
}

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
    UnaryForms forms = e.forms;
    forms.doc = doc_of(e.name);
    def_unary(m, cls, e.name, e.fn, forms);
    if (e.alias) {
      def_unary(m, cls, e.alias, e.fn, {forms.method, forms.inplace, nullptr, forms.doc});
    }
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
