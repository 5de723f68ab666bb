// Public normalisation ops: the recording of layer_norm / rms_norm, group_norm and batch_norm,
// and instance_norm as a composite of public ops.
#include "api/nn/norm.h"

#include <vector>

#include "api/join.h"
#include "api/nn/conv_util.h"
#include "api/reduce.h"
#include "api/views.h"
#include "autograd/derivatives/nn/norm.h"
#include "autograd/grad_mode.h"
#include "autograd/variable.h"

namespace ember {

Tensor layer_norm(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps) {
  if (autograd::should_record(x, weight, bias)) {
    return derivatives::layer_norm(x, normalized_shape, weight, bias, eps, /*rms=*/false);
  }
  return native::layer_norm(x, normalized_shape, weight, bias, eps);
}

Tensor rms_norm(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight,
                std::optional<double> eps) {
  if (autograd::should_record(x, weight)) {
    return derivatives::layer_norm(x, normalized_shape, weight, Tensor(),
                                   native::rms_norm_eps(x, eps), /*rms=*/true);
  }
  return native::rms_norm(x, normalized_shape, weight, eps);
}

Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias,
                  double eps) {
  if (autograd::should_record(x, weight, bias)) {
    return derivatives::group_norm(x, num_groups, weight, bias, eps);
  }
  return native::group_norm(x, num_groups, weight, bias, eps);
}

Tensor batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                  const Tensor& running_mean, const Tensor& running_var, bool training,
                  double momentum, double eps) {
  if (autograd::should_record(x, weight, bias)) {
    return derivatives::batch_norm(x, weight, bias, running_mean, running_var, training, momentum,
                                   eps);
  }
  return native::batch_norm(x, weight, bias, running_mean, running_var, training, momentum, eps);
}

Tensor instance_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                     const Tensor& running_mean, const Tensor& running_var, bool use_input_stats,
                     double momentum, double eps) {
  const char* op = "instance_norm";
  EMBER_CHECK(use_input_stats || (running_mean.defined() && running_var.defined()), "[", op,
              "] Expected running_mean and running_var to be defined when use_input_stats is "
              "false");
  EMBER_CHECK(x.dim() >= 2, "[", op, "] Expected 2D or higher input, but got input of shape ",
              sizes_list(x.sizes()));
  const int64_t B = x.size(0), C = x.size(1);
  DimVector shape(x.sizes());
  shape[0] = 1;
  shape[1] = B * C;
  auto repeated = [&](const Tensor& t) { return t.defined() ? ember::repeat(t, {B}) : Tensor(); };
  Tensor rm = repeated(running_mean), rv = repeated(running_var);
  Tensor out = ember::batch_norm(ember::reshape(x, shape), repeated(weight), repeated(bias), rm, rv,
                                 use_input_stats, momentum, eps);
  {
    // The running statistics are state, outside every graph.
    autograd::NoGradGuard no_grad;
    Tensor dst;
    if (running_mean.defined()) {
      dst = running_mean;
      ember::copy_(dst, ember::mean(ember::view(rm, {B, C}), std::vector<int64_t>{0}));
    }
    if (running_var.defined()) {
      dst = running_var;
      ember::copy_(dst, ember::mean(ember::view(rv, {B, C}), std::vector<int64_t>{0}));
    }
  }
  return ember::reshape(out, x.sizes());
}

}  // namespace ember
