// Binding helpers that give one binary op all of its Python forms at once:
//   ember.op(input, other, *, out=None), Tensor.op(other), Tensor.op_(other) (in-place), and
//   optionally the operator dunders __op__, __rop__ (reflected) and __iop__ (in-place).
#pragma once
#include "bindings/pybind_ember.h"

namespace ember {

// Converts an operator's other operand; nullopt means "return NotImplemented" so Python can try
// the other operand's reflected method.
inline std::optional<Tensor> operator_operand(py::handle other) {
  if (is_tensor(other)) return other.cast<Tensor>();
  if (auto s = try_parse_scalar(other)) return wrap_scalar_for_binding(*s);
  if (py::isinstance<py::array>(other)) return to_operand(other, "operator");
  return std::nullopt;
}

struct BinaryForms {
  const char* dunder = nullptr;   // "__add__"
  const char* rdunder = nullptr;  // "__radd__"
  const char* idunder = nullptr;  // "__iadd__"
  bool inplace_method = true;     // Tensor.add_
  bool functions = true;          // ember.op and Tensor.op (off when bound elsewhere: add/sub)
};

// The `out=` keyword: None (undefined) or a Tensor; anything else is a TypeError.
inline Tensor out_arg(py::handle out, const char* op) {
  if (out.is_none()) return Tensor();
  if (!is_tensor(out)) {
    throw py::type_error(
        str_cat("[", op, "] argument 'out' must be Tensor, not ", Py_TYPE(out.ptr())->tp_name));
  }
  return out.cast<Tensor>();
}

// Elements an elementwise op over a and b touches (for the GIL-release decision).
inline int64_t binary_work(const Tensor& a, const Tensor& b) {
  return a.numel() > b.numel() ? a.numel() : b.numel();
}

// f(a, b, out) -> Tensor, where out may be undefined.
template <typename F>
void def_binary(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls, const char* name, F f,
                BinaryForms forms = {}) {
  if (forms.functions) {
    m.def(
        name,
        [f, name](py::handle a, py::handle b, py::object out) {
          Tensor o = out_arg(out, name);
          Tensor x = to_operand(a, name), y = to_operand(b, name);
          return with_gil_released_if(binary_work(x, y), [&] { return f(x, y, o); });
        },
        py::arg("input"), py::arg("other"), py::kw_only(), py::arg("out") = py::none());
    cls.def(
        name,
        [f, name](const Tensor& self, py::handle b) {
          Tensor y = to_operand(b, name);
          return with_gil_released_if(binary_work(self, y), [&] { return f(self, y, Tensor()); });
        },
        py::arg("other"));
  }
  if (forms.inplace_method) {
    std::string iname = std::string(name) + "_";
    cls.def(
        iname.c_str(),
        [f, name](py::object self, py::handle b) {
          Tensor t = self.cast<Tensor>();
          Tensor y = to_operand(b, name);
          with_gil_released_if(binary_work(t, y), [&] { return f(t, y, t); });
          return self;
        },
        py::arg("other"));
  }
  if (forms.dunder) {
    cls.def(forms.dunder, [f](const Tensor& self, py::handle other) -> py::object {
      auto o = operator_operand(other);
      if (!o) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
      Tensor r = with_gil_released_if(binary_work(self, *o), [&] { return f(self, *o, Tensor()); });
      return py::cast(r);
    });
  }
  if (forms.rdunder) {
    cls.def(forms.rdunder, [f](const Tensor& self, py::handle other) -> py::object {
      auto o = operator_operand(other);
      if (!o) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
      Tensor r = with_gil_released_if(binary_work(self, *o), [&] { return f(*o, self, Tensor()); });
      return py::cast(r);
    });
  }
  if (forms.idunder) {
    cls.def(forms.idunder, [f](py::object self, py::handle other) -> py::object {
      auto o = operator_operand(other);
      if (!o) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
      Tensor t = self.cast<Tensor>();
      with_gil_released_if(binary_work(t, *o), [&] { return f(t, *o, t); });
      return self;
    });
  }
}

}  // namespace ember
