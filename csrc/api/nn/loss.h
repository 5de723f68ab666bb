// Public loss ops: each loss records its node when an input requires grad (api/nn/loss.cpp); the
// forward / backward pieces the derivatives use are the native functions.
#pragma once
#include <cstdint>

#include "ops/nn/loss.h"

namespace ember {

using native::check_nll_args;
using native::ClassGeometry;
using native::cross_entropy_backward;
using native::cross_entropy_forward;
using native::CrossEntropyBackwardFn;
using native::CrossEntropyFn;
using native::CrossEntropyResult;
using native::is_probability_target;
using native::LossReduction;
using native::nll_loss_backward;
using native::nll_loss_forward;
using native::NllBackwardFn;
using native::NllFn;
using native::NllGeometry;
using native::NllResult;
using native::pointwise_loss_backward;
using native::pointwise_loss_forward;
using native::pointwise_loss_name;
using native::PointwiseLoss;
using native::PointwiseLossBackwardFn;
using native::PointwiseLossFn;

// reduction: 0 = 'none', 1 = 'mean', 2 = 'sum' (see ops/nn/loss.h).
Tensor mse_loss(const Tensor& input, const Tensor& target, int64_t reduction = 1);
Tensor l1_loss(const Tensor& input, const Tensor& target, int64_t reduction = 1);
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, int64_t reduction = 1,
                      double beta = 1.0);
Tensor huber_loss(const Tensor& input, const Tensor& target, int64_t reduction = 1,
                  double delta = 1.0);
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                            int64_t reduction = 1);
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight = {}, const Tensor& pos_weight = {},
                                        int64_t reduction = 1);
// input (C), (N, C) or (N, C, d1, ...); target of class indices (int64 / uint8).
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                int64_t reduction = 1, int64_t ignore_index = -100);
// target: class indices, or class probabilities of input's shape.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                     int64_t reduction = 1, int64_t ignore_index = -100,
                     double label_smoothing = 0.0);

}  // namespace ember
