// Binding helpers of the elementwise family (argument conversion only) and the entry points of
// its binding files, called by init_elementwise (bindings/elementwise.cpp).
#pragma once
#include <optional>
#include <string>

#include "bindings/binary_helpers.h"

namespace ember {

using TensorClass = py::class_<TensorImpl, TensorImplPtr>;

// RAII form of with_gil_released_if (pybind_ember.h) for bindings with several statements.
class NoGilIfLarge {
 public:
  explicit NoGilIfLarge(int64_t work) {
    if (work >= kReleaseGilWork) release_.emplace();
  }

 private:
  std::optional<py::gil_scoped_release> release_;
};

inline int64_t max_numel(const Tensor& a, const Tensor& b) {
  return binary_work(a, b);
}

struct UnaryForms {
  bool method = true;            // Tensor.exp()
  bool inplace = true;           // Tensor.exp_()
  const char* dunder = nullptr;  // "__neg__"
  const char* doc = nullptr;     // one line after the signature
};

// f(a, out) -> Tensor, where out may be undefined: ember.name(input, *, out=None),
// Tensor.name() and Tensor.name_().
template <typename F>
void def_unary(py::module_& m, TensorClass& cls, const char* name, F f, UnaryForms forms = {}) {
  // pybind11 prepends the signature.
  const std::string doc = forms.doc ? forms.doc : "Elementwise " + std::string(name) + ".";
  m.def(
      name,
      [f, name](const Tensor& a, py::object out) {
        Tensor o = out_arg(out, name);
        NoGilIfLarge nogil(a.numel());
        return f(a, o);
      },
      py::arg("input"), py::kw_only(), py::arg("out") = py::none(), doc.c_str());
  if (forms.method) {
    cls.def(name, [f](const Tensor& a) {
      NoGilIfLarge nogil(a.numel());
      return f(a, Tensor());
    });
  }
  if (forms.inplace) {
    cls.def((std::string(name) + "_").c_str(), [f](py::object self) {
      Tensor t = self.cast<Tensor>();
      {
        NoGilIfLarge nogil(t.numel());
        f(t, t);
      }
      return self;
    });
  }
  if (forms.dunder) {
    cls.def(forms.dunder, [f](const Tensor& a) {
      NoGilIfLarge nogil(a.numel());
      return f(a, Tensor());
    });
  }
}

void init_unary(py::module_& m, TensorClass& cls);
void init_unary_args(py::module_& m, TensorClass& cls);
void init_binary(py::module_& m, TensorClass& cls);
void init_compare(py::module_& m, TensorClass& cls);

}  // namespace ember
