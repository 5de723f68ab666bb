// Activation bindings: the functions PyTorch has at top level (torch.relu, torch.selu, ...,
// Tensor.relu) and the ones it keeps in torch._C._nn (gelu, elu, softplus, ...), which
// ember.nn.functional calls.
#include "api/nn/activation.h"
#include "bindings/elementwise_bindings.h"

namespace ember {

namespace {

py::object inplace_result(py::object self, const Tensor& t,
                          Tensor (*f)(const Tensor&, const Tensor&)) {
  NoGilIfLarge nogil(t.numel());
  f(t, t);
  return self;
}

}  // namespace

void init_nn_activation(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  py::module_ nn = m.def_submodule("_nn", "torch._C._nn: the functional forms of the nn layers");

  // ---- top level: torch.relu, relu_, selu, selu_, celu, celu_, threshold, threshold_, prelu,
  // hardshrink; Tensor.relu, relu_, prelu, hardshrink.
  m.def(
      "relu",
      [](const Tensor& x) {
        NoGilIfLarge nogil(x.numel());
        return relu(x);
      },
      py::arg("input"), "max(input, 0) elementwise.");
  m.def(
      "relu_", [](py::object self) { return inplace_result(self, self.cast<Tensor>(), relu); },
      py::arg("input"));
  cls.def("relu", [](const Tensor& x) {
    NoGilIfLarge nogil(x.numel());
    return relu(x);
  });
  cls.def("relu_", [](py::object self) { return inplace_result(self, self.cast<Tensor>(), relu); });
  m.def(
      "selu",
      [](const Tensor& x) {
        NoGilIfLarge nogil(x.numel());
        return selu(x);
      },
      py::arg("input"));
  m.def(
      "selu_", [](py::object self) { return inplace_result(self, self.cast<Tensor>(), selu); },
      py::arg("input"));
  m.def(
      "celu",
      [](const Tensor& x, double alpha) {
        NoGilIfLarge nogil(x.numel());
        return celu(x, alpha);
      },
      py::arg("input"), py::arg("alpha") = 1.0);
  m.def(
      "celu_",
      [](py::object self, double alpha) {
        Tensor t = self.cast<Tensor>();
        NoGilIfLarge nogil(t.numel());
        celu(t, alpha, t);
        return self;
      },
      py::arg("input"), py::arg("alpha") = 1.0);
  m.def(
      "threshold",
      [](const Tensor& x, double th, double value, py::object out) {
        Tensor o = out_arg(out, "threshold");
        NoGilIfLarge nogil(x.numel());
        return threshold(x, th, value, o);
      },
      py::arg("input"), py::arg("threshold"), py::arg("value"), py::kw_only(),
      py::arg("out") = py::none());
  m.def(
      "threshold_",
      [](py::object self, double th, double value) {
        Tensor t = self.cast<Tensor>();
        NoGilIfLarge nogil(t.numel());
        threshold(t, th, value, t);
        return self;
      },
      py::arg("input"), py::arg("threshold"), py::arg("value"));
  m.def(
      "prelu", [](const Tensor& x, const Tensor& w) { return prelu(x, w); }, py::arg("input"),
      py::arg("weight"));
  cls.def(
      "prelu", [](const Tensor& x, const Tensor& w) { return prelu(x, w); }, py::arg("weight"));
  m.def(
      "hardshrink",
      [](const Tensor& x, double lambd, py::object out) {
        Tensor o = out_arg(out, "hardshrink");
        NoGilIfLarge nogil(x.numel());
        return hardshrink(x, lambd, o);
      },
      py::arg("input"), py::arg("lambd") = 0.5, py::kw_only(), py::arg("out") = py::none());
  cls.def(
      "hardshrink",
      [](const Tensor& x, double lambd) {
        NoGilIfLarge nogil(x.numel());
        return hardshrink(x, lambd);
      },
      py::arg("lambd") = 0.5);

  // ---- torch._C._nn forms: name(input, ..., *, out=None) and name_(input, ...).
  auto unary = [&nn](const char* name, Tensor (*f)(const Tensor&, const Tensor&), bool inplace) {
    nn.def(
        name,
        [f, name](const Tensor& x, py::object out) {
          Tensor o = out_arg(out, name);
          NoGilIfLarge nogil(x.numel());
          return f(x, o);
        },
        py::arg("input"), py::kw_only(), py::arg("out") = py::none());
    if (inplace) {
      nn.def((std::string(name) + "_").c_str(),
             [f](py::object self) { return inplace_result(self, self.cast<Tensor>(), f); },
             py::arg("input"));
    }
  };
  unary("relu6", relu6, true);
  unary("silu", silu, true);
  unary("mish", mish, true);
  unary("hardsigmoid", hardsigmoid, true);
  unary("hardswish", hardswish, true);
  unary("log_sigmoid", log_sigmoid, false);

  nn.def(
      "leaky_relu",
      [](const Tensor& x, double slope, py::object out) {
        Tensor o = out_arg(out, "leaky_relu");
        NoGilIfLarge nogil(x.numel());
        return leaky_relu(x, slope, o);
      },
      py::arg("input"), py::arg("negative_slope") = 0.01, py::kw_only(),
      py::arg("out") = py::none());
  nn.def(
      "leaky_relu_",
      [](py::object self, double slope) {
        Tensor t = self.cast<Tensor>();
        NoGilIfLarge nogil(t.numel());
        leaky_relu(t, slope, t);
        return self;
      },
      py::arg("input"), py::arg("negative_slope") = 0.01);
  nn.def(
      "elu",
      [](const Tensor& x, double alpha, double scale, double input_scale, py::object out) {
        Tensor o = out_arg(out, "elu");
        NoGilIfLarge nogil(x.numel());
        return elu(x, alpha, scale, input_scale, o);
      },
      py::arg("input"), py::arg("alpha") = 1.0, py::arg("scale") = 1.0,
      py::arg("input_scale") = 1.0, py::kw_only(), py::arg("out") = py::none());
  nn.def(
      "elu_",
      [](py::object self, double alpha, double scale, double input_scale) {
        Tensor t = self.cast<Tensor>();
        NoGilIfLarge nogil(t.numel());
        elu(t, alpha, scale, input_scale, t);
        return self;
      },
      py::arg("input"), py::arg("alpha") = 1.0, py::arg("scale") = 1.0,
      py::arg("input_scale") = 1.0);
  nn.def(
      "gelu",
      [](const Tensor& x, const std::string& approximate, py::object out) {
        Tensor o = out_arg(out, "gelu");
        NoGilIfLarge nogil(x.numel());
        return gelu(x, approximate, o);
      },
      py::arg("input"), py::kw_only(), py::arg("approximate") = "none",
      py::arg("out") = py::none());
  nn.def(
      "gelu_",
      [](py::object self, const std::string& approximate) {
        Tensor t = self.cast<Tensor>();
        NoGilIfLarge nogil(t.numel());
        gelu(t, approximate, t);
        return self;
      },
      py::arg("input"), py::kw_only(), py::arg("approximate") = "none");
  nn.def(
      "hardtanh",
      [](const Tensor& x, double lo, double hi, py::object out) {
        Tensor o = out_arg(out, "hardtanh");
        NoGilIfLarge nogil(x.numel());
        return hardtanh(x, lo, hi, o);
      },
      py::arg("input"), py::arg("min_val") = -1.0, py::arg("max_val") = 1.0, py::kw_only(),
      py::arg("out") = py::none());
  nn.def(
      "hardtanh_",
      [](py::object self, double lo, double hi) {
        Tensor t = self.cast<Tensor>();
        NoGilIfLarge nogil(t.numel());
        hardtanh(t, lo, hi, t);
        return self;
      },
      py::arg("input"), py::arg("min_val") = -1.0, py::arg("max_val") = 1.0);
  nn.def(
      "softplus",
      [](const Tensor& x, double beta, double th, py::object out) {
        Tensor o = out_arg(out, "softplus");
        NoGilIfLarge nogil(x.numel());
        return softplus(x, beta, th, o);
      },
      py::arg("input"), py::arg("beta") = 1.0, py::arg("threshold") = 20.0, py::kw_only(),
      py::arg("out") = py::none());
  nn.def(
      "softshrink",
      [](const Tensor& x, double lambd, py::object out) {
        Tensor o = out_arg(out, "softshrink");
        NoGilIfLarge nogil(x.numel());
        return softshrink(x, lambd, o);
      },
      py::arg("input"), py::arg("lambd") = 0.5, py::kw_only(), py::arg("out") = py::none());
  nn.def(
      "glu",
      [](const Tensor& x, int64_t dim, py::object out) {
        Tensor o = out_arg(out, "glu");
        NoGilIfLarge nogil(x.numel());
        return glu(x, dim, o);
      },
      py::arg("input"), py::arg("dim") = -1, py::kw_only(), py::arg("out") = py::none());
}

}  // namespace ember
