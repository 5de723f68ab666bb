// Comparisons (== != < <= > >=), logical and bitwise ops (& | ^ << >>), isclose / allclose /
// equal and the three-argument where (ember._where; ember.where is Python, see _elementwise.py).
#include "api/compare.h"
#include "bindings/elementwise_bindings.h"

namespace ember {

namespace {

using BinaryFn = Tensor (*)(const Tensor&, const Tensor&, const Tensor&);

#define EMBER_BINARY(name) \
  [](const Tensor& a, const Tensor& b, const Tensor& o) { return ember::name(a, b, o); }

}  // namespace

void init_compare(py::module_& m, TensorClass& cls) {
  struct Entry {
    const char* name;
    const char* alias;
    BinaryFn fn;
    BinaryForms forms;
  };
  // Python reflects comparisons itself (2 < t calls t.__gt__(2)), so they need no __r*__ forms.
  const Entry entries[] = {
      {"eq", nullptr, EMBER_BINARY(eq), {"__eq__", nullptr, nullptr}},
      {"ne", "not_equal", EMBER_BINARY(ne), {"__ne__", nullptr, nullptr}},
      {"lt", "less", EMBER_BINARY(lt), {"__lt__", nullptr, nullptr}},
      {"le", "less_equal", EMBER_BINARY(le), {"__le__", nullptr, nullptr}},
      {"gt", "greater", EMBER_BINARY(gt), {"__gt__", nullptr, nullptr}},
      {"ge", "greater_equal", EMBER_BINARY(ge), {"__ge__", nullptr, nullptr}},
      {"logical_and", nullptr, EMBER_BINARY(logical_and), {}},
      {"logical_or", nullptr, EMBER_BINARY(logical_or), {}},
      {"logical_xor", nullptr, EMBER_BINARY(logical_xor), {}},
      {"bitwise_and", nullptr, EMBER_BINARY(bitwise_and), {"__and__", "__rand__", "__iand__"}},
      {"bitwise_or", nullptr, EMBER_BINARY(bitwise_or), {"__or__", "__ror__", "__ior__"}},
      {"bitwise_xor", nullptr, EMBER_BINARY(bitwise_xor), {"__xor__", "__rxor__", "__ixor__"}},
      {"bitwise_left_shift",
       nullptr,
       EMBER_BINARY(bitwise_left_shift),
       {"__lshift__", "__rlshift__", "__ilshift__"}},
      {"bitwise_right_shift",
       nullptr,
       EMBER_BINARY(bitwise_right_shift),
       {"__rshift__", "__rrshift__", "__irshift__"}},
  };
  for (const Entry& e : entries) {
    def_binary(m, cls, e.name, e.fn, e.forms);
    if (e.alias) def_binary(m, cls, e.alias, e.fn);
  }

  auto isclose_fn = [](const Tensor& a, py::handle b, double rtol, double atol, bool equal_nan) {
    Tensor y = to_operand(b, "isclose");
    NoGilIfLarge nogil(max_numel(a, y));
    return isclose(a, y, rtol, atol, equal_nan);
  };
  auto allclose_fn = [](const Tensor& a, py::handle b, double rtol, double atol, bool equal_nan) {
    Tensor y = to_operand(b, "allclose");
    NoGilIfLarge nogil(max_numel(a, y));
    return allclose(a, y, rtol, atol, equal_nan);
  };
  m.def("isclose", isclose_fn, py::arg("input"), py::arg("other"), py::arg("rtol") = 1e-5,
        py::arg("atol") = 1e-8, py::arg("equal_nan") = false);
  cls.def("isclose", isclose_fn, py::arg("other"), py::arg("rtol") = 1e-5, py::arg("atol") = 1e-8,
          py::arg("equal_nan") = false);
  m.def("allclose", allclose_fn, py::arg("input"), py::arg("other"), py::arg("rtol") = 1e-5,
        py::arg("atol") = 1e-8, py::arg("equal_nan") = false);
  cls.def("allclose", allclose_fn, py::arg("other"), py::arg("rtol") = 1e-5, py::arg("atol") = 1e-8,
          py::arg("equal_nan") = false);
  auto equal_fn = [](const Tensor& a, const Tensor& b) {
    NoGilIfLarge nogil(max_numel(a, b));
    return equal(a, b);
  };
  m.def("equal", equal_fn, py::arg("input"), py::arg("other"));
  cls.def("equal", equal_fn, py::arg("other"));

  m.def(
      "_where",
      [](const Tensor& cond, py::handle x, py::handle y, py::object out) {
        Tensor o = out_arg(out, "where");
        Tensor a = to_operand(x, "where"), b = to_operand(y, "where");
        NoGilIfLarge nogil(max_numel(cond, max_numel(a, b) == a.numel() ? a : b));
        return where(cond, a, b, o);
      },
      py::arg("condition"), py::arg("input"), py::arg("other"), py::kw_only(),
      py::arg("out") = py::none());
}

}  // namespace ember
