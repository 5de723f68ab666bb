// Reductions: sum, nansum, mean, nanmean, prod, all, any, count_nonzero. The other reduction
// families bind in reduce_minmax.cpp, reduce_stats.cpp and reduce_scan.cpp.
#include <string>

#include "bindings/fastcall.h"
#include "bindings/op_observer.h"
#include "bindings/reduce_helpers.h"

namespace ember {

py::object return_type(const char* name, const TensorPair& p, bool is_out) {
  // Leaked on purpose: a static py::object would be destroyed after the interpreter.
  static py::handle module = py::module_::import("ember.return_types").release();
  const std::string type_name = is_out ? std::string(name) + "_out" : std::string(name);
  return module.attr(type_name.c_str())(py::make_tuple(p.first, p.second));
}

namespace {

using SumLike = Tensor (*)(const Tensor&, const DimList&, bool, ScalarType, const Tensor&);

// The method Tensor.name(dim=None, keepdim=False, *, dtype=None), not yet attached to the class.
py::cpp_function sum_like_method(py::class_<TensorImpl, TensorImplPtr>& cls, const char* name,
                                 SumLike f) {
  return py::cpp_function(
      [f, name](const Tensor& t, py::handle dim, bool keepdim, py::handle dtype) {
        DimList dims = parse_dims(dim, name);
        ScalarType dt = opt_dtype(dtype);
        return nogil(t.numel(), [&] { return f(t, dims, keepdim, dt, Tensor()); });
      },
      py::name(name), py::is_method(cls), py::sibling(py::getattr(cls, name, py::none())),
      py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
      py::arg("dtype") = py::none());
}

// fn(input, dim=None, keepdim=False, *, dtype=None, out=None); with `method`, also the method
// without out.
void def_sum_like(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls, const char* name,
                  SumLike f, bool method = true) {
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
  if (method) cls.attr(name) = sum_like_method(cls, name, f);
}

// Tensor.sum is hand-written (METH_FASTCALL): x.sum() is called in tight loops, and pybind11's
// generic dispatcher costs several hundred ns per call, more than summing a small tensor (see
// fastcall.h, docs/design/per-op-overhead.md). It sums everything for a call without arguments
// and gives any other call to the general pybind11 method (g_sum_general), which is made in
// init_reductions with the same signature as the other sum-like methods and attached to no name.
PyObject* g_sum_general = nullptr;

PyObject* fast_sum(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return fastcall::guarded([&]() -> PyObject* {
    Tensor t;
    if (!observer::installed() && nargs == 0 && !kwnames && fastcall::unwrap(self, t)) {
      return fastcall::wrap(with_gil_released_if(t.numel(), [&] { return sum(t); }));
    }
    return fastcall::call_method_fallback(g_sum_general, self, args, nargs, kwnames);
  });
}

PyMethodDef g_sum_def = {"sum", fastcall::as_cfunction(fast_sum), METH_FASTCALL | METH_KEYWORDS,
                         "Sum of elements (see ember.sum)."};

}  // namespace

void init_reductions(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  // ember.sum is a pybind11 function; Tensor.sum is the hand-written fast_sum, with its general
  // form made here as its fallback.
  def_sum_like(m, cls, "sum", &sum, /*method=*/false);
  g_sum_general = fastcall::keep_fallback(sum_like_method(cls, "sum", &sum));
  fastcall::add_method(cls, g_sum_def);
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
