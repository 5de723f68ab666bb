// ember.linalg's spectral family (ember._C._linalg_spectral, re-exported by
// ember/linalg/_spectral.py), the top-level aliases PyTorch keeps (ember.svd, ember.qr, ...) and
// their Tensor methods. Argument conversion only; every call runs with the GIL released.
#include <initializer_list>
#include <string>
#include <vector>

#include "bindings/list_args.h"
#include "ops/linalg_spectral.h"

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
  if (!PySequence_Check(out.ptr()) || static_cast<size_t>(py::len(out)) != n) {
    throw py::type_error(str_cat("[", op, "] out must be a tuple of ", n, " tensors"));
  }
  TensorList r;
  for (py::handle h : py::reinterpret_borrow<py::sequence>(out)) r.push_back(h.cast<Tensor>());
  return r;
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
}

}  // namespace ember
