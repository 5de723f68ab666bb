// Statistics: var, std, var_mean, std_mean, norm, dist, logsumexp.
#include <algorithm>
#include <cmath>
#include <string>

#include "api/elementwise.h"
#include "api/linalg/spectral.h"
#include "bindings/reduce_helpers.h"

namespace ember {

namespace {

struct VarArgs {
  DimList dims;
  std::optional<Scalar> correction;
};

// PyTorch's overloads var(input, dim=None, *, correction=None, keepdim=False),
// var(input, dim, unbiased, keepdim=False) and var(input, unbiased): a bool in the dim slot is
// `unbiased`, and unbiased/correction exclude each other.
VarArgs parse_var_args(py::handle dim, py::handle unbiased, py::handle correction, const char* op) {
  VarArgs a;
  if (PyBool_Check(dim.ptr())) {
    if (!unbiased.is_none()) {
      throw py::type_error(str_cat("[", op,
                                   "] received an invalid combination of arguments: "
                                   "unbiased given twice"));
    }
    unbiased = dim;
    dim = py::none();
  }
  a.dims = parse_dims(dim, op);
  if (!unbiased.is_none()) {
    if (!PyBool_Check(unbiased.ptr())) {
      throw py::type_error(str_cat("[", op, "] argument 'unbiased' must be bool, not ",
                                   Py_TYPE(unbiased.ptr())->tp_name));
    }
    if (!correction.is_none()) {
      throw py::type_error(str_cat("[", op,
                                   "] received an invalid combination of arguments: "
                                   "cannot specify both unbiased and correction"));
    }
    a.correction = Scalar(int64_t(unbiased.ptr() == Py_True ? 1 : 0));
  } else if (!correction.is_none()) {
    auto s = try_parse_scalar(correction);
    if (!s) {
      throw py::type_error(str_cat("[", op, "] argument 'correction' must be a number, not ",
                                   Py_TYPE(correction.ptr())->tp_name));
    }
    a.correction = *s;
  }
  return a;
}

using VarFnPtr = Tensor (*)(const Tensor&, const DimList&, const std::optional<Scalar>&, bool,
                            const Tensor&);
using VarMeanFnPtr = TensorPair (*)(const Tensor&, const DimList&, const std::optional<Scalar>&,
                                    bool, const Tensor&, const Tensor&);

void def_var(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls, const char* name,
             VarFnPtr f) {
  m.def(
      name,
      [f, name](const Tensor& t, py::handle dim, py::handle unbiased, bool keepdim,
                py::handle correction, py::handle out) {
        VarArgs a = parse_var_args(dim, unbiased, correction, name);
        Tensor o = opt_tensor(out, name);
        return nogil(t.numel(), [&] { return f(t, a.dims, a.correction, keepdim, o); });
      },
      py::arg("input"), py::arg("dim") = py::none(), py::arg("unbiased") = py::none(),
      py::arg("keepdim") = false, py::kw_only(), py::arg("correction") = py::none(),
      py::arg("out") = py::none());
  cls.def(
      name,
      [f, name](const Tensor& t, py::handle dim, py::handle unbiased, bool keepdim,
                py::handle correction) {
        VarArgs a = parse_var_args(dim, unbiased, correction, name);
        return nogil(t.numel(), [&] { return f(t, a.dims, a.correction, keepdim, Tensor()); });
      },
      py::arg("dim") = py::none(), py::arg("unbiased") = py::none(), py::arg("keepdim") = false,
      py::kw_only(), py::arg("correction") = py::none());
}

void def_var_mean(py::module_& m, const char* name, VarMeanFnPtr f) {
  m.def(
      name,
      [f, name](const Tensor& t, py::handle dim, py::handle unbiased, bool keepdim,
                py::handle correction, py::handle out) {
        VarArgs a = parse_var_args(dim, unbiased, correction, name);
        auto [o0, o1] = out_pair(out, name);
        TensorPair r =
            nogil(t.numel(), [&] { return f(t, a.dims, a.correction, keepdim, o0, o1); });
        return py::make_tuple(r.first, r.second);  // a plain tuple, as PyTorch
      },
      py::arg("input"), py::arg("dim") = py::none(), py::arg("unbiased") = py::none(),
      py::arg("keepdim") = false, py::kw_only(), py::arg("correction") = py::none(),
      py::arg("out") = py::none());
}

// p: None or 'fro' (2-norm over the dims), a number (inf, -inf and 0 included). Other strings
// ('nuc', or 'fro' over more than two dims) go to linalg.matrix_norm, as torch.norm does.
NormOrder parse_norm_order(py::handle p) {
  if (p.is_none() || PyUnicode_Check(p.ptr())) return NormOrder{};
  auto s = try_parse_scalar(p);
  if (!s || s->is_complex()) {
    throw py::type_error(
        str_cat("[norm] p must be a number, 'fro' or None, not ", Py_TYPE(p.ptr())->tp_name));
  }
  return NormOrder::from_double(s->to_double());
}

// torch.norm's matrix-norm case: p a string other than 'fro' over at most two dims.
bool is_matrix_norm_order(py::handle p, const std::optional<std::vector<int64_t>>& dims) {
  if (!PyUnicode_Check(p.ptr())) return false;
  return p.cast<std::string>() != "fro" || (dims && dims->size() > 2);
}

}  // namespace

void init_reductions_stats(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  def_var(m, cls, "var", &var);
  def_var(m, cls, "std", &ember::std);
  def_var_mean(m, "var_mean", &var_mean);
  def_var_mean(m, "std_mean", &std_mean);

  // torch.norm(input, p='fro', dim=None, keepdim=False, out=None, dtype=None)
  auto norm_fn = [](const Tensor& t, py::handle p, py::handle dim, bool keepdim, py::handle out,
                    py::handle dtype) {
    NormOrder order = parse_norm_order(p);
    DimList dims = parse_dims(dim, "norm");
    ScalarType dt = opt_dtype(dtype);
    Tensor o = opt_tensor(out, "norm");
    if (is_matrix_norm_order(p, dims)) {
      linalg::NormOrd ord;
      ord.name = p.cast<std::string>();
      std::vector<int64_t> matrix_dims;
      if (dims) {
        matrix_dims = *dims;
      } else {
        for (int64_t d = 0; d < t.dim(); ++d) matrix_dims.push_back(d);
      }
      return nogil(t.numel(),
                   [&] { return linalg::matrix_norm(t, ord, matrix_dims, keepdim, dt, o); });
    }
    return nogil(t.numel(), [&] { return ember::norm(t, order, dims, keepdim, dt, o); });
  };
  m.def("norm", norm_fn, py::arg("input"), py::arg("p") = "fro", py::arg("dim") = py::none(),
        py::arg("keepdim") = false, py::arg("out") = py::none(), py::arg("dtype") = py::none());
  cls.def(
      "norm",
      [norm_fn](const Tensor& t, py::handle p, py::handle dim, bool keepdim, py::handle dtype) {
        return norm_fn(t, p, dim, keepdim, py::none(), dtype);
      },
      py::arg("p") = "fro", py::arg("dim") = py::none(), py::arg("keepdim") = false,
      py::arg("dtype") = py::none());

  // torch.dist(input, other, p=2): the p-norm of the broadcast difference. Composed of sub and
  // norm so that autograd (and double backward) differentiates it through their formulas.
  auto dist_fn = [](const Tensor& a, const Tensor& b, py::handle p) {
    auto s = try_parse_scalar(p);
    if (!s || s->is_complex() || PyBool_Check(p.ptr())) {
      throw py::type_error(
          str_cat("[dist] p must be a real number, not ", Py_TYPE(p.ptr())->tp_name));
    }
    const NormOrder order = NormOrder::from_double(s->to_double());
    return nogil(std::max(a.numel(), b.numel()), [&] { return ember::norm(sub(a, b), order); });
  };
  m.def("dist", dist_fn, py::arg("input"), py::arg("other"), py::arg("p") = 2);
  cls.def("dist", dist_fn, py::arg("other"), py::arg("p") = 2);

  auto lse_fn = [](const Tensor& t, py::handle dim, bool keepdim, py::handle out) {
    DimList dims = parse_dims(dim, "logsumexp");
    Tensor o = opt_tensor(out, "logsumexp");
    return nogil(t.numel(), [&] { return logsumexp(t, dims, keepdim, o); });
  };
  m.def("logsumexp", lse_fn, py::arg("input"), py::arg("dim"), py::arg("keepdim") = false,
        py::kw_only(), py::arg("out") = py::none());
  cls.def(
      "logsumexp",
      [lse_fn](const Tensor& t, py::handle dim, bool keepdim) {
        return lse_fn(t, dim, keepdim, py::none());
      },
      py::arg("dim"), py::arg("keepdim") = false);
}

}  // namespace ember
