// Unary elementwise ops without extra arguments: ember.op(input, *, out=None), Tensor.op(),
// Tensor.op_() and the unary operators (-t, abs(t), ~t, +t).
#include <string>

#include "api/compare.h"
#include "api/unary.h"
#include "bindings/elementwise_bindings.h"

namespace ember {

namespace {

using UnaryFn = Tensor (*)(const Tensor&, const Tensor&);

struct UnaryEntry {
  const char* name;
  UnaryFn fn;
  UnaryForms forms;
  const char* alias = nullptr;  // a second name with the same forms (arcsin for asin)
  const char* doc = nullptr;    // else kDocs has it
};

// NumPy's names, which torch also binds (torch.arcsin is torch.asin).
const char* float_unary_alias(const char* name) {
  static const char* const kAliases[][2] = {{"asin", "arcsin"},   {"acos", "arccos"},
                                            {"atan", "arctan"},   {"asinh", "arcsinh"},
                                            {"acosh", "arccosh"}, {"atanh", "arctanh"}};
  for (const auto& a : kAliases) {
    if (std::string(a[0]) == name) return a[1];
  }
  return nullptr;
}

#define EMBER_UNARY(name) [](const Tensor& a, const Tensor& o) { return ember::name(a, o); }

struct Doc {
  const char* name;
  const char* text;
};
// The line after each signature of the ops outside the table (the float unary ops have theirs
// in their rows of tables/unary.def).
const Doc kDocs[] = {
    {"square", "x * x (pow(x, 2): bool gives int64)."},
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

void init_unary(py::module_& m, TensorClass& cls) {
  const UnaryForms kAll{};
  const UnaryForms kNoInplace{true, false, nullptr};
  const UnaryEntry entries[] = {
  // The float unary ops: ember.name(input, *, out=None), Tensor.name(), Tensor.name_(), one per
  // row of tables/unary.def, with the row's docstring.
#define EMBER_UNARY_OP(name, dtype, node, saves, backward, jvp, doc) \
  {#name, EMBER_UNARY(name), kAll, float_unary_alias(#name), doc},
#include "tables/unary.def"
#undef EMBER_UNARY_OP
      {"square", EMBER_UNARY(square), kAll},
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
    forms.doc = e.doc ? e.doc : doc_of(e.name);
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
