// ember._C._linalg (PyTorch's torch._C._linalg): linalg_vector_norm, linalg_cross,
// linalg_vecdot, linalg_vander, linalg_diagonal, linalg_multi_dot, linalg_matrix_power,
// linalg_matrix_exp, linalg_tensorinv, linalg_tensorsolve, re-exported by
// python/ember/linalg/_misc.py under their torch.linalg names; and the top-level matrix_power /
// matrix_exp with their Tensor methods.
#include "api/linalg/misc.h"
#include "api/linalg/common.h"
#include "api/views.h"
#include "bindings/list_args.h"
#include "bindings/reduce_helpers.h"

namespace ember {

namespace {

// ord: a real Python number or a one-element tensor (PyTorch's Scalar argument).
double parse_order(py::handle h, const char* op) {
  if (is_tensor(h)) {
    const Tensor t = h.cast<Tensor>();
    if (t.numel() != 1) {
      throw py::type_error(str_cat("[", op, "] argument 'ord' must be Number, not Tensor"));
    }
    const py::object value = py::reinterpret_borrow<py::object>(h).attr("item")();
    return parse_order(value, op);
  }
  if (PyComplex_Check(h.ptr())) {
    throw Error(str_cat("[", op, "] Expected a non-complex scalar as the order of norm."));
  }
  if (!PyLong_Check(h.ptr()) && !PyFloat_Check(h.ptr()) && !PyIndex_Check(h.ptr())) {
    throw py::type_error(
        str_cat("[", op, "] argument 'ord' must be Number, not ", Py_TYPE(h.ptr())->tp_name));
  }
  return py::reinterpret_borrow<py::object>(h).cast<double>();
}

int64_t matrix_work(const Tensor& A) {
  const int64_t n = A.dim() >= 2 ? linalg::cols(A) : 1;
  return A.numel() * n;
}

}  // namespace

void init_linalg_misc(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  py::module_ la = m.def_submodule("_linalg", "torch._C._linalg: the functions of ember.linalg");

  la.def(
      "linalg_vector_norm",
      [](const Tensor& x, py::handle ord, py::handle dim, bool keepdim, py::handle dtype,
         py::handle out) {
        const char* op = "linalg.vector_norm";
        const double p = parse_order(ord, op);
        const DimList dims = parse_dims(dim, op);
        const ScalarType dt = opt_dtype(dtype);
        const Tensor o = opt_tensor(out, op);
        return nogil(x.numel(), [&] { return linalg_vector_norm(x, p, dims, keepdim, dt, o); });
      },
      py::arg("x"), py::arg("ord") = 2, py::arg("dim") = py::none(), py::arg("keepdim") = false,
      py::kw_only(), py::arg("dtype") = py::none(), py::arg("out") = py::none(),
      "linalg.vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None) -> Tensor");

  la.def(
      "linalg_cross",
      [](const Tensor& a, const Tensor& b, int64_t dim, py::handle out) {
        const Tensor o = opt_tensor(out, "linalg.cross");
        return nogil(a.numel() + b.numel(), [&] { return linalg_cross(a, b, dim, o); });
      },
      py::arg("input"), py::arg("other"), py::kw_only(), py::arg("dim") = -1,
      py::arg("out") = py::none(), "linalg.cross(input, other, *, dim=-1, out=None) -> Tensor");

  la.def(
      "linalg_vecdot",
      [](const Tensor& x, const Tensor& y, int64_t dim, py::handle out) {
        const Tensor o = opt_tensor(out, "linalg.vecdot");
        return nogil(x.numel() + y.numel(), [&] { return linalg_vecdot(x, y, dim, o); });
      },
      py::arg("x"), py::arg("y"), py::kw_only(), py::arg("dim") = -1, py::arg("out") = py::none(),
      "linalg.vecdot(x, y, *, dim=-1, out=None) -> Tensor");

  la.def(
      "linalg_vander",
      [](const Tensor& x, py::handle N) {
        const std::optional<int64_t> n = opt_int(N, "linalg.vander", "N");
        return nogil(x.numel() * n.value_or(x.dim() > 0 ? x.size(x.dim() - 1) : 1),
                     [&] { return linalg_vander(x, n); });
      },
      py::arg("x"), py::kw_only(), py::arg("N") = py::none(),
      "linalg.vander(x, *, N=None) -> Tensor");

  la.def(
      "linalg_diagonal",
      [](const Tensor& A, int64_t offset, int64_t dim1, int64_t dim2) {
        return diagonal(A, offset, dim1, dim2);
      },
      py::arg("A"), py::kw_only(), py::arg("offset") = 0, py::arg("dim1") = -2,
      py::arg("dim2") = -1, "linalg.diagonal(A, *, offset=0, dim1=-2, dim2=-1) -> Tensor");

  la.def(
      "linalg_multi_dot",
      [](py::handle tensors, py::handle out) {
        const std::vector<Tensor> ts = tensor_list(tensors, "linalg.multi_dot");
        const Tensor o = opt_tensor(out, "linalg.multi_dot");
        int64_t work = 0;
        for (const Tensor& t : ts) work += t.numel();
        return nogil(work * 8, [&] { return linalg_multi_dot(ts, o); });
      },
      py::arg("tensors"), py::kw_only(), py::arg("out") = py::none(),
      "linalg.multi_dot(tensors, *, out=None) -> Tensor");

  auto matrix_power = [](const Tensor& A, int64_t n, py::handle out) {
    const Tensor o = opt_tensor(out, "linalg.matrix_power");
    return nogil(matrix_work(A), [&] { return linalg_matrix_power(A, n, o); });
  };
  la.def("linalg_matrix_power", matrix_power, py::arg("A"), py::arg("n"), py::kw_only(),
         py::arg("out") = py::none(), "linalg.matrix_power(A, n, *, out=None) -> Tensor");
  m.def("matrix_power", matrix_power, py::arg("input"), py::arg("n"), py::kw_only(),
        py::arg("out") = py::none());
  cls.def(
      "matrix_power",
      [](const Tensor& A, int64_t n) {
        return nogil(matrix_work(A), [&] { return linalg_matrix_power(A, n); });
      },
      py::arg("n"));

  la.def(
      "linalg_tensorinv",
      [](const Tensor& A, int64_t ind, py::handle out) {
        const Tensor o = opt_tensor(out, "linalg.tensorinv");
        return nogil(matrix_work(A), [&] { return linalg_tensorinv(A, ind, o); });
      },
      py::arg("A"), py::arg("ind") = 2, py::kw_only(), py::arg("out") = py::none(),
      "linalg.tensorinv(A, ind=2, *, out=None) -> Tensor");
  la.def(
      "linalg_tensorsolve",
      [](const Tensor& A, const Tensor& B, py::handle dims, py::handle out) {
        const char* op = "linalg.tensorsolve";
        std::optional<DimVector> d;
        if (const DimList parsed = parse_dims(dims, op)) d = DimVector(IntArrayRef(*parsed));
        const Tensor o = opt_tensor(out, op);
        return nogil(A.numel() * 8, [&] { return linalg_tensorsolve(A, B, d, o); });
      },
      py::arg("A"), py::arg("B"), py::arg("dims") = py::none(), py::kw_only(),
      py::arg("out") = py::none(), "linalg.tensorsolve(A, B, dims=None, *, out=None) -> Tensor");

  auto matrix_exp = [](const Tensor& A) {
    return nogil(matrix_work(A), [&] { return linalg_matrix_exp(A); });
  };
  la.def("linalg_matrix_exp", matrix_exp, py::arg("A"), "linalg.matrix_exp(A) -> Tensor");
  m.def("matrix_exp", matrix_exp, py::arg("input"));
  cls.def("matrix_exp", matrix_exp);
}

}  // namespace ember
