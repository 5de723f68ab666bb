// ember.poisson, ember.binomial and the private samplers ember._standard_gamma,
// ember._standard_gamma_grad and ember._sample_dirichlet that ember.distributions calls (PyTorch's
// names and signatures).
#include "api/random_sampling.h"
#include "bindings/factory_args.h"

namespace ember {

namespace {

// Runs an op with the GIL released (it touches no Python object).
template <typename F>
Tensor nogil(const F& f) {
  py::gil_scoped_release release;
  return f();
}

}  // namespace

void init_random_sampling(py::module_& m) {
  m.def(
      "_standard_gamma",
      [](const Tensor& input, py::object generator) {
        Generator* g = parse_generator(generator, "_standard_gamma");
        return nogil([&] { return _standard_gamma(input, g); });
      },
      py::arg("input"), py::kw_only(), py::arg("generator") = py::none());
  m.def(
      "_standard_gamma_grad",
      [](const Tensor& self, const Tensor& output) {
        return nogil([&] { return _standard_gamma_grad(self, output); });
      },
      py::arg("self"), py::arg("output"));
  m.def(
      "_sample_dirichlet",
      [](const Tensor& input, py::object generator) {
        Generator* g = parse_generator(generator, "_sample_dirichlet");
        return nogil([&] { return _sample_dirichlet(input, g); });
      },
      py::arg("input"), py::kw_only(), py::arg("generator") = py::none());
  m.def(
      "poisson",
      [](const Tensor& input, py::object generator) {
        Generator* g = parse_generator(generator, "poisson");
        return nogil([&] { return poisson(input, g); });
      },
      py::arg("input"), py::kw_only(), py::arg("generator") = py::none());
  m.def(
      "binomial",
      [](const Tensor& count, const Tensor& prob, py::object generator) {
        Generator* g = parse_generator(generator, "binomial");
        return nogil([&] { return binomial(count, prob, g); });
      },
      py::arg("count"), py::arg("prob"), py::kw_only(), py::arg("generator") = py::none());
}

}  // namespace ember
