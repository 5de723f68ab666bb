// Reductions: sum, nansum, mean, nanmean, prod, all, any, count_nonzero. The other reduction
// families bind in reductions_minmax.cpp, reductions_stats.cpp and reductions_scan.cpp.
#include <string>

#include "bindings/reduction_helpers.h"

namespace ember {

py::object return_type(const char* name, const TensorPair& p, bool is_out) {
  // Leaked on purpose: a static py::object would be destroyed after the interpreter.
  static py::handle module = py::module_::import("ember.return_types").release();
  const std::string type_name = is_out ? std::string(name) + "_out" : std::string(name);
  return module.attr(type_name.c_str())(py::make_tuple(p.first, p.second));
}

namespace {

using SumLike = Tensor (*)(const Tensor&, const DimList&, bool, ScalarType, const Tensor&);

// fn(input, dim=None, keepdim=False, *, dtype=None, out=None) and the method without out.
void def_sum_like(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls, const char* name,
                  SumLike f) {
  m.def(
      name,
      [f, name](const Tensor& t, py::handle dim, bool keepdim, py::handle dtype, py::handle out) {
        DimList dims = parse_dims(dim, name);
        ScalarType dt = opt_dtype(dtype);
        Tensor o = opt_tensor(out, name);
        return nogil(t.numel(), [&] { return f(t, dims, keepdim, dt, o); });
      },
      py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
      py::arg("dtype") = py::none(), py::arg("out") = py::none());
  cls.def(
      name,
      [f, name](const Tensor& t, py::handle dim, bool keepdim, py::handle dtype) {
        DimList dims = parse_dims(dim, name);
        ScalarType dt = opt_dtype(dtype);
        return nogil(t.numel(), [&] { return f(t, dims, keepdim, dt, Tensor()); });
      },
      py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
      py::arg("dtype") = py::none());
}

}  // namespace

void init_reductions(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  def_sum_like(m, cls, "sum", &sum);
  def_sum_like(m, cls, "nansum", &nansum);
  def_sum_like(m, cls, "mean", &mean);
  def_sum_like(m, cls, "nanmean", &nanmean);

  // prod takes one int dim (a tuple is a TypeError, as PyTorch).
  auto prod_fn = [](const Tensor& t, py::handle dim, bool keepdim, py::handle dtype,
                    py::handle out) {
    std::optional<int64_t> d = opt_dim(dim, "prod");
    ScalarType dt = opt_dtype(dtype);
    Tensor o = opt_tensor(out, "prod");
    return nogil(t.numel(), [&] { return prod(t, d, keepdim, dt, o); });
  };
  m.def("prod", prod_fn, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false,
        py::kw_only(), py::arg("dtype") = py::none(), py::arg("out") = py::none());
  cls.def(
      "prod",
      [prod_fn](const Tensor& t, py::handle dim, bool keepdim, py::handle dtype) {
        return prod_fn(t, dim, keepdim, dtype, py::none());
      },
      py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
      py::arg("dtype") = py::none());

  def_dim_reduction(m, cls, "all", &all, py::none());
  def_dim_reduction(m, cls, "any", &any, py::none());

  auto count_fn = [](const Tensor& t, py::handle dim) {
    DimList dims = parse_dims(dim, "count_nonzero");
    return nogil(t.numel(), [&] { return count_nonzero(t, dims); });
  };
  m.def("count_nonzero", count_fn, py::arg("input"), py::arg("dim") = py::none());
  cls.def("count_nonzero", count_fn, py::arg("dim") = py::none());

  init_reductions_minmax(m, cls);
  init_reductions_stats(m, cls);
  init_reductions_scan(m, cls);
}

}  // namespace ember
