// ember.special's functions (the _C._special submodule) and the ones PyTorch also has at the top
// level and as Tensor methods: i0 / i0_, igamma / igamma_, igammac / igammac_, mvlgamma /
// mvlgamma_. Argument conversion only; the ops are in api/special.h.
#include <string>

#include "api/special.h"
#include "bindings/elementwise_bindings.h"

namespace ember {

namespace {

struct UnaryEntry {
  const char* name;
  SpecialOp op;
  const char* doc;
};

// modified_bessel_i0 / i1 run i0 / i1 (their own node names: api/special.h).
const UnaryEntry kUnary[] = {
    {"i0", SpecialOp::i0, "Modified Bessel function of the first kind, order 0."},
    {"i0e", SpecialOp::i0e, "Exponentially scaled i0: exp(-|x|) i0(x)."},
    {"i1", SpecialOp::i1, "Modified Bessel function of the first kind, order 1."},
    {"i1e", SpecialOp::i1e, "Exponentially scaled i1: exp(-|x|) i1(x)."},
    {"modified_bessel_i0", SpecialOp::i0, "Modified Bessel function of the first kind, order 0."},
    {"modified_bessel_i1", SpecialOp::i1, "Modified Bessel function of the first kind, order 1."},
    {"bessel_j0", SpecialOp::bessel_j0, "Bessel function of the first kind, order 0."},
    {"bessel_j1", SpecialOp::bessel_j1, "Bessel function of the first kind, order 1."},
    {"bessel_y0", SpecialOp::bessel_y0, "Bessel function of the second kind, order 0."},
    {"bessel_y1", SpecialOp::bessel_y1, "Bessel function of the second kind, order 1."},
    {"modified_bessel_k0", SpecialOp::modified_bessel_k0,
     "Modified Bessel function of the second kind, order 0."},
    {"modified_bessel_k1", SpecialOp::modified_bessel_k1,
     "Modified Bessel function of the second kind, order 1."},
    {"scaled_modified_bessel_k0", SpecialOp::scaled_modified_bessel_k0,
     "Exponentially scaled modified_bessel_k0: exp(x) k0(x)."},
    {"scaled_modified_bessel_k1", SpecialOp::scaled_modified_bessel_k1,
     "Exponentially scaled modified_bessel_k1: exp(x) k1(x)."},
    {"spherical_bessel_j0", SpecialOp::spherical_bessel_j0,
     "Spherical Bessel function of the first kind, order 0: sin(x) / x."},
    {"airy_ai", SpecialOp::airy_ai, "Airy function Ai."},
    {"ndtr", SpecialOp::ndtr, "Standard normal cumulative distribution function."},
    {"ndtri", SpecialOp::ndtri, "Inverse of ndtr: the standard normal quantile of p."},
    {"log_ndtr", SpecialOp::log_ndtr, "log(ndtr(x)), accurate in both tails."},
    {"erfcx", SpecialOp::erfcx, "Scaled complementary error function exp(x^2) erfc(x)."},
    {"entr", SpecialOp::entr, "Elementwise entropy: -x log(x), 0 at 0, -inf for x < 0."},
};

struct BinaryEntry {
  const char* name;
  const char* second;  // the second argument's keyword
  SpecialOp op;
  bool numbers;  // whether Python numbers are accepted for either argument
  const char* doc;
};

const BinaryEntry kBinary[] = {
    {"gammainc", "other", SpecialOp::igamma, false,
     "Regularised lower incomplete gamma function P(input, other)."},
    {"gammaincc", "other", SpecialOp::igammac, false,
     "Regularised upper incomplete gamma function Q(input, other)."},
    {"xlog1py", "other", SpecialOp::xlog1py, true,
     "input * log1p(other), and 0 where input is 0 (unless other is NaN)."},
    {"zeta", "other", SpecialOp::zeta, true, "Hurwitz zeta function zeta(input, other)."},
    {"chebyshev_polynomial_t", "n", SpecialOp::chebyshev_polynomial_t, true,
     "Chebyshev polynomial of the first kind T_n(input)."},
    {"chebyshev_polynomial_u", "n", SpecialOp::chebyshev_polynomial_u, true,
     "Chebyshev polynomial of the second kind U_n(input)."},
    {"chebyshev_polynomial_v", "n", SpecialOp::chebyshev_polynomial_v, true,
     "Chebyshev polynomial of the third kind V_n(input)."},
    {"chebyshev_polynomial_w", "n", SpecialOp::chebyshev_polynomial_w, true,
     "Chebyshev polynomial of the fourth kind W_n(input)."},
    {"shifted_chebyshev_polynomial_t", "n", SpecialOp::shifted_chebyshev_polynomial_t, true,
     "Shifted Chebyshev polynomial of the first kind T*_n(input) = T_n(2 input - 1)."},
    {"shifted_chebyshev_polynomial_u", "n", SpecialOp::shifted_chebyshev_polynomial_u, true,
     "Shifted Chebyshev polynomial of the second kind U*_n(input) = U_n(2 input - 1)."},
    {"shifted_chebyshev_polynomial_v", "n", SpecialOp::shifted_chebyshev_polynomial_v, true,
     "Shifted Chebyshev polynomial of the third kind V*_n(input) = V_n(2 input - 1)."},
    {"shifted_chebyshev_polynomial_w", "n", SpecialOp::shifted_chebyshev_polynomial_w, true,
     "Shifted Chebyshev polynomial of the fourth kind W*_n(input) = W_n(2 input - 1)."},
    {"hermite_polynomial_h", "n", SpecialOp::hermite_polynomial_h, true,
     "Physicists' Hermite polynomial H_n(input)."},
    {"hermite_polynomial_he", "n", SpecialOp::hermite_polynomial_he, true,
     "Probabilists' Hermite polynomial He_n(input)."},
    {"laguerre_polynomial_l", "n", SpecialOp::laguerre_polynomial_l, true,
     "Laguerre polynomial L_n(input)."},
    {"legendre_polynomial_p", "n", SpecialOp::legendre_polynomial_p, true,
     "Legendre polynomial P_n(input)."},
};

// A tensor argument (numbers refused, as PyTorch's Tensor-only overloads do).
Tensor tensor_arg(py::handle h, const char* op, const char* arg) {
  if (!is_tensor(h)) {
    throw py::type_error(
        str_cat("[", op, "] argument '", arg, "' must be Tensor, not ", Py_TYPE(h.ptr())->tp_name));
  }
  return h.cast<Tensor>();
}

Tensor operand(py::handle h, bool numbers, const char* op, const char* arg) {
  return numbers ? to_operand(h, op) : tensor_arg(h, op, arg);
}

void def_special_unary(py::module_& sp, const UnaryEntry& e) {
  sp.def(
      e.name,
      [e](py::handle a, py::object out) {
        Tensor x = tensor_arg(a, e.name, "input");
        Tensor o = out_arg(out, e.name);
        NoGilIfLarge nogil(x.numel());
        return ember::special_unary(e.op, e.name, x, o);
      },
      py::arg("input"), py::kw_only(), py::arg("out") = py::none(), e.doc);
}

void def_special_binary(py::module_& sp, const BinaryEntry& e) {
  sp.def(
      e.name,
      [e](py::handle a, py::handle b, py::object out) {
        Tensor x = operand(a, e.numbers, e.name, "input");
        Tensor y = operand(b, e.numbers, e.name, e.second);
        Tensor o = out_arg(out, e.name);
        NoGilIfLarge nogil(max_numel(x, y));
        return ember::special_binary(e.op, e.name, x, y, o);
      },
      py::arg("input"), py::arg(e.second), py::kw_only(), py::arg("out") = py::none(), e.doc);
}

Tensor mvlgamma_out(const Tensor& a, int64_t p, py::object out, const char* name) {
  Tensor o = out_arg(out, name);
  NoGilIfLarge nogil(a.numel());
  return mvlgamma(a, p, o);
}

// The top-level forms: ember.name(input, other, *, out=None), Tensor.name(other), Tensor.name_.
void def_top_level_binary(py::module_& m, TensorClass& cls, const char* name, SpecialOp op) {
  m.def(
      name,
      [name, op](py::handle a, py::handle b, py::object out) {
        Tensor x = tensor_arg(a, name, "input"), y = tensor_arg(b, name, "other");
        Tensor o = out_arg(out, name);
        NoGilIfLarge nogil(max_numel(x, y));
        return ember::special_binary(op, name, x, y, o);
      },
      py::arg("input"), py::arg("other"), py::kw_only(), py::arg("out") = py::none());
  cls.def(
      name,
      [name, op](const Tensor& a, py::handle b) {
        Tensor y = tensor_arg(b, name, "other");
        NoGilIfLarge nogil(max_numel(a, y));
        return ember::special_binary(op, name, a, y);
      },
      py::arg("other"));
  cls.def((std::string(name) + "_").c_str(),
          [name, op](py::object self, py::handle b) {
            Tensor t = self.cast<Tensor>();
            Tensor y = tensor_arg(b, name, "other");
            {
              NoGilIfLarge nogil(max_numel(t, y));
              ember::special_binary(op, name, t, y, t);
            }
            return self;
          },
          py::arg("other"));
}

}  // namespace

void init_special(py::module_& m, TensorClass& cls) {
  py::module_ sp = m.def_submodule("_special", "torch._C._special: the functions of ember.special");
  for (const UnaryEntry& e : kUnary) def_special_unary(sp, e);
  for (const BinaryEntry& e : kBinary) def_special_binary(sp, e);
  sp.def(
      "multigammaln",
      [](const Tensor& a, int64_t p, py::object out) {
        return mvlgamma_out(a, p, out, "multigammaln");
      },
      py::arg("input"), py::arg("p"), py::kw_only(), py::arg("out") = py::none(),
      "Multivariate log-gamma function of dimension p.");

  // Top level and Tensor methods.
  def_unary(
      m, cls, "i0",
      [](const Tensor& a, const Tensor& o) {
        return ember::special_unary(SpecialOp::i0, "i0", a, o);
      },
      UnaryForms{true, true, nullptr, "Modified Bessel function of the first kind, order 0."});
  def_top_level_binary(m, cls, "igamma", SpecialOp::igamma);
  def_top_level_binary(m, cls, "igammac", SpecialOp::igammac);
  m.def(
      "mvlgamma",
      [](const Tensor& a, int64_t p, py::object out) {
        return mvlgamma_out(a, p, out, "mvlgamma");
      },
      py::arg("input"), py::arg("p"), py::kw_only(), py::arg("out") = py::none(),
      "Multivariate log-gamma function of dimension p.");
  cls.def(
      "mvlgamma",
      [](const Tensor& a, int64_t p) {
        NoGilIfLarge nogil(a.numel());
        return mvlgamma(a, p);
      },
      py::arg("p"));
  cls.def(
      "mvlgamma_",
      [](py::object self, int64_t p) {
        Tensor t = self.cast<Tensor>();
        {
          NoGilIfLarge nogil(t.numel());
          mvlgamma(t, p, t);
        }
        return self;
      },
      py::arg("p"));
}

}  // namespace ember
