// ember.linalg's spectral family (ember._C._linalg_spectral, re-exported by
// ember/linalg/_spectral.py), the top-level aliases PyTorch keeps (ember.svd, ember.qr, ...) and
// their Tensor methods. Argument conversion only; every call runs with the GIL released.
#include <initializer_list>
#include <string>
#include <vector>

#include "api/creation.h"
#include "api/linalg/spectral.h"
#include "bindings/list_args.h"

namespace ember {

namespace {

using TensorList = std::vector<Tensor>;

// An ember.return_types named tuple; out= calls get the "<name>_out" type, as PyTorch.
py::object named(const char* name, std::initializer_list<Tensor> items, bool is_out = false) {
  static py::handle module = py::module_::import("ember.return_types").release();
  py::tuple t(items.size());
  size_t i = 0;
  for (const Tensor& x : items) t[i++] = py::cast(x);
  const std::string type_name = is_out ? std::string(name) + "_out" : std::string(name);
  return module.attr(type_name.c_str())(t);
}

// out=(a, b, ...) of `n` tensors (None: all undefined).
TensorList tuple_out(py::handle out, size_t n, const char* op) {
  if (out.is_none()) return TensorList(n);
  if (is_tensor(out) || !PySequence_Check(out.ptr()) || static_cast<size_t>(py::len(out)) != n) {
    throw py::type_error(str_cat("[", op, "] out must be a tuple of ", n, " tensors"));
  }
  TensorList r;
  for (py::handle h : py::reinterpret_borrow<py::sequence>(out)) r.push_back(h.cast<Tensor>());
  return r;
}

std::optional<std::string> opt_string(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return h.cast<std::string>();
}

py::object svd_result(const std::tuple<Tensor, Tensor, Tensor>& r, const char* name, bool is_out) {
  return named(name, {std::get<0>(r), std::get<1>(r), std::get<2>(r)}, is_out);
}

// A tolerance given as None, a Python number or a tensor.
Tensor opt_tolerance(py::handle h) {
  if (h.is_none()) return Tensor();
  if (is_tensor(h)) return h.cast<Tensor>();
  return scalar_tensor(Scalar(h.cast<double>()), ScalarType::Float64);
}

// ord of the norms: None, a number (inf included) or "fro" / "nuc".
linalg::NormOrd parse_ord(py::handle h) {
  linalg::NormOrd ord;
  if (h.is_none()) return ord;
  if (py::isinstance<py::str>(h)) {
    ord.name = h.cast<std::string>();
  } else {
    ord.number = h.cast<double>();
  }
  return ord;
}

ScalarType dtype_arg(py::handle h) {
  if (h.is_none()) return ScalarType::Undefined;
  return h.cast<ScalarType>();
}

}  // namespace

void init_linalg_spectral(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  py::module_ la = m.def_submodule("_linalg_spectral", "ember.linalg's spectral family");

  la.def(
      "eigh",
      [](const Tensor& A, const std::string& uplo, py::handle out) {
        TensorList o = tuple_out(out, 2, "linalg.eigh");
        auto r = without_gil([&] { return linalg::eigh(A, uplo, o[0], o[1]); });
        return named("linalg_eigh", {std::get<0>(r), std::get<1>(r)}, !out.is_none());
      },
      py::arg("A"), py::arg("UPLO") = "L", py::kw_only(), py::arg("out") = py::none());
  la.def(
      "eigvalsh",
      [](const Tensor& A, const std::string& uplo, py::handle out) {
        Tensor o = opt_tensor(out);
        return without_gil([&] { return linalg::eigvalsh(A, uplo, o); });
      },
      py::arg("A"), py::arg("UPLO") = "L", py::kw_only(), py::arg("out") = py::none());

  la.def(
      "eig",
      [](const Tensor& A, py::handle out) {
        TensorList o = tuple_out(out, 2, "linalg.eig");
        auto r = without_gil([&] { return linalg::eig(A, o[0], o[1]); });
        return named("linalg_eig", {std::get<0>(r), std::get<1>(r)}, !out.is_none());
      },
      py::arg("A"), py::kw_only(), py::arg("out") = py::none());
  la.def(
      "eigvals",
      [](const Tensor& A, py::handle out) {
        Tensor o = opt_tensor(out);
        return without_gil([&] { return linalg::eigvals(A, o); });
      },
      py::arg("A"), py::kw_only(), py::arg("out") = py::none());

  la.def(
      "svd",
      [](const Tensor& A, bool full_matrices, py::handle driver, py::handle out) {
        TensorList o = tuple_out(out, 3, "linalg.svd");
        auto d = opt_string(driver);
        auto r = without_gil([&] { return linalg::svd(A, full_matrices, d, o[0], o[1], o[2]); });
        return svd_result(r, "linalg_svd", !out.is_none());
      },
      py::arg("A"), py::arg("full_matrices") = true, py::kw_only(), py::arg("driver") = py::none(),
      py::arg("out") = py::none());
  la.def(
      "svdvals",
      [](const Tensor& A, py::handle driver, py::handle out) {
        Tensor o = opt_tensor(out);
        auto d = opt_string(driver);
        return without_gil([&] { return linalg::svdvals(A, d, o); });
      },
      py::arg("A"), py::kw_only(), py::arg("driver") = py::none(), py::arg("out") = py::none());

  // matrix_sqrth(input): PyTorch's documentation says A, its binding takes `input`.
  la.def(
      "matrix_sqrth",
      [](const Tensor& A) { return without_gil([&] { return linalg::matrix_sqrth(A); }); },
      py::arg("input"));
  la.def(
      "polar",
      [](const Tensor& A, py::handle out) {
        TensorList o = tuple_out(out, 2, "linalg.polar");
        auto r = without_gil([&] { return linalg::polar(A, o[0], o[1]); });
        return named("linalg_polar", {std::get<0>(r), std::get<1>(r)}, !out.is_none());
      },
      py::arg("A"), py::kw_only(), py::arg("out") = py::none());

  la.def(
      "qr",
      [](const Tensor& A, const std::string& mode, py::handle out) {
        TensorList o = tuple_out(out, 2, "linalg.qr");
        auto r = without_gil([&] { return linalg::qr(A, mode, o[0], o[1]); });
        return named("linalg_qr", {std::get<0>(r), std::get<1>(r)}, !out.is_none());
      },
      py::arg("A"), py::arg("mode") = "reduced", py::kw_only(), py::arg("out") = py::none());
  la.def(
      "householder_product",
      [](const Tensor& A, const Tensor& tau, py::handle out) {
        Tensor o = opt_tensor(out);
        return without_gil([&] { return linalg::householder_product(A, tau, o); });
      },
      py::arg("A"), py::arg("tau"), py::kw_only(), py::arg("out") = py::none());

  // torch.qr / Tensor.qr (the old API: some), torch.geqrf / Tensor.geqrf, torch.orgqr /
  // Tensor.orgqr (householder_product).
  m.def(
      "qr",
      [](const Tensor& A, bool some, py::handle out) {
        TensorList o = tuple_out(out, 2, "qr");
        auto r = without_gil([&] { return qr(A, some, o[0], o[1]); });
        return named("qr", {std::get<0>(r), std::get<1>(r)}, !out.is_none());
      },
      py::arg("input"), py::arg("some") = true, py::kw_only(), py::arg("out") = py::none());
  cls.def(
      "qr",
      [](const Tensor& A, bool some) {
        auto r = without_gil([&] { return qr(A, some); });
        return named("qr", {std::get<0>(r), std::get<1>(r)});
      },
      py::arg("some") = true);
  m.def(
      "geqrf",
      [](const Tensor& A, py::handle out) {
        TensorList o = tuple_out(out, 2, "geqrf");
        auto r = without_gil([&] { return geqrf(A, o[0], o[1]); });
        return named("geqrf", {std::get<0>(r), std::get<1>(r)}, !out.is_none());
      },
      py::arg("input"), py::kw_only(), py::arg("out") = py::none());
  cls.def("geqrf", [](const Tensor& A) {
    auto r = without_gil([&] { return geqrf(A); });
    return named("geqrf", {std::get<0>(r), std::get<1>(r)});
  });
  m.def(
      "orgqr",
      [](const Tensor& A, const Tensor& tau, py::handle out) {
        Tensor o = opt_tensor(out);
        return without_gil([&] { return linalg::householder_product(A, tau, o); });
      },
      py::arg("input"), py::arg("input2"), py::kw_only(), py::arg("out") = py::none());
  cls.def(
      "orgqr",
      [](const Tensor& A, const Tensor& tau) {
        return without_gil([&] { return linalg::householder_product(A, tau); });
      },
      py::arg("input2"));

  la.def(
      "lstsq",
      [](const Tensor& A, const Tensor& B, py::handle rcond, py::handle driver) {
        std::optional<double> rc;
        if (!rcond.is_none()) rc = rcond.cast<double>();
        auto d = opt_string(driver);
        auto r = without_gil([&] { return linalg::lstsq(A, B, rc, d); });
        return named("linalg_lstsq",
                     {std::get<0>(r), std::get<1>(r), std::get<2>(r), std::get<3>(r)});
      },
      py::arg("A"), py::arg("B"), py::arg("rcond") = py::none(), py::kw_only(),
      py::arg("driver") = py::none());
  // pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None): the positional
  // rcond is PyTorch's older spelling of rtol (with atol = 0).
  la.def(
      "pinv",
      [](const Tensor& A, py::handle rcond, bool hermitian, py::handle atol, py::handle rtol,
         py::handle out) {
        Tensor a = opt_tolerance(atol), r = opt_tolerance(rtol), o = opt_tensor(out);
        if (!rcond.is_none()) {
          if (!atol.is_none() || !rtol.is_none()) {
            throw py::type_error("[linalg.pinv] rcond cannot be combined with atol / rtol");
          }
          r = opt_tolerance(rcond);
          a = scalar_tensor(Scalar(0.0), ScalarType::Float64);
        }
        return without_gil([&] { return linalg::pinv(A, a, r, hermitian, o); });
      },
      py::arg("A"), py::arg("rcond") = py::none(), py::arg("hermitian") = false, py::kw_only(),
      py::arg("atol") = py::none(), py::arg("rtol") = py::none(), py::arg("out") = py::none());
  // matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None): tol is the
  // older spelling of atol (with rtol = 0).
  la.def(
      "matrix_rank",
      [](const Tensor& A, py::handle tol, bool hermitian, py::handle atol, py::handle rtol,
         py::handle out) {
        Tensor a = opt_tolerance(atol), r = opt_tolerance(rtol), o = opt_tensor(out);
        if (!tol.is_none()) {
          if (!atol.is_none() || !rtol.is_none()) {
            throw py::type_error("[linalg.matrix_rank] tol cannot be combined with atol / rtol");
          }
          a = opt_tolerance(tol);
          r = scalar_tensor(Scalar(0.0), ScalarType::Float64);
        }
        return without_gil([&] { return linalg::matrix_rank(A, a, r, hermitian, o); });
      },
      py::arg("A"), py::arg("tol") = py::none(), py::arg("hermitian") = false, py::kw_only(),
      py::arg("atol") = py::none(), py::arg("rtol") = py::none(), py::arg("out") = py::none());
  la.def(
      "matrix_norm",
      [](const Tensor& A, py::handle ord, py::handle dim, bool keepdim, py::handle dtype,
         py::handle out) {
        linalg::NormOrd o = parse_ord(ord);
        if (!o.number && !o.name) o.name = "fro";
        auto dims = parse_dims(dim, "linalg.matrix_norm");
        DimVector d = dims ? DimVector(IntArrayRef(*dims)) : DimVector{-2, -1};
        ScalarType dt = dtype_arg(dtype);
        Tensor ot = opt_tensor(out);
        return without_gil([&] { return linalg::matrix_norm(A, o, d, keepdim, dt, ot); });
      },
      py::arg("A"), py::arg("ord") = "fro", py::arg("dim") = py::make_tuple(-2, -1),
      py::arg("keepdim") = false, py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("out") = py::none());
  la.def(
      "norm",
      [](const Tensor& A, py::handle ord, py::handle dim, bool keepdim, py::handle out,
         py::handle dtype) {
        linalg::NormOrd o = parse_ord(ord);
        auto dims = parse_dims(dim, "linalg.norm");
        ScalarType dt = dtype_arg(dtype);
        Tensor ot = opt_tensor(out);
        return without_gil([&] { return linalg::norm(A, o, dims, keepdim, dt, ot); });
      },
      py::arg("input"), py::arg("ord") = py::none(), py::arg("dim") = py::none(),
      py::arg("keepdim") = false, py::kw_only(), py::arg("out") = py::none(),
      py::arg("dtype") = py::none());
  la.def(
      "cond",
      [](const Tensor& A, py::handle p, py::handle out) {
        linalg::NormOrd o = parse_ord(p);
        Tensor ot = opt_tensor(out);
        return without_gil([&] { return linalg::cond(A, o, ot); });
      },
      py::arg("A"), py::arg("p") = py::none(), py::kw_only(), py::arg("out") = py::none());

  // torch.pinverse / Tensor.pinverse.
  m.def(
      "pinverse",
      [](const Tensor& A, double rcond) { return without_gil([&] { return pinverse(A, rcond); }); },
      py::arg("input"), py::arg("rcond") = 1e-15);
  cls.def(
      "pinverse",
      [](const Tensor& A, double rcond) { return without_gil([&] { return pinverse(A, rcond); }); },
      py::arg("rcond") = 1e-15);

  // torch.svd and Tensor.svd: (U, S, V).
  m.def(
      "svd",
      [](const Tensor& A, bool some, bool compute_uv, py::handle out) {
        TensorList o = tuple_out(out, 3, "svd");
        auto r = without_gil([&] { return svd(A, some, compute_uv, o[0], o[1], o[2]); });
        return svd_result(r, "svd", !out.is_none());
      },
      py::arg("input"), py::arg("some") = true, py::arg("compute_uv") = true, py::kw_only(),
      py::arg("out") = py::none());
  cls.def(
      "svd",
      [](const Tensor& A, bool some, bool compute_uv) {
        return svd_result(without_gil([&] { return svd(A, some, compute_uv); }), "svd", false);
      },
      py::arg("some") = true, py::arg("compute_uv") = true);
}

}  // namespace ember
