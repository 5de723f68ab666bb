// Elementwise ops: functions, methods, in-place forms and operators.
#include "api/elementwise.h"
#include "bindings/elementwise_bindings.h"

namespace ember {

void init_elementwise(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  // add / sub take alpha; their operator forms use alpha = 1.
  auto add_fn = [](const Tensor& a, const Tensor& b, const Tensor& out) {
    return add(a, b, 1, out);
  };
  auto sub_fn = [](const Tensor& a, const Tensor& b, const Tensor& out) {
    return sub(a, b, 1, out);
  };
  def_binary(m, cls, "add", add_fn, {"__add__", "__radd__", "__iadd__", false, false});
  def_binary(m, cls, "sub", sub_fn, {"__sub__", "__rsub__", "__isub__", false, false});
  for (const char* name : {"add", "sub", "subtract"}) {
    const bool is_add = name[0] == 'a';
    m.def(
        name,
        [is_add, name](py::handle a, py::handle b, const Scalar& alpha, py::object out) {
          Tensor o = out_arg(out, name);
          Tensor x = to_operand(a, name), y = to_operand(b, name);
          return with_gil_released_if(binary_work(x, y), [&] {
            return is_add ? add(x, y, alpha, o) : sub(x, y, alpha, o);
          });
        },
        py::arg("input"), py::arg("other"), py::kw_only(), py::arg("alpha") = 1,
        py::arg("out") = py::none());
    cls.def(
        name,
        [is_add, name](const Tensor& self, py::handle b, const Scalar& alpha) {
          Tensor y = to_operand(b, name);
          return with_gil_released_if(binary_work(self, y), [&] {
            return is_add ? add(self, y, alpha) : sub(self, y, alpha);
          });
        },
        py::arg("other"), py::kw_only(), py::arg("alpha") = 1);
    cls.def((std::string(name) + "_").c_str(),
            [is_add, name](py::object self, py::handle b, const Scalar& alpha) {
              Tensor t = self.cast<Tensor>();
              Tensor y = to_operand(b, name);
              if (is_add)
                add(t, y, alpha, t);
              else
                sub(t, y, alpha, t);
              return self;
            },
            py::arg("other"), py::kw_only(), py::arg("alpha") = 1);
  }
  auto mul_fn = [](const Tensor& a, const Tensor& b, const Tensor& out) { return mul(a, b, out); };
  def_binary(m, cls, "mul", mul_fn, {"__mul__", "__rmul__", "__imul__"});
  def_binary(m, cls, "multiply", mul_fn);
  auto div_fn = [](const Tensor& a, const Tensor& b, const Tensor& out) { return div(a, b, out); };
  def_binary(m, cls, "true_divide", div_fn, {"__truediv__", "__rtruediv__", "__itruediv__"});
  // div / divide (with rounding_mode) are bound in elementwise_binary.cpp.
  init_elementwise_unary(m, cls);
  init_elementwise_unary_args(m, cls);
  init_elementwise_binary(m, cls);
  init_elementwise_compare(m, cls);
}

}  // namespace ember
