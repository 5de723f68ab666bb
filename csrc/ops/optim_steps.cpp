// Note [Fused Optimizer Steps]
// torch.optim's CPU default runs a Python loop over parameters issuing 5-15 small tensor ops per
// parameter (each allocating a temporary and walking memory again). Ember's optimizers make one
// C++ call per parameter group instead: for each parameter this file validates the tensors,
// increments the step counter, computes the step-dependent scalars in double exactly as
// PyTorch's Python code does (bias corrections, NAdam's momentum schedule, RAdam's
// rectification), and hands the parameter's tensors to a kernel that applies the whole update in
// one pass over memory (kernels/cpu/optim_kernels.cpp), parallel over the elements of large
// tensors. The element formulas follow the order of PyTorch's single-tensor ops (lerp,
// addcmul, addcdiv, ...), computed in float for float16/bfloat16/float32 and in double for
// float64, so trajectories match torch.optim's to rounding. Complex parameters are updated
// through their real views, as PyTorch does (view_as_real).
//
// The update writes raw memory: it records no gradient history (whatever the grad mode), and it
// bumps the version counter of every tensor it modifies, so a graph that saved a parameter
// before the step refuses to backpropagate through the stale value.
#include "ops/optim_steps.h"

#include <cmath>
#include <string>
#include <utility>

#include "core/factory.h"
#include "core/shape.h"
#include "dispatch/copy.h"
#include "dispatch/dtype_dispatch.h"

namespace ember {
namespace native {
namespace optim {

EMBER_DEFINE_STUB(sgd_step_stub, SgdKernelFn);
EMBER_DEFINE_STUB(adam_step_stub, AdamKernelFn);
EMBER_DEFINE_STUB(rmsprop_step_stub, RmspropKernelFn);
EMBER_DEFINE_STUB(adagrad_step_stub, AdagradKernelFn);
EMBER_DEFINE_STUB(adadelta_step_stub, AdadeltaKernelFn);
EMBER_DEFINE_STUB(adamax_step_stub, AdamaxKernelFn);
EMBER_DEFINE_STUB(nadam_step_stub, NadamKernelFn);
EMBER_DEFINE_STUB(radam_step_stub, RadamKernelFn);

namespace {

// A named per-parameter tensor list ("exp_avgs") that must have one entry per parameter.
struct NamedList {
  const char* name;
  const TensorList* list;
};

void check_list_lengths(const char* op, const TensorList& params,
                        std::initializer_list<NamedList> lists) {
  for (const NamedList& l : lists) {
    EMBER_CHECK_T(ValueError, l.list->size() == params.size(), "[", op, "] expected ",
                  params.size(), " ", l.name, " (one per parameter), got ", l.list->size());
  }
}

// view_as_real: a complex tensor seen as its real dtype with a trailing dimension of 2.
Tensor real_view(const Tensor& t) {
  DimVector sizes(t.sizes());
  DimVector strides;
  for (int64_t s : t.strides()) strides.push_back(s * 2);
  sizes.push_back(2);
  strides.push_back(1);
  auto impl = make_intrusive<TensorImpl>(t.storage(), to_real(t.dtype()), sizes, strides,
                                         t.storage_offset() * 2, t.impl()->version_counter());
  return Tensor(std::move(impl));
}

// The contiguous tensors of one parameter handed to a kernel, and the non-contiguous originals
// that must receive the result afterwards.
class SlotGuard {
 public:
  // fresh_state0: state[0] was just allocated by the step (SGD's first momentum buffer), so,
  // like a new tensor in PyTorch, it keeps version 0.
  SlotGuard(const char* op, size_t index, const Tensor& param, const Tensor& grad,
            std::initializer_list<std::pair<const char*, Tensor>> states, bool fresh_state0 = false)
      : op_(op) {
    EMBER_CHECK_T(TypeError, param.defined(), "[", op, "] parameter ", index, " is None");
    const ScalarType dt = param.dtype();
    EMBER_CHECK_T(TypeError, is_floating(dt) || is_complex(dt), "[", op, "] parameter ", index,
                  " has dtype ", dtype_name(dt),
                  "; only floating point and complex parameters can be optimized");
    EMBER_CHECK(grad.defined(), "[", op, "] parameter ", index, " has no gradient");
    check_like(index, "gradient", grad, param);
    // The kernels assume that the arrays they write do not overlap (they vectorise without
    // alias checks): tensors written by the step must not share memory; a gradient that shares
    // memory with one of them is read from a copy.
    std::vector<std::pair<const char*, const Tensor*>> written = {{"the parameter", &param}};
    for (const auto& entry : states) {
      if (entry.second.defined()) written.emplace_back(entry.first, &entry.second);
    }
    bool grad_aliases = false;
    for (size_t a = 0; a < written.size(); ++a) {
      grad_aliases = grad_aliases || share_memory(grad, *written[a].second);
      for (size_t b = a + 1; b < written.size(); ++b) {
        EMBER_CHECK(!share_memory(*written[a].second, *written[b].second), "[", op, "] ",
                    written[b].first, " of parameter ", index, " shares memory with ",
                    written[a].first);
      }
    }
    slot_.param = prepare(param, /*written=*/true);
    slot_.grad = grad_aliases ? copy_of(grad) : prepare(grad, /*written=*/false);
    int k = 0;
    for (const auto& [name, state] : states) {
      if (state.defined()) {
        check_like(index, name, state, param);
        slot_.state[k] = prepare(state, /*written=*/!(k == 0 && fresh_state0));
      }
      ++k;
    }
  }

  const OptimSlot& slot() const { return slot_; }

  // Publishes the result: copies working buffers back, bumps versions of in-place targets.
  void commit() {
    for (auto& [original, work] : write_back_) copy_into(original, work, op_);
    for (const Tensor& t : in_place_) t.bump_version();
  }

 private:
  void check_like(size_t index, const char* what, const Tensor& t, const Tensor& param) const {
    EMBER_CHECK(t.sizes().equals(param.sizes()), "[", op_, "] ", what, " of parameter ", index,
                " has shape ", shape_str(t.sizes()), " but the parameter has shape ",
                shape_str(param.sizes()));
    EMBER_CHECK_T(TypeError, t.dtype() == param.dtype(), "[", op_, "] ", what, " of parameter ",
                  index, " has dtype ", dtype_name(t.dtype()), " but the parameter has dtype ",
                  dtype_name(param.dtype()));
    EMBER_CHECK(t.device() == param.device(), "[", op_, "] ", what, " of parameter ", index,
                " is on ", t.device().str(), " but the parameter is on ", param.device().str());
  }

  // Whether the byte ranges the two tensors' elements span intersect (strides are >= 0).
  static bool share_memory(const Tensor& a, const Tensor& b) {
    if (a.numel() == 0 || b.numel() == 0) return false;
    auto span = [](const Tensor& t) {
      int64_t last = 0;
      for (int64_t d = 0; d < t.dim(); ++d) last += (t.size(d) - 1) * t.stride(d);
      const char* begin = static_cast<const char*>(t.data_ptr());
      return std::make_pair(begin, begin + (last + 1) * static_cast<int64_t>(t.itemsize()));
    };
    auto [a0, a1] = span(a);
    auto [b0, b1] = span(b);
    return a0 < b1 && b0 < a1;
  }

  Tensor copy_of(const Tensor& t) const {
    Tensor real = is_complex(t.dtype()) ? real_view(t) : t;
    Tensor work = empty_tensor(real.sizes(), real.dtype(), real.device(), op_);
    copy_into(work, real, op_, /*bump_version=*/false);
    return work;
  }

  Tensor prepare(const Tensor& t, bool written) {
    Tensor real = is_complex(t.dtype()) ? real_view(t) : t;
    if (real.is_contiguous()) {
      if (written) in_place_.push_back(real);
      return real;
    }
    Tensor work = empty_tensor(real.sizes(), real.dtype(), real.device(), op_);
    copy_into(work, real, op_, /*bump_version=*/false);
    if (written) write_back_.emplace_back(real, work);
    return work;
  }

  const char* op_;
  OptimSlot slot_;
  std::vector<Tensor> in_place_;
  std::vector<std::pair<Tensor, Tensor>> write_back_;
};

void check_step_tensor(const char* op, const char* what, size_t index, const Tensor& t) {
  EMBER_CHECK_T(TypeError, t.defined(), "[", op, "] ", what, " of parameter ", index, " is None");
  EMBER_CHECK(t.numel() == 1, "[", op, "] ", what, " of parameter ", index,
              " must be a one-element tensor, got shape ", shape_str(t.sizes()));
  EMBER_CHECK_T(TypeError, is_floating(t.dtype()), "[", op, "] ", what, " of parameter ", index,
                " must be a floating point tensor, got dtype ", dtype_name(t.dtype()));
  EMBER_CHECK(t.device().type == DeviceType::CPU, "[", op, "] ", what, " of parameter ", index,
              " must be on the CPU");
}

// t = t * factor + addend, computed in t's precision as PyTorch's in-place scalar ops do
// (`step_t += 1`, `mu_product *= mu`); returns the stored value.
double update_scalar(const char* op, const Tensor& t, double factor, double addend) {
  double stored = dispatch_dtype<kFloatingTypes>(t.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_type<T>;
    T* p = t.data<T>();
    A v = static_cast<A>(*p);
    if (factor != 1) v = v * static_cast<A>(factor);
    if (addend != 0) v = v + static_cast<A>(addend);
    *p = static_cast<T>(v);
    return static_cast<double>(static_cast<A>(*p));
  });
  t.bump_version();
  return stored;
}

double increment_step(const char* op, const Tensor& step) {
  return update_scalar(op, step, 1, 1);
}

}  // namespace

std::vector<Tensor> sgd_step(const TensorList& params, const TensorList& grads,
                             const TensorList& momentum_buffers, const SgdOptions& o) {
  const char* op = "sgd";
  check_list_lengths(op, params, {{"grads", &grads}});
  const bool use_momentum = o.momentum != 0;
  if (use_momentum) check_list_lengths(op, params, {{"momentum buffers", &momentum_buffers}});
  std::vector<Tensor> buffers(params.size());
  std::vector<bool> fresh(params.size(), false);
  std::vector<SlotGuard> slots;
  slots.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    if (use_momentum) {
      buffers[i] = momentum_buffers[i];
      if (!buffers[i].defined() && params[i].defined()) {
        buffers[i] = empty_tensor(params[i].sizes(), params[i].dtype(), params[i].device(), op);
        fresh[i] = true;
      }
    }
    slots.push_back(
        SlotGuard(op, i, params[i], grads[i], {{"momentum_buffer", buffers[i]}}, fresh[i]));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    SgdCoeffs c{o.lr, o.momentum, o.dampening, o.weight_decay, o.nesterov, o.maximize, fresh[i]};
    sgd_step_stub(params[i].device(), slots[i].slot(), c);
    slots[i].commit();
  }
  return buffers;
}

void adam_step(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
               const TensorList& exp_avg_sqs, const TensorList& max_exp_avg_sqs,
               const TensorList& steps, const AdamOptions& o) {
  const char* op = o.decoupled_weight_decay ? "adamw" : "adam";
  check_list_lengths(op, params,
                     {{"grads", &grads},
                      {"exp_avgs", &exp_avgs},
                      {"exp_avg_sqs", &exp_avg_sqs},
                      {"state_steps", &steps}});
  if (o.amsgrad) check_list_lengths(op, params, {{"max_exp_avg_sqs", &max_exp_avg_sqs}});
  std::vector<SlotGuard> slots;
  slots.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor max_sq = o.amsgrad ? max_exp_avg_sqs[i] : Tensor();
    EMBER_CHECK(!o.amsgrad || max_sq.defined(), "[", op,
                "] amsgrad needs max_exp_avg_sq for parameter ", i);
    slots.push_back(SlotGuard(
        op, i, params[i], grads[i],
        {{"exp_avg", exp_avgs[i]}, {"exp_avg_sq", exp_avg_sqs[i]}, {"max_exp_avg_sq", max_sq}}));
    check_step_tensor(op, "step", i, steps[i]);
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const double step = increment_step(op, steps[i]);
    const double bias_correction1 = 1 - std::pow(o.beta1, step);
    const double bias_correction2 = 1 - std::pow(o.beta2, step);
    AdamCoeffs c{o.lr,
                 o.beta1,
                 o.beta2,
                 o.eps,
                 o.weight_decay,
                 o.lr / bias_correction1,
                 std::pow(bias_correction2, 0.5),
                 o.amsgrad,
                 o.maximize,
                 o.decoupled_weight_decay};
    adam_step_stub(params[i].device(), slots[i].slot(), c);
    slots[i].commit();
  }
}

void rmsprop_step(const TensorList& params, const TensorList& grads, const TensorList& square_avgs,
                  const TensorList& grad_avgs, const TensorList& momentum_buffers,
                  const TensorList& steps, const RmspropOptions& o) {
  const char* op = "rmsprop";
  check_list_lengths(op, params,
                     {{"grads", &grads}, {"square_avgs", &square_avgs}, {"state_steps", &steps}});
  if (o.centered) check_list_lengths(op, params, {{"grad_avgs", &grad_avgs}});
  if (o.momentum > 0) check_list_lengths(op, params, {{"momentum buffers", &momentum_buffers}});
  std::vector<SlotGuard> slots;
  slots.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor grad_avg = o.centered ? grad_avgs[i] : Tensor();
    Tensor buf = o.momentum > 0 ? momentum_buffers[i] : Tensor();
    EMBER_CHECK(!o.centered || grad_avg.defined(), "[", op,
                "] centered needs grad_avg for parameter ", i);
    EMBER_CHECK(o.momentum <= 0 || buf.defined(), "[", op,
                "] momentum needs momentum_buffer for parameter ", i);
    slots.push_back(SlotGuard(
        op, i, params[i], grads[i],
        {{"square_avg", square_avgs[i]}, {"grad_avg", grad_avg}, {"momentum_buffer", buf}}));
    check_step_tensor(op, "step", i, steps[i]);
  }
  for (size_t i = 0; i < params.size(); ++i) {
    increment_step(op, steps[i]);
    RmspropCoeffs c{o.lr, o.alpha, o.eps, o.weight_decay, o.momentum, o.centered, o.maximize};
    rmsprop_step_stub(params[i].device(), slots[i].slot(), c);
    slots[i].commit();
  }
}

void adagrad_step(const TensorList& params, const TensorList& grads, const TensorList& state_sums,
                  const TensorList& steps, const AdagradOptions& o) {
  const char* op = "adagrad";
  check_list_lengths(op, params,
                     {{"grads", &grads}, {"state_sums", &state_sums}, {"state_steps", &steps}});
  std::vector<SlotGuard> slots;
  slots.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    slots.push_back(SlotGuard(op, i, params[i], grads[i], {{"sum", state_sums[i]}}));
    check_step_tensor(op, "step", i, steps[i]);
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const double step = increment_step(op, steps[i]);
    AdagradCoeffs c{o.lr / (1 + (step - 1) * o.lr_decay), o.eps, o.weight_decay, o.maximize};
    adagrad_step_stub(params[i].device(), slots[i].slot(), c);
    slots[i].commit();
  }
}

void adadelta_step(const TensorList& params, const TensorList& grads, const TensorList& square_avgs,
                   const TensorList& acc_deltas, const TensorList& steps,
                   const AdadeltaOptions& o) {
  const char* op = "adadelta";
  check_list_lengths(op, params,
                     {{"grads", &grads},
                      {"square_avgs", &square_avgs},
                      {"acc_deltas", &acc_deltas},
                      {"state_steps", &steps}});
  std::vector<SlotGuard> slots;
  slots.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    slots.push_back(SlotGuard(op, i, params[i], grads[i],
                              {{"square_avg", square_avgs[i]}, {"acc_delta", acc_deltas[i]}}));
    check_step_tensor(op, "step", i, steps[i]);
  }
  for (size_t i = 0; i < params.size(); ++i) {
    increment_step(op, steps[i]);
    AdadeltaCoeffs c{o.lr, o.rho, o.eps, o.weight_decay, o.maximize};
    adadelta_step_stub(params[i].device(), slots[i].slot(), c);
    slots[i].commit();
  }
}

void adamax_step(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                 const TensorList& exp_infs, const TensorList& steps, const AdamaxOptions& o) {
  const char* op = "adamax";
  check_list_lengths(op, params,
                     {{"grads", &grads},
                      {"exp_avgs", &exp_avgs},
                      {"exp_infs", &exp_infs},
                      {"state_steps", &steps}});
  std::vector<SlotGuard> slots;
  slots.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    slots.push_back(SlotGuard(op, i, params[i], grads[i],
                              {{"exp_avg", exp_avgs[i]}, {"exp_inf", exp_infs[i]}}));
    check_step_tensor(op, "step", i, steps[i]);
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const double step = increment_step(op, steps[i]);
    const double bias_correction = 1 - std::pow(o.beta1, step);
    AdamaxCoeffs c{o.beta1, o.beta2, o.eps, o.weight_decay, o.lr / bias_correction, o.maximize};
    adamax_step_stub(params[i].device(), slots[i].slot(), c);
    slots[i].commit();
  }
}

void nadam_step(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                const TensorList& exp_avg_sqs, const TensorList& mu_products,
                const TensorList& steps, const NadamOptions& o) {
  const char* op = "nadam";
  check_list_lengths(op, params,
                     {{"grads", &grads},
                      {"exp_avgs", &exp_avgs},
                      {"exp_avg_sqs", &exp_avg_sqs},
                      {"mu_products", &mu_products},
                      {"state_steps", &steps}});
  std::vector<SlotGuard> slots;
  slots.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    slots.push_back(SlotGuard(op, i, params[i], grads[i],
                              {{"exp_avg", exp_avgs[i]}, {"exp_avg_sq", exp_avg_sqs[i]}}));
    check_step_tensor(op, "step", i, steps[i]);
    check_step_tensor(op, "mu_product", i, mu_products[i]);
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const double step = increment_step(op, steps[i]);
    // The momentum schedule mu_t of Dozat's NAdam and its running product, as PyTorch: the
    // product is kept in the state tensor's precision.
    const double mu = o.beta1 * (1.0 - 0.5 * std::pow(0.96, step * o.momentum_decay));
    const double mu_next = o.beta1 * (1.0 - 0.5 * std::pow(0.96, (step + 1) * o.momentum_decay));
    const double mu_product = update_scalar(op, mu_products[i], mu, 0);
    const double mu_product_next = mu_product * mu_next;
    NadamCoeffs c{o.lr,
                  o.beta1,
                  o.beta2,
                  o.eps,
                  o.weight_decay,
                  1 - std::pow(o.beta2, step),
                  -o.lr * (1.0 - mu) / (1.0 - mu_product),
                  (-o.lr * mu_next) / (1.0 - mu_product_next),
                  o.decoupled_weight_decay,
                  o.maximize};
    nadam_step_stub(params[i].device(), slots[i].slot(), c);
    slots[i].commit();
  }
}

void radam_step(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                const TensorList& exp_avg_sqs, const TensorList& steps, const RadamOptions& o) {
  const char* op = "radam";
  check_list_lengths(op, params,
                     {{"grads", &grads},
                      {"exp_avgs", &exp_avgs},
                      {"exp_avg_sqs", &exp_avg_sqs},
                      {"state_steps", &steps}});
  std::vector<SlotGuard> slots;
  slots.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    slots.push_back(SlotGuard(op, i, params[i], grads[i],
                              {{"exp_avg", exp_avgs[i]}, {"exp_avg_sq", exp_avg_sqs[i]}}));
    check_step_tensor(op, "step", i, steps[i]);
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const double step = increment_step(op, steps[i]);
    const double bias_correction1 = 1 - std::pow(o.beta1, step);
    const double bias_correction2 = 1 - std::pow(o.beta2, step);
    // Length of the approximated simple moving average (Liu et al.): the variance of the
    // adaptive learning rate is tractable, and the update rectified, only when rho_t > 5.
    const double rho_inf = 2 / (1 - o.beta2) - 1;
    const double rho_t = rho_inf - 2 * step * std::pow(o.beta2, step) / bias_correction2;
    const bool rectify = rho_t > 5.0;
    const double rect = rectify ? std::pow((rho_t - 4) * (rho_t - 2) * rho_inf /
                                               ((rho_inf - 4) * (rho_inf - 2) * rho_t),
                                           0.5)
                                : 0.0;
    RadamCoeffs c{o.lr,
                  o.beta1,
                  o.beta2,
                  o.eps,
                  o.weight_decay,
                  bias_correction1,
                  std::pow(bias_correction2, 0.5),
                  rect,
                  rectify,
                  o.decoupled_weight_decay,
                  o.maximize};
    radam_step_stub(params[i].device(), slots[i].slot(), c);
    slots[i].commit();
  }
}

}  // namespace optim
}  // namespace native
}  // namespace ember
