// Extrema: max, min (all three forms), amax, amin, aminmax, argmax, argmin.
#include "bindings/reduce_helpers.h"

namespace ember {

namespace {

// max(input, other) is the elementwise maximum, which the elementwise family provides.
py::object elementwise_extremum(const char* name, const Tensor& a, py::handle b, py::handle out) {
  py::object fn = py::module_::import("ember").attr(name);
  if (out.is_none()) return fn(a, b);
  return fn(a, b, py::arg("out") = out);
}

void def_extremum(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls, const char* name,
                  bool is_max) {
  const char* binary = is_max ? "maximum" : "minimum";
  // max(input) -> 0-d
  m.def(
      name,
      [is_max, name](const Tensor& t, py::handle out) {
        Tensor o = opt_tensor(out, name);
        return nogil(t.numel(), [&] { return is_max ? max(t, o) : min(t, o); });
      },
      py::arg("input"), py::kw_only(), py::arg("out") = py::none());
  // max(input, other) -> maximum(input, other)
  m.def(
      name,
      [binary](const Tensor& t, const Tensor& other, py::handle out) {
        return elementwise_extremum(binary, t, py::cast(other), out);
      },
      py::arg("input"), py::arg("other"), py::kw_only(), py::arg("out") = py::none());
  // max(input, dim, keepdim=False) -> (values, indices)
  m.def(
      name,
      [is_max, name](const Tensor& t, int64_t dim, bool keepdim, py::handle out) {
        auto [v, i] = out_pair(out, name);
        TensorPair r = nogil(t.numel(), [&] {
          return is_max ? max(t, dim, keepdim, v, i) : min(t, dim, keepdim, v, i);
        });
        return return_type(name, r, !out.is_none());
      },
      py::arg("input"), py::arg("dim"), py::arg("keepdim") = false, py::kw_only(),
      py::arg("out") = py::none());

  cls.def(name, [is_max](const Tensor& t) {
    return nogil(t.numel(), [&] { return is_max ? max(t) : min(t); });
  });
  cls.def(
      name,
      [binary](const Tensor& t, const Tensor& other) {
        return elementwise_extremum(binary, t, py::cast(other), py::none());
      },
      py::arg("other"));
  cls.def(
      name,
      [is_max, name](const Tensor& t, int64_t dim, bool keepdim) {
        TensorPair r =
            nogil(t.numel(), [&] { return is_max ? max(t, dim, keepdim) : min(t, dim, keepdim); });
        return return_type(name, r);
      },
      py::arg("dim"), py::arg("keepdim") = false);
}

using ArgFn = Tensor (*)(const Tensor&, std::optional<int64_t>, bool, const Tensor&);

void def_arg(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls, const char* name,
             ArgFn f) {
  m.def(
      name,
      [f, name](const Tensor& t, py::handle dim, bool keepdim, py::handle out) {
        std::optional<int64_t> d = opt_dim(dim, name);
        Tensor o = opt_tensor(out, name);
        return nogil(t.numel(), [&] { return f(t, d, keepdim, o); });
      },
      py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
      py::arg("out") = py::none());
  cls.def(
      name,
      [f, name](const Tensor& t, py::handle dim, bool keepdim) {
        std::optional<int64_t> d = opt_dim(dim, name);
        return nogil(t.numel(), [&] { return f(t, d, keepdim, Tensor()); });
      },
      py::arg("dim") = py::none(), py::arg("keepdim") = false);
}

}  // namespace

void init_reductions_minmax(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  def_extremum(m, cls, "max", true);
  def_extremum(m, cls, "min", false);
  def_dim_reduction(m, cls, "amax", &amax, py::tuple());
  def_dim_reduction(m, cls, "amin", &amin, py::tuple());
  def_arg(m, cls, "argmax", &argmax);
  def_arg(m, cls, "argmin", &argmin);

  m.def(
      "aminmax",
      [](const Tensor& t, py::handle dim, bool keepdim, py::handle out) {
        std::optional<int64_t> d = opt_dim(dim, "aminmax");
        auto [lo, hi] = out_pair(out, "aminmax");
        TensorPair r = nogil(t.numel(), [&] { return aminmax(t, d, keepdim, lo, hi); });
        return return_type("aminmax", r, !out.is_none());
      },
      py::arg("input"), py::kw_only(), py::arg("dim") = py::none(), py::arg("keepdim") = false,
      py::arg("out") = py::none());
  cls.def(
      "aminmax",
      [](const Tensor& t, py::handle dim, bool keepdim) {
        std::optional<int64_t> d = opt_dim(dim, "aminmax");
        return return_type("aminmax", nogil(t.numel(), [&] { return aminmax(t, d, keepdim); }));
      },
      py::kw_only(), py::arg("dim") = py::none(), py::arg("keepdim") = false);
}

}  // namespace ember
