// Derivatives of var, std, var_mean, std_mean, norm (linalg.vector_norm) and logsumexp, with
// PyTorch's formulas (var_backward, std_backward, norm_backward, logsumexp_backward).
#include <cmath>
#include <limits>

#include "api/binary.h"
#include "api/compare.h"
#include "api/complex.h"
#include "api/elementwise.h"
#include "api/unary.h"
#include "autograd/derivatives/reduce.h"
#include "autograd/derivatives/reduce_common.h"

namespace ember {
namespace derivatives {

using namespace reduction;  // NOLINT(build/namespaces)

namespace {

// The reduction geometry a var / std / norm node keeps.
struct Geometry {
  DimVector in_sizes;
  std::vector<int64_t> rdims;  // the reduced dims (all of them when none were given)
  bool all_dims;               // dims not given (or empty), or a 0-d input
  bool keepdim;
};

Geometry geometry(const Tensor& t, const DimList& dims, bool keepdim) {
  return Geometry{DimVector(t.sizes()), reduced_dims(t.sizes(), dims),
                  !dims || dims->empty() || t.dim() == 0, keepdim};
}

double correction_of(const std::optional<Scalar>& c) {
  // A complex correction is refused by the forward before the node runs.
  return c && !c->is_complex() ? c->to_double() : 1.0;
}

// var_backward: 2 / (N - correction) * grad * (x - mean). Over all elements, N <= correction
// gives inf where x differs from the mean and nan where it equals it; over given dims PyTorch
// applies the formula as it stands.
Tensor var_backward(Tensor g, const Tensor& x, const Geometry& geo, double correction) {
  if (geo.all_dims) {
    const double dof = static_cast<double>(x.numel()) - correction;
    const Tensor mean = ember::mean(x);
    if (dof <= 0) {
      const Tensor at_mean = ember::eq(x, mean);
      const Tensor factor = ember::where(at_mean, num(std::numeric_limits<double>::quiet_NaN()),
                                         num(std::numeric_limits<double>::infinity()));
      return ember::mul(g, factor);
    }
    return ember::mul(ember::mul(num(2.0 / dof), g), ember::sub(x, mean));
  }
  g = restore_reduced(g, geo.in_sizes, geo.rdims, geo.keepdim);
  const double n = static_cast<double>(reduced_count(geo.in_sizes, geo.rdims));
  const Tensor centered = ember::sub(x, ember::mean(x, as_dim_list(geo.rdims), /*keepdim=*/true));
  return ember::mul(ember::mul(num(2.0 / (n - correction)), g), centered);
}

// std_backward: the var gradient of grad / (2 std), 0 where std is 0.
Tensor std_backward(const Tensor& g, const Tensor& result, const Tensor& x, const Geometry& geo,
                    double correction) {
  const Tensor is_zero = ember::eq(result, num(0));
  const Tensor denom = ember::add(ember::mul(result, num(2)), is_zero);
  const Tensor grad_var = ember::div(ember::mul(g, ember::logical_not(is_zero)), denom);
  return var_backward(grad_var, x, geo, correction);
}

// Forward AD: the conjugate of d var / dx, i.e. var's backward at grad = 1 (nan / inf over all
// elements when N <= correction, as the backward).
Tensor var_direction(const Tensor& x, const Geometry& geo, double correction) {
  if (geo.all_dims) {
    const double dof = static_cast<double>(x.numel()) - correction;
    const Tensor mean = ember::mean(x);
    if (dof <= 0) {
      return ember::where(ember::eq(x, mean), num(std::numeric_limits<double>::quiet_NaN()),
                          num(std::numeric_limits<double>::infinity()));
    }
    return ember::mul(num(2.0 / dof), ember::sub(x, mean));
  }
  const double n = static_cast<double>(reduced_count(geo.in_sizes, geo.rdims));
  const Tensor centered = ember::sub(x, ember::mean(x, as_dim_list(geo.rdims), /*keepdim=*/true));
  return ember::mul(num(2.0 / (n - correction)), centered);
}

// sum over the reduced dims of conj(d) * dx: the JVP of a real reduction whose backward is
// grad * d (the forward-mode machinery keeps the real part for a real result).
Tensor reduce_jvp(const Tensor& d, const Tensor& dx, const Geometry& geo) {
  return ember::sum(ember::mul(conj(d), dx), as_dim_list(geo.rdims), geo.keepdim);
}

Tensor var_jvp(const Tensor& dx, const Tensor& x, const Geometry& geo, double correction) {
  return reduce_jvp(var_direction(x, geo, correction), dx, geo);
}

// std = sqrt(var): var's JVP / (2 std), 0 where std is 0 (as std_backward).
Tensor std_jvp(const Tensor& dx, const Tensor& x, const Tensor& result, const Geometry& geo,
               double correction) {
  const Tensor is_zero = ember::eq(result, num(0));
  const Tensor denom = ember::add(ember::mul(result, num(2)), is_zero);
  const Tensor dvar = ember::real(var_jvp(dx, x, geo, correction));
  return ember::div(ember::mul(dvar, ember::logical_not(is_zero)), denom);
}

Tensor mean_backward(const Tensor& g, const Geometry& geo) {
  const double count = static_cast<double>(reduced_count(geo.in_sizes, geo.rdims));
  return expand_reduced(ember::div(g, num(count)), geo.in_sizes, geo.rdims, geo.keepdim);
}

Tensor add_defined(const Tensor& a, const Tensor& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return ember::add(a, b);
}

// a + (a == 0): a with its zeros replaced by ones, for a division whose zero cases are masked
// (PyTorch's masked_fill_(norm == 0, 0) after dividing).
Tensor zeros_to_one(const Tensor& a) {
  return ember::add(a, ember::eq(a, num(0)));
}

// norm_backward for the vector norm of order p.
Tensor norm_backward(Tensor g, const Tensor& x, const NormOrder& p, Tensor norm,
                     const Geometry& geo, bool dims_given) {
  using Kind = NormOrder::Kind;
  if (p.kind == Kind::Zero) return Tensor();  // piecewise constant: no gradient, as PyTorch
  if (!geo.keepdim && x.dim() != 0 && dims_given) {
    g = restore_reduced(g, geo.in_sizes, geo.rdims, false);
    norm = restore_reduced(norm, geo.in_sizes, geo.rdims, false);
  }
  const bool two = p.kind == Kind::Fro || (p.kind == Kind::P && p.p == 2.0);
  if (two) return ember::mul(g, ember::div(x, zeros_to_one(norm)));
  if (p.kind == Kind::P && p.p == 1.0) return ember::mul(ember::sgn(x), g);
  const Tensor abs_x = ember::abs(x);
  if (p.kind == Kind::Inf || p.kind == Kind::NegInf) {
    // The derivative of amax(|x|) that respects NaN: the elements equal to the norm (or NaN)
    // share the gradient.
    const Tensor mask = ember::logical_or(ember::eq(abs_x, norm), ember::isnan(abs_x));
    const Tensor count = ember::sum(mask, as_dim_list(geo.rdims), /*keepdim=*/true);
    return ember::mul(ember::sgn(x), ember::mul(ember::div(g, count), mask));
  }
  const double order = p.p;
  if (order < 1.0) {
    // |x|^(p-1) is infinite at 0, where sgn(x) is 0: the term is 0 there.
    const Tensor scaled =
        ember::mul(ember::sgn(x), ember::pow(zeros_to_one(abs_x), Scalar(order - 1.0)));
    return ember::mul(ember::mul(scaled, g), ember::pow(norm, Scalar(1.0 - order)));
  }
  // norm == 0 means x == 0 in the slice: the scaled term is 0 there and the scale stays finite.
  const Tensor scale = ember::div(g, ember::pow(zeros_to_one(norm), Scalar(order - 1.0)));
  const Tensor scaled = order < 2.0
                            ? ember::mul(ember::sgn(x), ember::pow(abs_x, Scalar(order - 1.0)))
                            : ember::mul(x, ember::pow(abs_x, Scalar(order - 2.0)));
  return ember::mul(scaled, scale);
}

TensorPair var_std_mean(const char* node_name, const char* op, bool is_std, const Tensor& t,
                        const DimList& dims, const std::optional<Scalar>& correction, bool keepdim,
                        const Tensor& out0, const Tensor& out1) {
  const Geometry geo = geometry(t, dims, keepdim);
  const double c = correction_of(correction);
  auto node =
      autograd::new_node(node_name, {t}, [geo, c, is_std](FunctionNode& n, const variable_list& g) {
        const Tensor x = n.saved(0);
        Tensor grad;
        if (g[0].defined()) {
          grad = is_std ? std_backward(g[0], n.saved(1), x, geo, c) : var_backward(g[0], x, geo, c);
        }
        if (g[1].defined()) grad = add_defined(grad, mean_backward(g[1], geo));
        return variable_list{grad};
      });
  node->save(t);
  if (node->has_forward()) {
    node->set_jvp([geo, c, is_std](FunctionNode& n, const variable_list& tan) -> variable_list {
      if (!tan[0].defined()) return variable_list(2);
      const Tensor x = n.saved(0);
      const Tensor dv =
          is_std ? std_jvp(tan[0], x, n.saved(1), geo, c) : var_jvp(tan[0], x, geo, c);
      return {dv, ember::mean(tan[0], as_dim_list(geo.rdims), geo.keepdim)};
    });
  }
  TensorPair r = record_pair(node, {t}, out0, out1, op, [&] {
    return is_std ? native::std_mean(t, dims, correction, keepdim, out0, out1)
                  : native::var_mean(t, dims, correction, keepdim, out0, out1);
  });
  node->save(r.first, /*is_output=*/true);
  return r;
}

}  // namespace

Tensor var(const Tensor& t, const DimList& dims, const std::optional<Scalar>& correction,
           bool keepdim, const Tensor& out) {
  const Geometry geo = geometry(t, dims, keepdim);
  const double c = correction_of(correction);
  auto node =
      autograd::new_node("VarBackward0", {t}, [geo, c](FunctionNode& n, const variable_list& g) {
        return variable_list{var_backward(g[0], n.saved(0), geo, c)};
      });
  node->save(t);
  if (node->has_forward()) {
    node->set_jvp([geo, c](FunctionNode& n, const variable_list& tan) -> variable_list {
      if (!tan[0].defined()) return {Tensor()};
      return {var_jvp(tan[0], n.saved(0), geo, c)};
    });
  }
  return autograd::record(node, {t}, out, "var",
                          [&] { return native::var(t, dims, correction, keepdim, out); });
}

Tensor std(const Tensor& t, const DimList& dims, const std::optional<Scalar>& correction,
           bool keepdim, const Tensor& out) {
  const Geometry geo = geometry(t, dims, keepdim);
  const double c = correction_of(correction);
  auto node =
      autograd::new_node("StdBackward0", {t}, [geo, c](FunctionNode& n, const variable_list& g) {
        return variable_list{std_backward(g[0], n.saved(1), n.saved(0), geo, c)};
      });
  node->save(t);
  if (node->has_forward()) {
    node->set_jvp([geo, c](FunctionNode& n, const variable_list& tan) -> variable_list {
      if (!tan[0].defined()) return {Tensor()};
      return {std_jvp(tan[0], n.saved(0), n.saved(1), geo, c)};
    });
  }
  Tensor r = autograd::record(node, {t}, out, "std",
                              [&] { return native::std(t, dims, correction, keepdim, out); });
  node->save(r, /*is_output=*/true);
  return r;
}

TensorPair var_mean(const Tensor& t, const DimList& dims, const std::optional<Scalar>& correction,
                    bool keepdim, const Tensor& out0, const Tensor& out1) {
  return var_std_mean("VarMeanBackward0", "var_mean", false, t, dims, correction, keepdim, out0,
                      out1);
}

TensorPair std_mean(const Tensor& t, const DimList& dims, const std::optional<Scalar>& correction,
                    bool keepdim, const Tensor& out0, const Tensor& out1) {
  return var_std_mean("StdMeanBackward0", "std_mean", true, t, dims, correction, keepdim, out0,
                      out1);
}

Tensor norm(const Tensor& t, NormOrder p, const DimList& dims, bool keepdim, ScalarType dtype,
            const Tensor& out) {
  const Geometry geo = geometry(t, dims, keepdim);
  const bool dims_given = dims.has_value();
  auto node = autograd::new_node(
      "LinalgVectorNormBackward0", {t},
      [geo, p, dims_given](FunctionNode& n, const variable_list& g) {
        return variable_list{norm_backward(g[0], n.saved(0), p, n.saved(1), geo, dims_given)};
      });
  node->save(t);
  if (node->has_forward()) {
    // The backward at grad = 1 is the (conjugate) derivative of each element.
    node->set_jvp([geo, p, dims_given](FunctionNode& n, const variable_list& tan) -> variable_list {
      if (!tan[0].defined()) return {Tensor()};
      const Tensor norm = n.saved(1);
      const Tensor one = ember::ones(norm.sizes(), TensorOptions(norm.dtype()));
      const Tensor d = norm_backward(one, n.saved(0), p, norm, geo, dims_given);
      if (!d.defined()) return {Tensor()};
      return {reduce_jvp(d, tan[0], geo)};
    });
  }
  Tensor r = autograd::record(node, {t}, out, "norm",
                              [&] { return native::norm(t, p, dims, keepdim, dtype, out); });
  node->save(r, /*is_output=*/true);
  return r;
}

Tensor logsumexp(const Tensor& t, const DimList& dims, bool keepdim, const Tensor& out) {
  const Geometry geo = geometry(t, dims, keepdim);
  auto node =
      autograd::new_node("LogsumexpBackward0", {t}, [geo](FunctionNode& n, const variable_list& g) {
        const Tensor x = n.saved(0);
        const Tensor grad = restore_reduced(g[0], geo.in_sizes, geo.rdims, geo.keepdim);
        const Tensor result = restore_reduced(n.saved(1), geo.in_sizes, geo.rdims, geo.keepdim);
        return variable_list{ember::mul(grad, conj(ember::exp(ember::sub(x, result))))};
      });
  node->save(t);
  if (node->has_forward()) {
    // Holomorphic: sum(softmax(x) dx) over the reduced dims.
    node->set_jvp([geo](FunctionNode& n, const variable_list& tan) -> variable_list {
      if (!tan[0].defined()) return {Tensor()};
      const Tensor result = restore_reduced(n.saved(1), geo.in_sizes, geo.rdims, geo.keepdim);
      const Tensor w = ember::exp(ember::sub(n.saved(0), result));
      return {ember::sum(ember::mul(w, tan[0]), as_dim_list(geo.rdims), geo.keepdim)};
    });
  }
  Tensor r = autograd::record(node, {t}, out, "logsumexp",
                              [&] { return native::logsumexp(t, dims, keepdim, out); });
  node->save(r, /*is_output=*/true);
  return r;
}

}  // namespace derivatives
}  // namespace ember
