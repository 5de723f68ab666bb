// Unary elementwise ops with extra arguments (round, logit, nan_to_num, clamp) and the complex
// views (real, imag, conj).
#include "api/complex.h"
#include "api/unary.h"
#include "api/views.h"
#include "bindings/elementwise_bindings.h"

namespace ember {

namespace {

std::optional<double> optional_double(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return h.cast<double>();
}

// A clamp bound: None, a Python number or a Tensor.
struct Bound {
  std::optional<Scalar> scalar;
  Tensor tensor;
};

Bound parse_bound(py::handle h, const char* op) {
  Bound b;
  if (h.is_none()) return b;
  if (is_tensor(h)) {
    b.tensor = h.cast<Tensor>();
  } else if (auto s = try_parse_scalar(h)) {
    b.scalar = *s;
  } else {
    b.tensor = to_operand(h, op);
  }
  return b;
}

// Tensor bounds when either bound is a tensor (a number beside it becomes a 0-d tensor).
Tensor clamp_any(const Tensor& a, py::handle min, py::handle max, const Tensor& out) {
  Bound lo = parse_bound(min, "clamp"), hi = parse_bound(max, "clamp");
  if (lo.tensor.defined() || hi.tensor.defined()) {
    Tensor tlo = lo.tensor.defined() ? lo.tensor
                 : lo.scalar         ? wrap_scalar_for_binding(*lo.scalar)
                                     : Tensor();
    Tensor thi = hi.tensor.defined() ? hi.tensor
                 : hi.scalar         ? wrap_scalar_for_binding(*hi.scalar)
                                     : Tensor();
    NoGilIfLarge nogil(a.numel());
    return clamp(a, tlo, thi, out);
  }
  NoGilIfLarge nogil(a.numel());
  return clamp(a, lo.scalar, hi.scalar, out);
}

// Binds ember.name(input, min=None, max=None, *, out=None), Tensor.name and Tensor.name_.
void def_clamp(py::module_& m, TensorClass& cls, const char* name) {
  m.def(
      name,
      [name](const Tensor& a, py::object min, py::object max, py::object out) {
        return clamp_any(a, min, max, out_arg(out, name));
      },
      py::arg("input"), py::arg("min") = py::none(), py::arg("max") = py::none(), py::kw_only(),
      py::arg("out") = py::none());
  cls.def(
      name,
      [](const Tensor& a, py::object min, py::object max) {
        return clamp_any(a, min, max, Tensor());
      },
      py::arg("min") = py::none(), py::arg("max") = py::none());
  cls.def((std::string(name) + "_").c_str(),
          [](py::object self, py::object min, py::object max) {
            Tensor t = self.cast<Tensor>();
            clamp_any(t, min, max, t);
            return self;
          },
          py::arg("min") = py::none(), py::arg("max") = py::none());
}

// clamp_min / clamp_max: one required bound.
void def_clamp_one(py::module_& m, TensorClass& cls, const char* name, bool is_min) {
  auto run = [is_min, name](const Tensor& a, py::object bound, const Tensor& out) {
    Bound b = parse_bound(bound, name);
    NoGilIfLarge nogil(a.numel());
    if (b.tensor.defined())
      return is_min ? clamp_min(a, b.tensor, out) : clamp_max(a, b.tensor, out);
    if (b.scalar) return is_min ? clamp_min(a, *b.scalar, out) : clamp_max(a, *b.scalar, out);
    return clamp(a, std::optional<Scalar>(), std::optional<Scalar>(), out);  // raises: no bound
  };
  const char* arg = is_min ? "min" : "max";
  m.def(
      name,
      [run, name](const Tensor& a, py::object bound, py::object out) {
        return run(a, bound, out_arg(out, name));
      },
      py::arg("input"), py::arg(arg), py::kw_only(), py::arg("out") = py::none());
  cls.def(
      name, [run](const Tensor& a, py::object bound) { return run(a, bound, Tensor()); },
      py::arg(arg));
  cls.def((std::string(name) + "_").c_str(),
          [run](py::object self, py::object bound) {
            Tensor t = self.cast<Tensor>();
            run(t, bound, t);
            return self;
          },
          py::arg(arg));
}

}  // namespace

void init_unary_args(py::module_& m, TensorClass& cls) {
  // round(input, *, decimals=0, out=None)
  m.def(
      "round",
      [](const Tensor& a, int64_t decimals, py::object out) {
        Tensor o = out_arg(out, "round");
        NoGilIfLarge nogil(a.numel());
        return round(a, decimals, o);
      },
      py::arg("input"), py::kw_only(), py::arg("decimals") = 0, py::arg("out") = py::none());
  cls.def(
      "round",
      [](const Tensor& a, int64_t decimals) {
        NoGilIfLarge nogil(a.numel());
        return round(a, decimals);
      },
      py::kw_only(), py::arg("decimals") = 0);
  cls.def(
      "round_",
      [](py::object self, int64_t decimals) {
        Tensor t = self.cast<Tensor>();
        round(t, decimals, t);
        return self;
      },
      py::kw_only(), py::arg("decimals") = 0);

  // logit(input, eps=None, *, out=None)
  m.def(
      "logit",
      [](const Tensor& a, py::object eps, py::object out) {
        Tensor o = out_arg(out, "logit");
        return logit(a, optional_double(eps), o);
      },
      py::arg("input"), py::arg("eps") = py::none(), py::kw_only(), py::arg("out") = py::none());
  cls.def(
      "logit", [](const Tensor& a, py::object eps) { return logit(a, optional_double(eps)); },
      py::arg("eps") = py::none());
  cls.def(
      "logit_",
      [](py::object self, py::object eps) {
        Tensor t = self.cast<Tensor>();
        logit(t, optional_double(eps), t);
        return self;
      },
      py::arg("eps") = py::none());

  // polygamma(n, input, *, out=None); Tensor.polygamma(n), Tensor.polygamma_(n)
  m.def(
      "polygamma",
      [](int64_t n, const Tensor& a, py::object out) {
        Tensor o = out_arg(out, "polygamma");
        NoGilIfLarge nogil(a.numel());
        return polygamma(n, a, o);
      },
      py::arg("n"), py::arg("input"), py::kw_only(), py::arg("out") = py::none(),
      "The n-th derivative of the digamma function (n >= 0; real dtypes).");
  cls.def(
      "polygamma",
      [](const Tensor& a, int64_t n) {
        NoGilIfLarge nogil(a.numel());
        return polygamma(n, a);
      },
      py::arg("n"));
  cls.def(
      "polygamma_",
      [](py::object self, int64_t n) {
        Tensor t = self.cast<Tensor>();
        {
          NoGilIfLarge nogil(t.numel());
          polygamma(n, t, t);
        }
        return self;
      },
      py::arg("n"));

  // nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None)
  m.def(
      "nan_to_num",
      [](const Tensor& a, py::object nan, py::object posinf, py::object neginf, py::object out) {
        Tensor o = out_arg(out, "nan_to_num");
        return nan_to_num(a, optional_double(nan), optional_double(posinf), optional_double(neginf),
                          o);
      },
      py::arg("input"), py::arg("nan") = 0.0, py::arg("posinf") = py::none(),
      py::arg("neginf") = py::none(), py::kw_only(), py::arg("out") = py::none());
  cls.def(
      "nan_to_num",
      [](const Tensor& a, py::object nan, py::object posinf, py::object neginf) {
        return nan_to_num(a, optional_double(nan), optional_double(posinf),
                          optional_double(neginf));
      },
      py::arg("nan") = 0.0, py::arg("posinf") = py::none(), py::arg("neginf") = py::none());
  cls.def(
      "nan_to_num_",
      [](py::object self, py::object nan, py::object posinf, py::object neginf) {
        Tensor t = self.cast<Tensor>();
        nan_to_num(t, optional_double(nan), optional_double(posinf), optional_double(neginf), t);
        return self;
      },
      py::arg("nan") = 0.0, py::arg("posinf") = py::none(), py::arg("neginf") = py::none());

  def_clamp(m, cls, "clamp");
  def_clamp(m, cls, "clip");
  def_clamp_one(m, cls, "clamp_min", true);
  def_clamp_one(m, cls, "clamp_max", false);

  // Complex views and conjugation. Ember has no lazy conjugate / negative bits: conj copies, and
  // is_conj / is_neg are always False.
  m.def(
      "real", [](const Tensor& a) { return real(a); }, py::arg("input"));
  m.def(
      "imag", [](const Tensor& a) { return imag(a); }, py::arg("input"));
  m.def(
      "conj", [](const Tensor& a) { return conj(a); }, py::arg("input"));
  m.def(
      "view_as_real", [](const Tensor& a) { return view_as_real(a); }, py::arg("input"));
  m.def(
      "view_as_complex", [](const Tensor& a) { return view_as_complex(a); }, py::arg("input"));
  cls.def("conj", [](const Tensor& a) { return conj(a); });
  for (const char* name : {"resolve_conj", "resolve_neg"}) {
    m.def(
        name, [](const Tensor& a) { return a; }, py::arg("input"));
    cls.def(name, [](const Tensor& a) { return a; });
  }
  for (const char* name : {"is_conj", "is_neg"}) {
    m.def(
        name, [](const Tensor&) { return false; }, py::arg("input"));
    cls.def(name, [](const Tensor&) { return false; });
  }
  // t.real / t.imag are views; assigning to them writes into the complex tensor.
  cls.def_property(
      "real", [](const Tensor& a) { return real(a); },
      [](const Tensor& a, py::handle value) {
        Tensor dst = real(a);
        copy_(dst, to_operand(value, "real"));
      });
  cls.def_property(
      "imag", [](const Tensor& a) { return imag(a); },
      [](const Tensor& a, py::handle value) {
        Tensor dst = imag(a);
        copy_(dst, to_operand(value, "imag"));
      });
}

}  // namespace ember
