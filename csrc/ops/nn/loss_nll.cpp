// nll_loss and cross_entropy (class indices or class probabilities). See nn_loss.h.
#include <cmath>

#include "core/shape.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/nn/loss.h"
#include "ops/nn/norm_common.h"
#include "ops/reduce.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(nll_loss_stub, NllFn);
EMBER_DEFINE_STUB(nll_loss_backward_stub, NllBackwardFn);
EMBER_DEFINE_STUB(cross_entropy_stub, CrossEntropyFn);
EMBER_DEFINE_STUB(cross_entropy_backward_stub, CrossEntropyBackwardFn);

using nn_detail::list_str;

namespace {

constexpr int64_t kMean = static_cast<int64_t>(LossReduction::Mean);
constexpr int64_t kNone = static_cast<int64_t>(LossReduction::None);

void check_reduction(int64_t reduction, const char* op) {
  EMBER_CHECK_T(ValueError, reduction >= 0 && reduction <= 2, "[", op, "] ", reduction,
                " is not a valid value for reduction");
}

int64_t num_classes(const Tensor& input) {
  return input.dim() == 1 ? input.size(0) : input.size(1);
}

Tensor compute_dtype_of(const Tensor& t, ScalarType ct) {
  return t.dtype() == ct ? t : to_dtype(t, ct);
}

ScalarType compute_type(ScalarType t) {
  return t == ScalarType::Float16 || t == ScalarType::BFloat16 ? ScalarType::Float32 : t;
}

void check_weight(const Tensor& weight, const Tensor& input, const char* op) {
  if (!weight.defined()) return;
  const int64_t C = num_classes(input);
  EMBER_CHECK(weight.numel() == C, "[", op, "] weight tensor should be defined either for all ", C,
              " classes or no classes but got weight tensor of shape: ", list_str(weight.sizes()));
}

// The (N, C, S) view of a tensor with the class dim at 1 (or a 1-D tensor of classes).
ClassGeometry class_geometry(const Tensor& t) {
  if (t.dim() == 1) return ClassGeometry{1, t.size(0), 1};
  ClassGeometry g{t.size(0), t.size(1), 1};
  for (int64_t d = 2; d < t.dim(); ++d) g.S *= t.size(d);
  return g;
}

void check_label_smoothing(double ls, const char* op) {
  EMBER_CHECK(ls >= 0.0 && ls <= 1.0, "[", op,
              "] label_smoothing must be between 0.0 and 1.0. Got: ", ls);
}

}  // namespace

bool is_probability_target(const Tensor& input, const Tensor& target) {
  return input.sizes().equals(target.sizes());
}

void check_nll_args(const Tensor& input, const Tensor& target, const Tensor& weight,
                    const char* op) {
  EMBER_CHECK_T(ValueError, input.dim() >= 1, "[", op, "] Expected 1 or more dimensions (got ",
                input.dim(), ")");
  EMBER_CHECK(target.dtype() == ScalarType::Int64 || target.dtype() == ScalarType::UInt8, "[", op,
              "] expected target dtype to be Long or Byte (int64 or uint8), but got ",
              dtype_name(target.dtype()));
  if (input.dim() == 1) {
    EMBER_CHECK(target.dim() <= 1, "[", op,
                "] 0D or 1D target tensor expected, multi-target not supported");
    EMBER_CHECK_T(
        ValueError, target.dim() == 0 || target.size(0) == 1, "[", op,
        "] For 1D input, 1D target must have size 1, but got target size: ", target.size(0));
  } else {
    const int64_t tb = target.dim() == 0 ? 0 : target.size(0);
    EMBER_CHECK_T(ValueError, input.size(0) == tb, "[", op, "] Expected input batch_size (",
                  input.size(0), ") to match target batch_size (", tb, ").");
    if (input.dim() == 2) {
      EMBER_CHECK(target.dim() == 1, "[", op,
                  "] 0D or 1D target tensor expected, multi-target not supported");
    } else {
      bool ok = target.dim() == input.dim() - 1;
      for (int64_t d = 2; ok && d < input.dim(); ++d) ok = target.size(d - 1) == input.size(d);
      if (!ok) {
        DimVector expected;
        expected.push_back(input.size(0));
        for (int64_t d = 2; d < input.dim(); ++d) expected.push_back(input.size(d));
        EMBER_THROW(Error, "[", op, "] Expected target size ", list_str(expected), ", got ",
                    list_str(target.sizes()));
      }
    }
  }
  check_weight(weight, input, op);
  EMBER_CHECK(!weight.defined() || weight.dtype() == input.dtype(), "[", op,
              "] expected scalar type ", dtype_name(input.dtype()), " but found ",
              dtype_name(weight.dtype()));
}

// ---- nll_loss ----------------------------------------------------------------------------------

NllResult nll_loss_forward(const Tensor& input, const Tensor& target, const Tensor& weight,
                           int64_t reduction, int64_t ignore_index) {
  const char* op = "nll_loss";
  check_reduction(reduction, op);
  check_nll_args(input, target, weight, op);
  nn_detail::check_floating_input(input, op);
  const ScalarType ct = compute_type(input.dtype());
  Tensor x = compute_dtype_of(input, ct);
  if (x.dim() > 3) {
    // The spatial dims are read through one stride: they must collapse into one run.
    bool collapsible = true;
    for (int64_t d = 2; d + 1 < x.dim(); ++d) {
      if (x.size(d + 1) != 1 && x.stride(d) != x.stride(d + 1) * x.size(d + 1)) collapsible = false;
    }
    if (!collapsible) x = contiguous(x);
  }
  NllGeometry geo{1, num_classes(x), 1, 0, 0, 0};
  if (x.dim() == 1) {
    geo.sC = x.stride(0);
  } else {
    geo.N = x.size(0);
    geo.sN = x.stride(0);
    geo.sC = x.stride(1);
    for (int64_t d = 2; d < x.dim(); ++d) geo.S *= x.size(d);
    geo.sS = x.dim() > 2 ? x.stride(x.dim() - 1) : 0;
  }
  Tensor t = contiguous(to_dtype(target, ScalarType::Int64));
  Tensor w = weight.defined() ? contiguous(compute_dtype_of(weight, ct)) : Tensor();
  const TensorOptions opts(ct);
  Tensor loss = reduction == kNone ? empty({geo.N * geo.S}, opts) : Tensor();
  double loss_sum = 0, weight_sum = 0;
  nll_loss_stub(input.device(), loss, &loss_sum, &weight_sum, x, geo, t, w, ignore_index);
  NllResult r;
  r.total_weight = weight_sum;
  if (reduction == kNone) {
    r.loss = input.dim() == 1 ? view(loss, {}) : view(loss, target.sizes());
  } else {
    const double v = reduction == kMean ? loss_sum / weight_sum : loss_sum;
    r.loss = scalar_tensor(Scalar(v), ct);
  }
  r.loss = nn_detail::in_dtype_of(r.loss, input);
  return r;
}

Tensor nll_loss_backward(const Tensor& grad, const Tensor& input, const Tensor& target,
                         const Tensor& weight, int64_t reduction, int64_t ignore_index,
                         double total_weight) {
  const ScalarType ct = compute_type(input.dtype());
  const int64_t C = num_classes(input);
  const int64_t N = input.dim() == 1 ? 1 : input.size(0);
  const int64_t S = input.numel() / std::max<int64_t>(N * C, 1);
  Tensor gi = zeros({N, C, S}, TensorOptions(ct));
  Tensor t = contiguous(to_dtype(target, ScalarType::Int64));
  Tensor w = weight.defined() ? contiguous(compute_dtype_of(weight, ct)) : Tensor();
  Tensor g = contiguous(compute_dtype_of(grad, ct));
  const double scale = reduction == kMean ? 1.0 / total_weight : 1.0;
  if (input.numel() > 0) {
    nll_loss_backward_stub(input.device(), gi, g, scale, t, w, N, C, S, ignore_index);
  }
  return nn_detail::in_dtype_of(view(gi, input.sizes()), input);
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t reduction,
                int64_t ignore_index) {
  return nll_loss_forward(input, target, weight, reduction, ignore_index).loss;
}

// ---- cross_entropy -----------------------------------------------------------------------------

CrossEntropyResult cross_entropy_forward(const Tensor& input, const Tensor& target,
                                         const Tensor& weight, int64_t reduction,
                                         int64_t ignore_index, double label_smoothing) {
  const char* op = "cross_entropy";
  check_reduction(reduction, op);
  nn_detail::check_floating_input(input, op);
  const bool prob = is_probability_target(input, target);
  ScalarType result = input.dtype();
  if (prob) {
    EMBER_CHECK(is_floating(target.dtype()), "[", op,
                "] Expected floating point type for target with class probabilities, got ",
                dtype_name(target.dtype()));
    EMBER_CHECK(ignore_index < 0, "[", op,
                "] ignore_index is not supported for floating point target");
    EMBER_CHECK_T(IndexError, input.dim() >= 1, "[", op,
                  "] Dimension specified as 1 but tensor has no dimensions");
    check_weight(weight, input, op);
    result = promote_types(input.dtype(), target.dtype());
  } else {
    check_nll_args(input, target, weight, op);
  }
  check_label_smoothing(label_smoothing, op);
  const ScalarType ct = compute_type(result);
  const ClassGeometry geo = class_geometry(input);
  const int64_t C = geo.C;
  CrossEntropyResult r;
  Tensor x = contiguous(compute_dtype_of(input, ct));
  r.target_rows = prob ? contiguous(compute_dtype_of(target, ct))
                       : contiguous(reshape(to_dtype(target, ScalarType::Int64), {geo.N * geo.S}));
  r.weight = weight.defined() ? contiguous(compute_dtype_of(reshape(weight, {C}), ct)) : Tensor();
  r.lse = empty({geo.N * geo.S}, TensorOptions(ct));
  Tensor loss = empty({geo.N * geo.S}, TensorOptions(ct));
  r.total_weight = 0;
  if (x.numel() > 0) {
    cross_entropy_stub(input.device(), r.lse, loss, &r.total_weight, x, r.target_rows, r.weight,
                       geo, label_smoothing, ignore_index, prob);
  } else {
    zero_(loss);
  }
  const int64_t R = geo.N * geo.S;
  if (reduction == kNone) {
    if (input.dim() == 1) {
      r.loss = view(loss, {});
    } else {
      DimVector shape;
      shape.push_back(input.size(0));
      for (int64_t d = 2; d < input.dim(); ++d) shape.push_back(input.size(d));
      r.loss = view(loss, shape);
    }
  } else {
    r.loss = native::sum(loss);
    if (reduction == kMean) {
      const double denom = prob ? static_cast<double>(R) : r.total_weight;
      r.loss = native::div(r.loss, wrap_scalar(Scalar(denom)));
    }
  }
  if (r.loss.dtype() != result) r.loss = to_dtype(r.loss, result);
  return r;
}

std::pair<Tensor, Tensor> cross_entropy_backward(const Tensor& grad, const Tensor& input,
                                                 const Tensor& target,
                                                 const CrossEntropyResult& saved, int64_t reduction,
                                                 int64_t ignore_index, double label_smoothing,
                                                 bool need_input, bool need_target) {
  const bool prob = is_probability_target(input, target);
  const ScalarType ct = saved.lse.dtype();
  const ClassGeometry geo = class_geometry(input);
  const int64_t R = geo.N * geo.S;
  double scale = 1.0;
  if (reduction == kMean) scale = prob ? 1.0 / static_cast<double>(R) : 1.0 / saved.total_weight;
  Tensor g = contiguous(compute_dtype_of(grad, ct));
  const TensorOptions opts(ct);
  Tensor gi = need_input ? empty({geo.N, geo.C, geo.S}, opts) : Tensor();
  Tensor gt = need_target && prob ? empty({geo.N, geo.C, geo.S}, opts) : Tensor();
  if (!gi.defined() && !gt.defined()) return {};
  if (R * geo.C > 0) {
    // The input as the forward read it (no copy for a contiguous float input).
    const Tensor x = contiguous(compute_dtype_of(input, ct));
    cross_entropy_backward_stub(input.device(), gi, gt, g, scale, x, saved.lse, saved.target_rows,
                                saved.weight, geo, label_smoothing, ignore_index, prob);
  }
  std::pair<Tensor, Tensor> out;
  if (gi.defined()) out.first = nn_detail::in_dtype_of(view(gi, input.sizes()), input);
  if (gt.defined()) out.second = nn_detail::in_dtype_of(view(gt, target.sizes()), target);
  return out;
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                     int64_t reduction, int64_t ignore_index, double label_smoothing) {
  return cross_entropy_forward(input, target, weight, reduction, ignore_index, label_smoothing)
      .loss;
}

}  // namespace native
}  // namespace ember
