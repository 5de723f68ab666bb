// Scans (cumsum, cumprod, cummax, cummin, logcumsumexp) and order statistics (median,
// nanmedian, mode, quantile, nanquantile).
#include <string>

#include "bindings/reduce_helpers.h"

namespace ember {

namespace {

using CumFn = Tensor (*)(const Tensor&, int64_t, ScalarType, const Tensor&);
using CumPairFn = TensorPair (*)(const Tensor&, int64_t, const Tensor&, const Tensor&);

void def_cum(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls, const char* name,
             CumFn f) {
  m.def(
      name,
      [f, name](const Tensor& t, int64_t dim, py::handle dtype, py::handle out) {
        ScalarType dt = opt_dtype(dtype);
        Tensor o = opt_tensor(out, name);
        return nogil(t.numel(), [&] { return f(t, dim, dt, o); });
      },
      py::arg("input"), py::arg("dim"), py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("out") = py::none());
  cls.def(
      name,
      [f](const Tensor& t, int64_t dim, py::handle dtype) {
        ScalarType dt = opt_dtype(dtype);
        return nogil(t.numel(), [&] { return f(t, dim, dt, Tensor()); });
      },
      py::arg("dim"), py::kw_only(), py::arg("dtype") = py::none());
  // In place: out=self, so the scan runs in self's dtype unless dtype says otherwise (which
  // must then equal self's dtype, as PyTorch's out= rule).
  cls.def((std::string(name) + "_").c_str(),
          [f](py::object self, int64_t dim, py::handle dtype) {
            Tensor t = self.cast<Tensor>();
            ScalarType dt = opt_dtype(dtype);
            nogil(t.numel(), [&] { return f(t, dim, dt, t); });
            return self;
          },
          py::arg("dim"), py::kw_only(), py::arg("dtype") = py::none());
}

void def_cum_pair(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls, const char* name,
                  CumPairFn f) {
  m.def(
      name,
      [f, name](const Tensor& t, int64_t dim, py::handle out) {
        auto [v, i] = out_pair(out, name);
        TensorPair r = nogil(t.numel(), [&] { return f(t, dim, v, i); });
        return return_type(name, r, !out.is_none());
      },
      py::arg("input"), py::arg("dim"), py::kw_only(), py::arg("out") = py::none());
  cls.def(
      name,
      [f, name](const Tensor& t, int64_t dim) {
        return return_type(name, nogil(t.numel(), [&] { return f(t, dim, Tensor(), Tensor()); }));
      },
      py::arg("dim"));
}

using MedianAllFn = Tensor (*)(const Tensor&, const Tensor&);
using MedianDimFn = TensorPair (*)(const Tensor&, int64_t, bool, const Tensor&, const Tensor&);

void def_median(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls, const char* name,
                MedianAllFn all_fn, MedianDimFn dim_fn) {
  m.def(
      name,
      [all_fn](const Tensor& t) { return nogil(t.numel(), [&] { return all_fn(t, Tensor()); }); },
      py::arg("input"));
  m.def(
      name,
      [dim_fn, name](const Tensor& t, int64_t dim, bool keepdim, py::handle out) {
        auto [v, i] = out_pair(out, name);
        TensorPair r = nogil(t.numel(), [&] { return dim_fn(t, dim, keepdim, v, i); });
        return return_type(name, r, !out.is_none());
      },
      py::arg("input"), py::arg("dim"), py::arg("keepdim") = false, py::kw_only(),
      py::arg("out") = py::none());
  cls.def(name, [all_fn](const Tensor& t) {
    return nogil(t.numel(), [&] { return all_fn(t, Tensor()); });
  });
  cls.def(
      name,
      [dim_fn, name](const Tensor& t, int64_t dim, bool keepdim) {
        return return_type(
            name, nogil(t.numel(), [&] { return dim_fn(t, dim, keepdim, Tensor(), Tensor()); }));
      },
      py::arg("dim"), py::arg("keepdim") = false);
}

// quantile(input, q, dim=None, keepdim=False, *, interpolation='linear', out=None), q a float
// or a tensor.
Tensor call_quantile(bool ignore_nan, const Tensor& t, py::handle q, py::handle dim, bool keepdim,
                     const std::string& interpolation, py::handle out) {
  const char* op = ignore_nan ? "nanquantile" : "quantile";
  std::optional<int64_t> d = opt_dim(dim, op);
  QuantileInterpolation mode = parse_quantile_interpolation(interpolation, op);
  Tensor o = opt_tensor(out, op);
  if (is_tensor(q)) {
    Tensor qt = q.cast<Tensor>();
    return nogil(t.numel(), [&] {
      return ignore_nan ? ember::nanquantile(t, qt, d, keepdim, mode, o)
                        : ember::quantile(t, qt, d, keepdim, mode, o);
    });
  }
  if (!PyFloat_Check(q.ptr()) && !PyLong_Check(q.ptr())) {
    throw py::type_error(str_cat("[", op, "] argument 'q' must be a float or a Tensor, not ",
                                 Py_TYPE(q.ptr())->tp_name));
  }
  const double qv = q.cast<double>();
  return nogil(t.numel(), [&] {
    return ignore_nan ? ember::nanquantile(t, qv, d, keepdim, mode, o)
                      : ember::quantile(t, qv, d, keepdim, mode, o);
  });
}

void def_quantile(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls, const char* name,
                  bool ignore_nan) {
  m.def(
      name,
      [ignore_nan](const Tensor& t, py::handle q, py::handle dim, bool keepdim,
                   const std::string& interpolation, py::handle out) {
        return call_quantile(ignore_nan, t, q, dim, keepdim, interpolation, out);
      },
      py::arg("input"), py::arg("q"), py::arg("dim") = py::none(), py::arg("keepdim") = false,
      py::kw_only(), py::arg("interpolation") = "linear", py::arg("out") = py::none());
  cls.def(
      name,
      [ignore_nan](const Tensor& t, py::handle q, py::handle dim, bool keepdim,
                   const std::string& interpolation) {
        return call_quantile(ignore_nan, t, q, dim, keepdim, interpolation, py::none());
      },
      py::arg("q"), py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
      py::arg("interpolation") = "linear");
}

}  // namespace

void init_reductions_scan(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  def_cum(m, cls, "cumsum", &cumsum);
  def_cum(m, cls, "cumprod", &cumprod);
  def_cum_pair(m, cls, "cummax", &cummax);
  def_cum_pair(m, cls, "cummin", &cummin);

  auto lcse_fn = [](const Tensor& t, int64_t dim, py::handle out) {
    Tensor o = opt_tensor(out, "logcumsumexp");
    return nogil(t.numel(), [&] { return logcumsumexp(t, dim, o); });
  };
  m.def("logcumsumexp", lcse_fn, py::arg("input"), py::arg("dim"), py::kw_only(),
        py::arg("out") = py::none());
  cls.def(
      "logcumsumexp",
      [lcse_fn](const Tensor& t, int64_t dim) { return lcse_fn(t, dim, py::none()); },
      py::arg("dim"));

  def_median(m, cls, "median", static_cast<MedianAllFn>(&median),
             static_cast<MedianDimFn>(&median));
  def_median(m, cls, "nanmedian", static_cast<MedianAllFn>(&nanmedian),
             static_cast<MedianDimFn>(&nanmedian));

  auto mode_fn = [](const Tensor& t, int64_t dim, bool keepdim, py::handle out) {
    auto [v, i] = out_pair(out, "mode");
    TensorPair r = nogil(t.numel(), [&] { return mode(t, dim, keepdim, v, i); });
    return return_type("mode", r, !out.is_none());
  };
  m.def("mode", mode_fn, py::arg("input"), py::arg("dim") = -1, py::arg("keepdim") = false,
        py::kw_only(), py::arg("out") = py::none());
  cls.def(
      "mode",
      [mode_fn](const Tensor& t, int64_t dim, bool keepdim) {
        return mode_fn(t, dim, keepdim, py::none());
      },
      py::arg("dim") = -1, py::arg("keepdim") = false);

  def_quantile(m, cls, "quantile", false);
  def_quantile(m, cls, "nanquantile", true);
}

}  // namespace ember
