// Reductions.
#include "bindings/pybind_ember.h"
#include "ops/reduce.h"

namespace ember {

void init_reductions(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  auto sum_fn = [](const Tensor& t, py::handle dim, bool keepdim, py::handle dtype,
                   py::handle out) {
    ScalarType dt = dtype.is_none() ? ScalarType::Undefined : dtype.cast<ScalarType>();
    Tensor o = out.is_none() ? Tensor() : out.cast<Tensor>();
    auto dims = parse_dims(dim, "sum");
    return with_gil_released_if(t.numel(), [&] { return sum(t, dims, keepdim, dt, o); });
  };
  cls.def("sum", [](const Tensor& t, py::handle dim, bool keepdim, py::handle dtype) {
    ScalarType dt = dtype.is_none() ? ScalarType::Undefined : dtype.cast<ScalarType>();
    auto dims = parse_dims(dim, "sum");
    return with_gil_released_if(t.numel(), [&] { return sum(t, dims, keepdim, dt); });
  }, py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
     py::arg("dtype") = py::none());
  m.def("sum", sum_fn, py::arg("input"), py::arg("dim") = py::none(),
        py::arg("keepdim") = false, py::kw_only(), py::arg("dtype") = py::none(),
        py::arg("out") = py::none());
}

}  // namespace ember
