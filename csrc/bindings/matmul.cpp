// The matmul family, products and einsum. Every product runs with the GIL released.
#include "api/matmul.h"
#include "bindings/list_args.h"
#include "kernels/gemm_stubs.h"

namespace ember {

namespace {

using BinaryOp = Tensor (*)(const Tensor&, const Tensor&, const Tensor&);
using AddOp = Tensor (*)(const Tensor&, const Tensor&, const Tensor&, const Scalar&, const Scalar&,
                         const Tensor&);

// ember.name(input, <arg>, *, out=None) and Tensor.name(<arg>).
void def_product(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls, const char* name,
                 const char* arg, BinaryOp f, bool method = true) {
  m.def(
      name,
      [f, name](py::handle a, py::handle b, py::handle out) {
        Tensor x = to_operand(a, name), y = to_operand(b, name), o = opt_tensor(out);
        return without_gil([&] { return f(x, y, o); });
      },
      py::arg("input"), py::arg(arg), py::kw_only(), py::arg("out") = py::none());
  if (!method) return;
  cls.def(
      name,
      [f, name](const Tensor& a, py::handle b) {
        Tensor y = to_operand(b, name);
        return without_gil([&] { return f(a, y, Tensor()); });
      },
      py::arg(arg));
}

// addmm-style: ember.name(input, x, y, *, beta=1, alpha=1, out=None), Tensor.name(x, y, ...),
// and the in-place Tensor.name_(x, y, ...).
void def_add_product(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls, const char* name,
                     const char* arg1, const char* arg2, AddOp f) {
  m.def(
      name,
      [f](const Tensor& input, const Tensor& x, const Tensor& y, const Scalar& beta,
          const Scalar& alpha, py::handle out) {
        Tensor o = opt_tensor(out);
        return without_gil([&] { return f(input, x, y, beta, alpha, o); });
      },
      py::arg("input"), py::arg(arg1), py::arg(arg2), py::kw_only(), py::arg("beta") = 1,
      py::arg("alpha") = 1, py::arg("out") = py::none());
  cls.def(
      name,
      [f](const Tensor& input, const Tensor& x, const Tensor& y, const Scalar& beta,
          const Scalar& alpha) {
        return without_gil([&] { return f(input, x, y, beta, alpha, Tensor()); });
      },
      py::arg(arg1), py::arg(arg2), py::kw_only(), py::arg("beta") = 1, py::arg("alpha") = 1);
  cls.def((std::string(name) + "_").c_str(),
          [f](py::object self, const Tensor& x, const Tensor& y, const Scalar& beta,
              const Scalar& alpha) {
            Tensor t = self.cast<Tensor>();
            without_gil([&] { return f(t, x, y, beta, alpha, t); });
            return self;
          },
          py::arg(arg1), py::arg(arg2), py::kw_only(), py::arg("beta") = 1, py::arg("alpha") = 1);
}

// tensordot's dims given as a pair of int lists (a (2, n) tensor arrives here as its tolist()).
std::pair<DimVector, DimVector> tensordot_dims(py::handle d) {
  auto seq = py::reinterpret_borrow<py::sequence>(d);
  if (py::len(seq) != 2) {
    throw py::value_error("[tensordot] dims must be an int or a pair of lists of dims");
  }
  return {parse_int_sequence(seq[0], "tensordot", "dims"),
          parse_int_sequence(seq[1], "tensordot", "dims")};
}

}  // namespace

void init_matmul(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  def_product(m, cls, "matmul", "other", &matmul);
  def_product(m, cls, "mm", "mat2", &mm);
  def_product(m, cls, "bmm", "mat2", &bmm);
  def_product(m, cls, "mv", "vec", &mv);
  def_product(m, cls, "dot", "tensor", &dot);
  def_product(m, cls, "vdot", "other", &vdot);
  def_product(m, cls, "inner", "other", &inner);
  def_product(m, cls, "outer", "vec2", &outer);
  def_product(m, cls, "ger", "vec2", &outer);
  def_product(m, cls, "kron", "other", &kron);
  // When Ember's packed float32 GEMM runs (kernels/gemm_stubs.h): "off" for A/B measurements
  // against oneDNN (benchmarks/), "always" for tests, "auto" the default.
  m.def(
      "_set_packed_sgemm_mode",
      [](const std::string& mode) {
        using native::PackedSgemmMode;
        if (mode == "off") return native::set_packed_sgemm_mode(PackedSgemmMode::Off);
        if (mode == "auto") return native::set_packed_sgemm_mode(PackedSgemmMode::Auto);
        if (mode == "always") return native::set_packed_sgemm_mode(PackedSgemmMode::Always);
        throw py::value_error("_set_packed_sgemm_mode: expected 'off', 'auto' or 'always', got '" +
                              mode + "'");
      },
      py::arg("mode"));
  m.def("_get_packed_sgemm_mode", [] {
    switch (native::packed_sgemm_mode()) {
      case native::PackedSgemmMode::Off:
        return "off";
      case native::PackedSgemmMode::Always:
        return "always";
      default:
        return "auto";
    }
  });
  cls.def("__matmul__", [](const Tensor& a, py::handle b) -> py::object {
    if (!is_tensor(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
    Tensor y = b.cast<Tensor>();
    return py::cast(without_gil([&] { return matmul(a, y); }));
  });
  cls.def("__rmatmul__", [](const Tensor& a, py::handle b) -> py::object {
    if (!is_tensor(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
    Tensor x = b.cast<Tensor>();
    return py::cast(without_gil([&] { return matmul(x, a); }));
  });

  def_add_product(m, cls, "addmm", "mat1", "mat2", &addmm);
  def_add_product(m, cls, "addmv", "mat", "vec", &addmv);
  def_add_product(m, cls, "addbmm", "batch1", "batch2", &addbmm);
  def_add_product(m, cls, "baddbmm", "batch1", "batch2", &baddbmm);

  m.def(
      "tensordot",
      [](const Tensor& a, const Tensor& b, py::handle dims, py::handle out) {
        Tensor o = opt_tensor(out);
        py::object d = py::reinterpret_borrow<py::object>(dims);
        if (is_tensor(d)) d = d.attr("tolist")();
        if (PyLong_Check(d.ptr())) {
          const int64_t n = parse_int(d, "tensordot", "dims");
          return without_gil([&] { return tensordot(a, b, n, o); });
        }
        auto dd = tensordot_dims(d);
        DimVector da = dd.first, db = dd.second;
        return without_gil([&] { return tensordot(a, b, da, db, o); });
      },
      py::arg("a"), py::arg("b"), py::arg("dims") = 2, py::arg("out") = py::none());

  auto cross_fn = [](const Tensor& a, const Tensor& b, py::handle dim, py::handle out) {
    return cross(a, b, opt_int(dim, "cross"), opt_tensor(out));
  };
  m.def("cross", cross_fn, py::arg("input"), py::arg("other"), py::arg("dim") = py::none(),
        py::kw_only(), py::arg("out") = py::none());
  cls.def(
      "cross",
      [](const Tensor& a, const Tensor& b, py::handle dim) {
        return cross(a, b, opt_int(dim, "cross"));
      },
      py::arg("other"), py::arg("dim") = py::none());

  m.def("einsum", [](py::args args) {
    if (args.size() < 2) {
      throw py::value_error(
          "[einsum] einsum(): must specify the equation string and at least one operand, or at "
          "least one operand and its subscripts list");
    }
    if (!PyUnicode_Check(args[0].ptr())) {
      throw py::type_error("[einsum] einsum(): the first argument must be the equation string");
    }
    std::string eq = args[0].cast<std::string>();
    std::vector<Tensor> ops = tensor_varargs(args, 1, "einsum");
    return without_gil([&] { return einsum(eq, ops); });
  });
  m.def(
      "cdist",
      [](const Tensor& x1, const Tensor& x2, double p, py::handle compute_mode) {
        std::optional<std::string> mode;
        if (!compute_mode.is_none()) mode = compute_mode.cast<std::string>();
        return without_gil([&] { return cdist(x1, x2, p, mode); });
      },
      py::arg("x1"), py::arg("x2"), py::arg("p") = 2.0,
      py::arg("compute_mode") = "use_mm_for_euclid_dist_if_necessary");
}

}  // namespace ember
