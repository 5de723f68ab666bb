// Public normal with a tensor mean or std: the native noise scaled and shifted in place by the
// public mul and add, so that the sample is differentiable in mean and std when they require grad.
#include "api/random.h"

#include "api/creation.h"
#include "api/elementwise.h"
#include "api/views.h"

namespace ember {

Tensor normal(const Tensor& mean, const Tensor& std, Generator* gen) {
  Tensor out = native::normal_noise(mean, std, gen);
  ember::mul(out, ember::to_dtype(std, out.dtype()), out);
  return ember::add(out, ember::to_dtype(mean, out.dtype()), 1, out);
}

Tensor normal(const Tensor& mean, double std, Generator* gen) {
  Tensor out = native::normal_noise(mean, std, gen);
  return ember::add(out, mean, 1, out);
}

Tensor normal(double mean, const Tensor& std, Generator* gen) {
  Tensor out = native::normal_noise(mean, std, gen);
  ember::mul(out, std, out);
  return ember::add(out, wrap_scalar(Scalar(mean)), 1, out);
}

}  // namespace ember
