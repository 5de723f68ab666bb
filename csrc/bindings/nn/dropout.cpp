// Dropout bindings: torch.dropout / dropout_, feature_dropout(_), alpha_dropout(_),
// feature_alpha_dropout(_) and native_dropout.
#include "api/nn/dropout.h"
#include "bindings/pybind_ember.h"

namespace ember {

namespace {
using DropoutOp = Tensor (*)(const Tensor&, double, bool, bool);

void def_dropout(py::module_& m, const char* name, DropoutOp f) {
  m.def(
      name,
      [f](const Tensor& x, double p, bool train) {
        return with_gil_released_if(x.numel(), [&] { return f(x, p, train, false); });
      },
      py::arg("input"), py::arg("p"), py::arg("train"));
  m.def((std::string(name) + "_").c_str(),
        [f](py::object self, double p, bool train) {
          Tensor x = self.cast<Tensor>();
          Tensor r = with_gil_released_if(x.numel(), [&] { return f(x, p, train, true); });
          return r.is_same(x) ? self : py::cast(r);
        },
        py::arg("input"), py::arg("p"), py::arg("train"));
}
}  // namespace

void init_nn_dropout(py::module_& m) {
  def_dropout(m, "dropout", dropout);
  def_dropout(m, "feature_dropout", feature_dropout);
  def_dropout(m, "alpha_dropout", alpha_dropout);
  def_dropout(m, "feature_alpha_dropout", feature_alpha_dropout);
  m.def(
      "native_dropout",
      [](const Tensor& x, double p, std::optional<bool> train) {
        return with_gil_released_if(x.numel(), [&] { return native_dropout(x, p, train); });
      },
      py::arg("input"), py::arg("p"), py::arg("train"),
      "(output, mask): output = input * mask / (1 - p) with mask ~ Bernoulli(1 - p).");
}

}  // namespace ember
