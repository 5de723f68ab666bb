// ember._C._forward_ad: dual levels, make_dual and unpack_dual behind
// ember.autograd.forward_ad (autograd/forward_ad.h).
#include "autograd/forward_ad.h"
#include "bindings/pybind_ember.h"

namespace ember {

namespace fwd = autograd::forward_ad;

void init_forward_ad(py::module_& m) {
  py::module_ f = m.def_submodule("_forward_ad", "Forward-mode AD (ember.autograd.forward_ad).");
  f.def("enter_dual_level", &fwd::enter_dual_level);
  f.def("exit_dual_level", &fwd::exit_dual_level, py::arg("level"));
  f.def("current_level", &fwd::current_level);
  f.def(
      "make_dual",
      [](const Tensor& primal, const Tensor& tangent, uint64_t level) {
        py::gil_scoped_release release;
        return fwd::make_dual(primal, tangent, level);
      },
      py::arg("tensor"), py::arg("tangent"), py::arg("level"));
  f.def(
      "unpack_dual",
      [](const Tensor& t, uint64_t level) -> py::tuple {
        std::pair<Tensor, Tensor> r;
        {
          py::gil_scoped_release release;
          r = fwd::unpack_dual(t, level);
        }
        py::object tangent = r.second.defined() ? py::cast(r.second) : py::none();
        return py::make_tuple(r.first, tangent);
      },
      py::arg("tensor"), py::arg("level"));
  f.def("has_tangent", [](const Tensor& t) { return fwd::has_tangent(t); });
}

}  // namespace ember
