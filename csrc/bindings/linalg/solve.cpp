// Bindings of the linalg solve family: ember._C._linalg_solve (re-exported by ember.linalg), the
// top-level aliases (det, logdet, slogdet, inverse, cholesky_solve, cholesky_inverse, lu_unpack,
// triangular_solve, lu_solve) and their Tensor methods. Argument conversion only; every call
// runs with the GIL released once the matrices are large enough to matter.
#include <array>
#include <string>

#include "api/linalg/solve.h"
#include "bindings/pybind_ember.h"

namespace ember {

namespace {

using Class = py::class_<TensorImpl, TensorImplPtr>;

// n^3-ish work of a call on A: below the threshold the GIL stays held (releasing it costs more
// than a 4x4 solve).
int64_t work_of(const Tensor& A) {
  const int64_t n = A.dim() >= 1 ? A.size(A.dim() - 1) : 1;
  return A.numel() * n;
}

template <typename F>
auto run(const Tensor& A, F&& f) {
  return with_gil_released_if(work_of(A), std::forward<F>(f));
}

Tensor opt_out(py::handle h, const char* op) {
  if (h.is_none()) return Tensor();
  if (!is_tensor(h)) {
    throw py::type_error(
        str_cat("[", op, "] argument 'out' must be Tensor, not ", Py_TYPE(h.ptr())->tp_name));
  }
  return h.cast<Tensor>();
}

// out=(t0, t1, ...) of an op with N outputs.
template <size_t N>
std::array<Tensor, N> outs(py::handle h, const char* op) {
  std::array<Tensor, N> r;
  if (h.is_none()) return r;
  if ((!PyTuple_Check(h.ptr()) && !PyList_Check(h.ptr())) || py::len(h) != N) {
    throw py::type_error(str_cat("[", op, "] argument 'out' must be a tuple of ", N,
                                 " Tensors, not ", Py_TYPE(h.ptr())->tp_name));
  }
  auto seq = py::reinterpret_borrow<py::sequence>(h);
  for (size_t i = 0; i < N; ++i) {
    if (!is_tensor(seq[i])) {
      throw py::type_error(str_cat("[", op, "] argument 'out' must be a tuple of ", N, " Tensors"));
    }
    r[i] = seq[i].cast<Tensor>();
  }
  return r;
}

// An ember.return_types named tuple; out= calls get the "<name>_out" type, as PyTorch's.
py::object named(const char* name, bool is_out, py::tuple values) {
  static py::handle module = py::module_::import("ember.return_types").release();
  const std::string type_name = is_out ? std::string(name) + "_out" : std::string(name);
  return module.attr(type_name.c_str())(values);
}
py::object named(const char* name, bool is_out, const TensorPair& r) {
  return named(name, is_out, py::make_tuple(r.first, r.second));
}
py::object named(const char* name, bool is_out, const TensorTriple& r) {
  return named(name, is_out, py::make_tuple(std::get<0>(r), std::get<1>(r), std::get<2>(r)));
}

void def_cholesky(py::module_& lm) {
  lm.def(
      "cholesky",
      [](const Tensor& A, bool upper, py::handle out) {
        Tensor o = opt_out(out, "linalg.cholesky");
        return run(A, [&] { return linalg_cholesky(A, upper, o); });
      },
      py::arg("input"), py::kw_only(), py::arg("upper") = false, py::arg("out") = py::none(),
      "linalg.cholesky(A, *, upper=False, out=None) -> Tensor");
  lm.def(
      "cholesky_ex",
      [](const Tensor& A, bool upper, bool check_errors, py::handle out) {
        auto o = outs<2>(out, "linalg.cholesky_ex");
        auto r = run(A, [&] { return linalg_cholesky_ex(A, upper, check_errors, o[0], o[1]); });
        return named("linalg_cholesky_ex", !out.is_none(), r);
      },
      py::arg("input"), py::kw_only(), py::arg("upper") = false, py::arg("check_errors") = false,
      py::arg("out") = py::none(),
      "linalg.cholesky_ex(A, *, upper=False, check_errors=False, out=None) -> (L, info)");
}

void def_inverse_and_det(py::module_& m, py::module_& lm, Class& cls) {
  lm.def(
      "inv",
      [](const Tensor& A, py::handle out) {
        Tensor o = opt_out(out, "linalg.inv");
        return run(A, [&] { return linalg_inv(A, o); });
      },
      py::arg("A"), py::kw_only(), py::arg("out") = py::none(),
      "linalg.inv(A, *, out=None) -> Tensor");
  lm.def(
      "inv_ex",
      [](const Tensor& A, bool check_errors, py::handle out) {
        auto o = outs<2>(out, "linalg.inv_ex");
        auto r = run(A, [&] { return linalg_inv_ex(A, check_errors, o[0], o[1]); });
        return named("linalg_inv_ex", !out.is_none(), r);
      },
      py::arg("A"), py::kw_only(), py::arg("check_errors") = false, py::arg("out") = py::none(),
      "linalg.inv_ex(A, *, check_errors=False, out=None) -> (inverse, info)");
  m.def(
      "inverse",
      [](const Tensor& A, py::handle out) {
        Tensor o = opt_out(out, "inverse");
        return run(A, [&] { return linalg_inv(A, o); });
      },
      py::arg("input"), py::kw_only(), py::arg("out") = py::none(),
      "inverse(input, *, out=None) -> Tensor (alias of linalg.inv)");
  cls.def(
      "inverse", [](const Tensor& A) { return run(A, [&] { return linalg_inv(A); }); },
      "Tensor.inverse() -> Tensor");

  lm.def(
      "det",
      [](const Tensor& A, py::handle out) {
        Tensor o = opt_out(out, "linalg.det");
        return run(A, [&] { return linalg_det(A, o); });
      },
      py::arg("A"), py::kw_only(), py::arg("out") = py::none(),
      "linalg.det(A, *, out=None) -> Tensor");
  m.def(
      "det", [](const Tensor& A) { return run(A, [&] { return linalg_det(A); }); },
      py::arg("input"), "det(input) -> Tensor (alias of linalg.det)");
  cls.def(
      "det", [](const Tensor& A) { return run(A, [&] { return linalg_det(A); }); },
      "Tensor.det() -> Tensor");

  lm.def(
      "slogdet",
      [](const Tensor& A, py::handle out) {
        auto o = outs<2>(out, "linalg.slogdet");
        auto r = run(A, [&] { return linalg_slogdet(A, o[0], o[1]); });
        return named("linalg_slogdet", !out.is_none(), r);
      },
      py::arg("A"), py::kw_only(), py::arg("out") = py::none(),
      "linalg.slogdet(A, *, out=None) -> (sign, logabsdet)");
  m.def(
      "slogdet",
      [](const Tensor& A, py::handle out) {
        auto o = outs<2>(out, "slogdet");
        auto r = run(A, [&] { return linalg_slogdet(A, o[0], o[1]); });
        return named("slogdet", !out.is_none(), r);
      },
      py::arg("input"), py::kw_only(), py::arg("out") = py::none(),
      "slogdet(input, *, out=None) -> (sign, logabsdet)");
  cls.def(
      "slogdet",
      [](const Tensor& A) {
        return named("slogdet", false, run(A, [&] { return linalg_slogdet(A); }));
      },
      "Tensor.slogdet() -> (sign, logabsdet)");

  m.def(
      "logdet", [](const Tensor& A) { return run(A, [&] { return logdet(A); }); }, py::arg("input"),
      "logdet(input) -> Tensor");
  cls.def(
      "logdet", [](const Tensor& A) { return run(A, [&] { return logdet(A); }); },
      "Tensor.logdet() -> Tensor");
}

void def_solve(py::module_& lm) {
  lm.def(
      "solve",
      [](const Tensor& A, const Tensor& B, bool left, py::handle out) {
        Tensor o = opt_out(out, "linalg.solve");
        return run(A, [&] { return linalg_solve(A, B, left, o); });
      },
      py::arg("A"), py::arg("B"), py::kw_only(), py::arg("left") = true,
      py::arg("out") = py::none(), "linalg.solve(A, B, *, left=True, out=None) -> Tensor");
  lm.def(
      "solve_ex",
      [](const Tensor& A, const Tensor& B, bool left, bool check_errors, py::handle out) {
        auto o = outs<2>(out, "linalg.solve_ex");
        auto r = run(A, [&] { return linalg_solve_ex(A, B, left, check_errors, o[0], o[1]); });
        return named("linalg_solve_ex", !out.is_none(), r);
      },
      py::arg("A"), py::arg("B"), py::kw_only(), py::arg("left") = true,
      py::arg("check_errors") = false, py::arg("out") = py::none(),
      "linalg.solve_ex(A, B, *, left=True, check_errors=False, out=None) -> (result, info)");
}

void def_triangular(py::module_& m, py::module_& lm, Class& cls) {
  lm.def(
      "solve_triangular",
      [](const Tensor& A, const Tensor& B, bool upper, bool left, bool unitriangular,
         py::handle out) {
        Tensor o = opt_out(out, "linalg.solve_triangular");
        return run(A, [&] { return linalg_solve_triangular(A, B, upper, left, unitriangular, o); });
      },
      py::arg("input"), py::arg("B"), py::kw_only(), py::arg("upper"), py::arg("left") = true,
      py::arg("unitriangular") = false, py::arg("out") = py::none(),
      "linalg.solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None)");
  m.def(
      "triangular_solve",
      [](const Tensor& b, const Tensor& A, bool upper, bool transpose, bool unitriangular,
         py::handle out) {
        auto o = outs<2>(out, "triangular_solve");
        auto r = run(
            A, [&] { return triangular_solve(b, A, upper, transpose, unitriangular, o[0], o[1]); });
        return named("triangular_solve", !out.is_none(), r);
      },
      py::arg("input"), py::arg("A"), py::arg("upper") = true, py::arg("transpose") = false,
      py::arg("unitriangular") = false, py::kw_only(), py::arg("out") = py::none(),
      "triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None)");
  cls.def(
      "triangular_solve",
      [](const Tensor& b, const Tensor& A, bool upper, bool transpose, bool unitriangular) {
        auto r = run(A, [&] { return triangular_solve(b, A, upper, transpose, unitriangular); });
        return named("triangular_solve", false, r);
      },
      py::arg("A"), py::arg("upper") = true, py::arg("transpose") = false,
      py::arg("unitriangular") = false);

  m.def(
      "cholesky_solve",
      [](const Tensor& B, const Tensor& L, bool upper, py::handle out) {
        Tensor o = opt_out(out, "cholesky_solve");
        return run(L, [&] { return cholesky_solve(B, L, upper, o); });
      },
      py::arg("input"), py::arg("input2"), py::arg("upper") = false, py::kw_only(),
      py::arg("out") = py::none(), "cholesky_solve(B, L, upper=False, *, out=None) -> Tensor");
  cls.def(
      "cholesky_solve",
      [](const Tensor& B, const Tensor& L, bool upper) {
        return run(L, [&] { return cholesky_solve(B, L, upper); });
      },
      py::arg("input2"), py::arg("upper") = false);
  m.def(
      "cholesky_inverse",
      [](const Tensor& L, bool upper, py::handle out) {
        Tensor o = opt_out(out, "cholesky_inverse");
        return run(L, [&] { return cholesky_inverse(L, upper, o); });
      },
      py::arg("input"), py::arg("upper") = false, py::kw_only(), py::arg("out") = py::none(),
      "cholesky_inverse(L, upper=False, *, out=None) -> Tensor");
  cls.def(
      "cholesky_inverse",
      [](const Tensor& L, bool upper) {
        return run(L, [&] { return cholesky_inverse(L, upper); });
      },
      py::arg("upper") = false);
}

void def_lu(py::module_& m, py::module_& lm, Class& cls) {
  lm.def(
      "lu_factor",
      [](const Tensor& A, bool pivot, py::handle out) {
        auto o = outs<2>(out, "linalg.lu_factor");
        auto r = run(A, [&] { return linalg_lu_factor(A, pivot, o[0], o[1]); });
        return named("linalg_lu_factor", !out.is_none(), r);
      },
      py::arg("A"), py::kw_only(), py::arg("pivot") = true, py::arg("out") = py::none(),
      "linalg.lu_factor(A, *, pivot=True, out=None) -> (LU, pivots)");
  lm.def(
      "lu_factor_ex",
      [](const Tensor& A, bool pivot, bool check_errors, py::handle out) {
        auto o = outs<3>(out, "linalg.lu_factor_ex");
        auto r =
            run(A, [&] { return linalg_lu_factor_ex(A, pivot, check_errors, o[0], o[1], o[2]); });
        return named("linalg_lu_factor_ex", !out.is_none(), r);
      },
      py::arg("A"), py::kw_only(), py::arg("pivot") = true, py::arg("check_errors") = false,
      py::arg("out") = py::none(),
      "linalg.lu_factor_ex(A, *, pivot=True, check_errors=False, out=None) -> (LU, pivots, "
      "info)");
  lm.def(
      "lu",
      [](const Tensor& A, bool pivot, py::handle out) {
        auto o = outs<3>(out, "linalg.lu");
        auto r = run(A, [&] { return linalg_lu(A, pivot, o[0], o[1], o[2]); });
        return named("linalg_lu", !out.is_none(), r);
      },
      py::arg("A"), py::kw_only(), py::arg("pivot") = true, py::arg("out") = py::none(),
      "linalg.lu(A, *, pivot=True, out=None) -> (P, L, U)");
  lm.def(
      "lu_solve",
      [](const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left, bool adjoint,
         py::handle out) {
        Tensor o = opt_out(out, "linalg.lu_solve");
        return run(LU, [&] { return linalg_lu_solve(LU, pivots, B, left, adjoint, o); });
      },
      py::arg("LU"), py::arg("pivots"), py::arg("B"), py::kw_only(), py::arg("left") = true,
      py::arg("adjoint") = false, py::arg("out") = py::none(),
      "linalg.lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None) -> Tensor");
  // The deprecated torch.lu_solve(b, LU_data, LU_pivots) and Tensor.lu_solve.
  m.def(
      "lu_solve",
      [](const Tensor& b, const Tensor& LU, const Tensor& pivots, py::handle out) {
        Tensor o = opt_out(out, "lu_solve");
        return run(LU, [&] { return linalg_lu_solve(LU, pivots, b, true, false, o); });
      },
      py::arg("input"), py::arg("LU_data"), py::arg("LU_pivots"), py::kw_only(),
      py::arg("out") = py::none(), "lu_solve(b, LU_data, LU_pivots, *, out=None) -> Tensor");
  cls.def(
      "lu_solve",
      [](const Tensor& b, const Tensor& LU, const Tensor& pivots) {
        return run(LU, [&] { return linalg_lu_solve(LU, pivots, b, true, false); });
      },
      py::arg("LU_data"), py::arg("LU_pivots"));
  // The deprecated torch.lu(A, pivot=True, get_infos=False) / Tensor.lu: lu_factor_ex as a plain
  // tuple (LU, pivots) or (LU, pivots, infos), raising on a zero pivot unless get_infos.
  auto lu = [](const Tensor& A, bool pivot, bool get_infos, py::handle out) -> py::tuple {
    std::array<Tensor, 3> o;
    if (get_infos) {
      o = outs<3>(out, "lu");
    } else {
      auto o2 = outs<2>(out, "lu");  // (LU, pivots)
      o = {o2[0], o2[1], Tensor()};
    }
    auto r = run(A, [&] { return linalg_lu_factor_ex(A, pivot, !get_infos, o[0], o[1], o[2]); });
    if (get_infos) return py::make_tuple(std::get<0>(r), std::get<1>(r), std::get<2>(r));
    return py::make_tuple(std::get<0>(r), std::get<1>(r));
  };
  m.def("lu", lu, py::arg("A"), py::arg("pivot") = true, py::arg("get_infos") = false,
        py::kw_only(), py::arg("out") = py::none(),
        "lu(A, pivot=True, get_infos=False, out=None) -> (LU, pivots[, infos])");
  cls.def(
      "lu",
      [lu](const Tensor& A, bool pivot, bool get_infos) {
        return lu(A, pivot, get_infos, py::none());
      },
      py::arg("pivot") = true, py::arg("get_infos") = false);
  m.def(
      "lu_unpack",
      [](const Tensor& LU, const Tensor& pivots, bool unpack_data, bool unpack_pivots,
         py::handle out) {
        auto o = outs<3>(out, "lu_unpack");
        auto r = run(LU, [&] {
          return lu_unpack(LU, pivots, unpack_data, unpack_pivots, o[0], o[1], o[2]);
        });
        return named("lu_unpack", !out.is_none(), r);
      },
      py::arg("LU_data"), py::arg("LU_pivots"), py::arg("unpack_data") = true,
      py::arg("unpack_pivots") = true, py::kw_only(), py::arg("out") = py::none(),
      "lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None) -> (P, "
      "L, U)");
}

void def_ldl(py::module_& lm) {
  lm.def(
      "ldl_factor",
      [](const Tensor& A, bool hermitian, py::handle out) {
        auto o = outs<2>(out, "linalg.ldl_factor");
        auto r = run(A, [&] { return linalg_ldl_factor(A, hermitian, o[0], o[1]); });
        return named("linalg_ldl_factor", !out.is_none(), r);
      },
      py::arg("input"), py::kw_only(), py::arg("hermitian") = false, py::arg("out") = py::none(),
      "linalg.ldl_factor(A, *, hermitian=False, out=None) -> (LD, pivots)");
  lm.def(
      "ldl_factor_ex",
      [](const Tensor& A, bool hermitian, bool check_errors, py::handle out) {
        auto o = outs<3>(out, "linalg.ldl_factor_ex");
        auto r = run(
            A, [&] { return linalg_ldl_factor_ex(A, hermitian, check_errors, o[0], o[1], o[2]); });
        return named("linalg_ldl_factor_ex", !out.is_none(), r);
      },
      py::arg("input"), py::kw_only(), py::arg("hermitian") = false,
      py::arg("check_errors") = false, py::arg("out") = py::none(),
      "linalg.ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None) -> (LD, "
      "pivots, info)");
  lm.def(
      "ldl_solve",
      [](const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian, py::handle out) {
        Tensor o = opt_out(out, "linalg.ldl_solve");
        return run(LD, [&] { return linalg_ldl_solve(LD, pivots, B, hermitian, o); });
      },
      py::arg("LD"), py::arg("pivots"), py::arg("B"), py::kw_only(), py::arg("hermitian") = false,
      py::arg("out") = py::none(),
      "linalg.ldl_solve(LD, pivots, B, *, hermitian=False, out=None) -> Tensor");
}

}  // namespace

void init_linalg_solve(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  py::module_ lm = m.def_submodule("_linalg_solve", "ember.linalg's solve family");
  def_cholesky(lm);
  def_inverse_and_det(m, lm, cls);
  def_solve(lm);
  def_triangular(m, lm, cls);
  def_lu(m, lm, cls);
  def_ldl(lm);
}

}  // namespace ember
