// Validation, shapes and counter reservation of the rejection samplers (ops/random_sampling.h).
#include "ops/random_sampling.h"

#include <cmath>

#include "core/factory.h"
#include "core/shape.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(standard_gamma_stub, StandardGammaFn);
EMBER_DEFINE_STUB(standard_gamma_grad_stub, StandardGammaGradFn);
EMBER_DEFINE_STUB(sample_dirichlet_stub, SampleDirichletFn);
EMBER_DEFINE_STUB(poisson_stub, PoissonFn);
EMBER_DEFINE_STUB(binomial_stub, BinomialFn);

namespace {

void check_floating_input(const Tensor& t, const char* op, const char* what) {
  EMBER_CHECK_T(NotImplementedError, t.is_floating_point(), "[", op, "] not implemented for ", what,
                " of dtype ", dtype_name(t.dtype()), ": expected a floating point tensor");
}

// The kernels read float64 inputs of the output's shape, contiguous.
Tensor as_f64(const Tensor& t, IntArrayRef shape) {
  return contiguous(to_dtype(expand(t, shape), ScalarType::Float64));
}

// One Philox counter per element (Note [Per-element Philox streams]).
PhiloxState reserve_per_element(const Tensor& out, Generator* gen) {
  return generator_or_default(gen).reserve(static_cast<uint64_t>(out.numel()));
}

}  // namespace

Tensor _standard_gamma(const Tensor& alpha, Generator* gen) {
  const char* op = "_standard_gamma";
  check_floating_input(alpha, op, "alpha");
  Tensor out = empty_tensor(alpha.sizes(), alpha.dtype(), alpha.device(), op);
  if (out.numel() == 0) return out;
  Tensor a = as_f64(alpha, alpha.sizes());
  standard_gamma_stub(out.device(), out, a, reserve_per_element(out, gen));
  return out;
}

Tensor _standard_gamma_grad(const Tensor& self, const Tensor& output) {
  const char* op = "_standard_gamma_grad";
  check_floating_input(self, op, "self");
  check_floating_input(output, op, "output");
  DimVector shape = broadcast_shapes(self.sizes(), output.sizes(), op);
  Tensor out = empty_tensor(shape, promote_types(self.dtype(), output.dtype()), self.device(), op);
  if (out.numel() == 0) return out;
  standard_gamma_grad_stub(out.device(), out, as_f64(self, shape), as_f64(output, shape));
  return out;
}

Tensor _sample_dirichlet(const Tensor& alpha, Generator* gen) {
  const char* op = "_sample_dirichlet";
  check_floating_input(alpha, op, "alpha");
  EMBER_CHECK(alpha.dim() >= 1, "[", op,
              "] expected alpha with at least one dimension (the categories), got a 0-d tensor");
  Tensor out = empty_tensor(alpha.sizes(), alpha.dtype(), alpha.device(), op);
  if (out.numel() == 0) return out;
  Tensor a = as_f64(alpha, alpha.sizes());
  sample_dirichlet_stub(out.device(), out, a, reserve_per_element(out, gen));
  return out;
}

Tensor poisson(const Tensor& rates, Generator* gen) {
  const char* op = "poisson";
  check_floating_input(rates, op, "rates");
  Tensor out = empty_tensor(rates.sizes(), rates.dtype(), rates.device(), op);
  if (out.numel() == 0) return out;
  Tensor r = as_f64(rates, rates.sizes());
  const double* rd = r.data<double>();
  for (int64_t i = 0, n = r.numel(); i < n; ++i) {
    EMBER_CHECK(rd[i] >= 0.0, "[", op,
                "] invalid Poisson rate, expected rate to be non-negative, got ", rd[i]);
  }
  poisson_stub(out.device(), out, r, reserve_per_element(out, gen));
  return out;
}

Tensor binomial(const Tensor& count, const Tensor& prob, Generator* gen) {
  const char* op = "binomial";
  check_floating_input(count, op, "count");
  check_floating_input(prob, op, "prob");
  DimVector shape = broadcast_shapes(count.sizes(), prob.sizes(), op);
  Tensor out = empty_tensor(shape, promote_types(count.dtype(), prob.dtype()), count.device(), op);
  if (out.numel() == 0) return out;
  Tensor c = as_f64(count, shape), p = as_f64(prob, shape);
  const double* cd = c.data<double>();
  const double* pd = p.data<double>();
  for (int64_t i = 0, n = c.numel(); i < n; ++i) {
    EMBER_CHECK(cd[i] >= 0.0 && std::isfinite(cd[i]), "[", op,
                "] expected count to be finite and non-negative, got ", cd[i]);
    EMBER_CHECK(pd[i] >= 0.0 && pd[i] <= 1.0, "[", op, "] expected prob in [0, 1], got ", pd[i]);
  }
  binomial_stub(out.device(), out, c, p, reserve_per_element(out, gen));
  return out;
}

}  // namespace native
}  // namespace ember
