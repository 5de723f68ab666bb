// Public loss ops: the recording of the pointwise losses, nll_loss and cross_entropy.
#include "api/nn/loss.h"

#include "api/autocast.h"
#include "autograd/derivatives/nn/loss.h"
#include "autograd/variable.h"

namespace ember {

Tensor mse_loss(const Tensor& input, const Tensor& target, int64_t reduction) {
  if (autocast::active()) {  // autocast: float32
    const Tensor x = autocast::to_fp32(input), y = autocast::to_fp32(target);
    autocast::ExcludeGuard no_autocast;
    return ember::mse_loss(x, y, reduction);
  }
  if (autograd::should_record(input, target)) {
    return derivatives::pointwise_loss(PointwiseLoss::MSE, input, target, {}, {}, reduction, 0.0);
  }
  return native::mse_loss(input, target, reduction);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, int64_t reduction) {
  if (autocast::active()) {  // autocast: float32
    const Tensor x = autocast::to_fp32(input), y = autocast::to_fp32(target);
    autocast::ExcludeGuard no_autocast;
    return ember::l1_loss(x, y, reduction);
  }
  if (autograd::should_record(input, target)) {
    return derivatives::pointwise_loss(PointwiseLoss::L1, input, target, {}, {}, reduction, 0.0);
  }
  return native::l1_loss(input, target, reduction);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, int64_t reduction, double beta) {
  if (autocast::active()) {  // autocast: float32
    const Tensor x = autocast::to_fp32(input), y = autocast::to_fp32(target);
    autocast::ExcludeGuard no_autocast;
    return ember::smooth_l1_loss(x, y, reduction, beta);
  }
  // beta = 0 is the l1 loss (the quadratic piece vanishes), as PyTorch: its node too.
  if (beta == 0.0) return ember::l1_loss(input, target, reduction);
  if (autograd::should_record(input, target)) {
    return derivatives::pointwise_loss(PointwiseLoss::SmoothL1, input, target, {}, {}, reduction,
                                       beta);
  }
  return native::smooth_l1_loss(input, target, reduction, beta);
}

Tensor huber_loss(const Tensor& input, const Tensor& target, int64_t reduction, double delta) {
  if (autocast::active()) {  // autocast: float32
    const Tensor x = autocast::to_fp32(input), y = autocast::to_fp32(target);
    autocast::ExcludeGuard no_autocast;
    return ember::huber_loss(x, y, reduction, delta);
  }
  if (autograd::should_record(input, target)) {
    return derivatives::pointwise_loss(PointwiseLoss::Huber, input, target, {}, {}, reduction,
                                       delta);
  }
  return native::huber_loss(input, target, reduction, delta);
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                            int64_t reduction) {
  if (autocast::active()) {  // autocast: float32
    const Tensor x = autocast::to_fp32(input), y = autocast::to_fp32(target);
    const Tensor w = autocast::to_fp32(weight);
    autocast::ExcludeGuard no_autocast;
    return ember::binary_cross_entropy(x, y, w, reduction);
  }
  if (autograd::should_record(input, target, weight)) {
    return derivatives::pointwise_loss(PointwiseLoss::BCE, input, target, weight, {}, reduction,
                                       0.0);
  }
  return native::binary_cross_entropy(input, target, weight, reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight, const Tensor& pos_weight,
                                        int64_t reduction) {
  if (autocast::active()) {  // autocast: float32
    const Tensor x = autocast::to_fp32(input), y = autocast::to_fp32(target);
    const Tensor w = autocast::to_fp32(weight), pw = autocast::to_fp32(pos_weight);
    autocast::ExcludeGuard no_autocast;
    return ember::binary_cross_entropy_with_logits(x, y, w, pw, reduction);
  }
  if (autograd::should_record(input, target, weight, pos_weight)) {
    return derivatives::pointwise_loss(PointwiseLoss::BCEWithLogits, input, target, weight,
                                       pos_weight, reduction, 0.0);
  }
  return native::binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction);
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t reduction,
                int64_t ignore_index) {
  if (autocast::active()) {  // autocast: float32 (target holds class indices: not cast)
    const Tensor x = autocast::to_fp32(input), w = autocast::to_fp32(weight);
    autocast::ExcludeGuard no_autocast;
    return ember::nll_loss(x, target, w, reduction, ignore_index);
  }
  if (autograd::should_record(input, weight)) {
    return derivatives::nll_loss(input, target, weight, reduction, ignore_index);
  }
  return native::nll_loss(input, target, weight, reduction, ignore_index);
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                     int64_t reduction, int64_t ignore_index, double label_smoothing) {
  if (autocast::active()) {  // autocast: float32 (class-probability targets too)
    const Tensor x = autocast::to_fp32(input), y = autocast::to_fp32(target);
    const Tensor w = autocast::to_fp32(weight);
    autocast::ExcludeGuard no_autocast;
    return ember::cross_entropy(x, y, w, reduction, ignore_index, label_smoothing);
  }
  if (autograd::should_record(input, target, weight)) {
    return derivatives::cross_entropy(input, target, weight, reduction, ignore_index,
                                      label_smoothing);
  }
  return native::cross_entropy(input, target, weight, reduction, ignore_index, label_smoothing);
}

}  // namespace ember
