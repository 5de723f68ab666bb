// ember.fft's transforms (ember._C._fft, re-exported by python/ember/fft/__init__.py). Argument
// conversion only; every call runs with the GIL released.
#include <optional>
#include <string>
#include <vector>

#include "api/fft.h"
#include "bindings/list_args.h"

namespace ember {

namespace {

using OptSizes = fft::OptSizes;

// s= / dim=: None, an int, or a sequence of ints.
OptSizes opt_sizes(py::handle h, const char* op, const char* what) {
  if (h.is_none()) return std::nullopt;
  if (PyLong_Check(h.ptr()) || PyIndex_Check(h.ptr())) {
    return std::vector<int64_t>{h.cast<int64_t>()};
  }
  if (!PySequence_Check(h.ptr()) || PyUnicode_Check(h.ptr()) || is_tensor(h)) {
    throw py::type_error(str_cat("[fft.", op, "] argument '", what,
                                 "' must be a tuple of ints, not ", Py_TYPE(h.ptr())->tp_name));
  }
  std::vector<int64_t> v;
  for (py::handle item : py::reinterpret_borrow<py::sequence>(h)) v.push_back(item.cast<int64_t>());
  return v;
}

std::optional<std::string> opt_norm(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return h.cast<std::string>();
}

using OneDim = Tensor (*)(const Tensor&, fft::OptLen, int64_t, const fft::OptNorm&, const Tensor&);
using MultiDim = Tensor (*)(const Tensor&, const OptSizes&, const OptSizes&, const fft::OptNorm&,
                            const Tensor&, const char*);

void def_1d(py::module_& f, const char* name, OneDim fn, const char* doc) {
  f.def(
      name,
      [fn](const Tensor& input, std::optional<int64_t> n, int64_t dim, py::handle norm,
           py::handle out) {
        const auto nm = opt_norm(norm);
        const Tensor o = opt_tensor(out);
        return without_gil([&] { return fn(input, n, dim, nm, o); });
      },
      doc, py::arg("input"), py::arg("n") = py::none(), py::arg("dim") = -1,
      py::arg("norm") = py::none(), py::kw_only(), py::arg("out") = py::none());
}

// fftn & co. (dim default None) and fft2 & co. (dim default (-2, -1)).
void def_nd(py::module_& f, const char* name, MultiDim fn, bool two_d, const char* doc) {
  const std::string op(name);
  py::object dim_default = two_d ? py::object(py::make_tuple(-2, -1)) : py::object(py::none());
  f.def(
      name,
      [fn, op](const Tensor& input, py::handle s, py::handle dim, py::handle norm, py::handle out) {
        const OptSizes ss = opt_sizes(s, op.c_str(), "s");
        const OptSizes dd = opt_sizes(dim, op.c_str(), "dim");
        const auto nm = opt_norm(norm);
        const Tensor o = opt_tensor(out);
        return without_gil([&] { return fn(input, ss, dd, nm, o, op.c_str()); });
      },
      doc, py::arg("input"), py::arg("s") = py::none(), py::arg("dim") = dim_default,
      py::arg("norm") = py::none(), py::kw_only(), py::arg("out") = py::none());
}

}  // namespace

void init_fft(py::module_& m) {
  py::module_ f = m.def_submodule("_fft", "ember.fft's transforms");
  def_1d(f, "fft", fft::fft, "The 1-D discrete Fourier transform of input along dim.");
  def_1d(f, "ifft", fft::ifft, "The 1-D inverse discrete Fourier transform of input.");
  def_1d(f, "rfft", fft::rfft, "The 1-D DFT of real input: the n // 2 + 1 non-negative terms.");
  def_1d(f, "irfft", fft::irfft, "The inverse of rfft: a real signal of n points.");
  def_1d(f, "hfft", fft::hfft, "The 1-D DFT of a Hermitian signal given by its first half: real.");
  def_1d(f, "ihfft", fft::ihfft, "The inverse of hfft: the n // 2 + 1 non-negative terms.");
  struct Nd {
    const char* name;
    MultiDim fn;
    bool two_d;
    const char* doc;
  };
  const Nd nds[] = {
      {"fftn", fft::fftn, false, "The N-D discrete Fourier transform of input."},
      {"ifftn", fft::ifftn, false, "The N-D inverse discrete Fourier transform of input."},
      {"rfftn", fft::rfftn, false, "The N-D DFT of real input (last dim halved)."},
      {"irfftn", fft::irfftn, false, "The inverse of rfftn: a real signal."},
      {"hfftn", fft::hfftn, false, "The N-D DFT of a Hermitian signal given by its half: real."},
      {"ihfftn", fft::ihfftn, false, "The inverse of hfftn (last dim halved)."},
      {"fft2", fft::fftn, true, "The 2-D discrete Fourier transform of input."},
      {"ifft2", fft::ifftn, true, "The 2-D inverse discrete Fourier transform of input."},
      {"rfft2", fft::rfftn, true, "The 2-D DFT of real input (last dim halved)."},
      {"irfft2", fft::irfftn, true, "The inverse of rfft2: a real signal."},
      {"hfft2", fft::hfftn, true, "The 2-D DFT of a Hermitian signal given by its half: real."},
      {"ihfft2", fft::ihfftn, true, "The inverse of hfft2 (last dim halved)."},
  };
  for (const Nd& nd : nds) def_nd(f, nd.name, nd.fn, nd.two_d, nd.doc);
}

}  // namespace ember
