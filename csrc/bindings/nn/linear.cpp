// F.linear (torch._C._nn.linear) and F.bilinear (torch.bilinear).
#include "api/nn/linear.h"
#include "bindings/list_args.h"

namespace ember {

void init_nn_linear(py::module_& m) {
  py::module_ nn = m.attr("_nn");
  nn.def(
      "linear",
      [](const Tensor& input, const Tensor& weight, py::handle bias) {
        Tensor b = opt_tensor(bias);
        return without_gil([&] { return linear(input, weight, b); });
      },
      py::arg("input"), py::arg("weight"), py::arg("bias") = py::none());
  m.def(
      "bilinear",
      [](const Tensor& input1, const Tensor& input2, const Tensor& weight, py::handle bias) {
        Tensor b = opt_tensor(bias);
        return without_gil([&] { return bilinear(input1, input2, weight, b); });
      },
      py::arg("input1"), py::arg("input2"), py::arg("weight"), py::arg("bias") = py::none());
}

}  // namespace ember
