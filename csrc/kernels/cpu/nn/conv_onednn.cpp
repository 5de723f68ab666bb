// float32 / bfloat16 convolutions through oneDNN's convolution primitives (forward, backward
// data, backward weights).
//
// Note [oneDNN convolution layouts]: Ember's tensors are plain NCHW / OIHW, but oneDNN's fast
// (jit) convolutions want blocked layouts (nChw16c, ...): on plain layouts it falls back to an
// im2col + sgemm implementation that is 1.5-2x slower. So each primitive is created with
// format `any`, and the arguments whose chosen layout differs from the plain one are reordered
// on the way in and out, through per-thread scratch buffers. Primitives and their reorders are
// cached by everything that shapes them (see Note [oneDNN primitive cache] in gemm_onednn.cpp);
// scratchpads are per thread too, so one cached plan may run on several threads at once.
// A geometry oneDNN rejects, or serves only with its slow reference implementation, is
// reported to the caller (return false), which then runs im2col + GEMM.
#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/deterministic.h"
#include "core/parallel.h"
#include "kernels/cpu/onednn_isa.h"
#include "kernels/nn/conv_stubs.h"

namespace ember {
namespace native {
namespace {

enum class Pass : int64_t { kForward, kBackwardData, kBackwardWeights };

struct Key {
  int64_t v[24];
  bool operator==(const Key& o) const { return std::memcmp(v, o.v, sizeof(v)) == 0; }
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = 1469598103934665603ull;
    for (int64_t x : k.v) h = (h ^ static_cast<size_t>(x)) * 1099511628211ull;
    return h;
  }
};

// One argument of a primitive: the user's plain layout, the primitive's, and the reorder
// between them when they differ.
struct PlanArg {
  int arg = 0;
  bool output = false;
  dnnl::memory::desc user, prim;
  bool reorder = false;
  dnnl::reorder to_prim, to_user;
  dnnl::memory::desc reorder_scratch;
};

struct Plan {
  bool ok = false;
  dnnl::primitive prim;
  dnnl::memory::desc scratch;
  std::vector<PlanArg> args;
};

dnnl::engine& cpu_engine() {
  limit_onednn_isa_to_cpu_capability();
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

class PlanCache {
 public:
  static constexpr size_t kCapacity = 256;
  template <typename Make>
  std::shared_ptr<Plan> get(const Key& key, Make make) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = map_.find(key);
      if (it != map_.end()) {
        lru_.splice(lru_.begin(), lru_, it->second.second);
        return it->second.first;
      }
    }
    std::shared_ptr<Plan> p = make();  // outside the lock: creation takes a while
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it != map_.end()) return it->second.first;
    lru_.push_front(key);
    map_.emplace(key, std::make_pair(p, lru_.begin()));
    if (map_.size() > kCapacity) {
      map_.erase(lru_.back());
      lru_.pop_back();
    }
    return p;
  }

 private:
  std::mutex mu_;
  std::list<Key> lru_;
  std::unordered_map<Key, std::pair<std::shared_ptr<Plan>, std::list<Key>::iterator>, KeyHash> map_;
};

PlanCache& cache() {
  static PlanCache c;
  return c;
}

bool supported(ScalarType t) {
  return t == ScalarType::Float32 || t == ScalarType::BFloat16;
}

dnnl::memory::data_type dnnl_type(ScalarType t) {
  return t == ScalarType::Float32 ? dnnl::memory::data_type::f32 : dnnl::memory::data_type::bf16;
}

// Note [Deterministic Algorithms] (core/deterministic.h): oneDNN's weight gradient sums over the
// batch in per-thread partial buffers, so its rounding follows the thread count. Under the
// switch the weight pass is created and run on one OpenMP thread: this scope lowers the calling
// thread's OpenMP default to 1 and restores it (the key then says 1 thread).
class OneThreadScope {
 public:
  explicit OneThreadScope(bool active) : active_(active) {
    if (active_) {
      saved_ = omp_get_max_threads();
      omp_set_num_threads(1);
    }
  }
  ~OneThreadScope() {
    if (active_) omp_set_num_threads(saved_);
  }
  OneThreadScope(const OneThreadScope&) = delete;
  OneThreadScope& operator=(const OneThreadScope&) = delete;

 private:
  bool active_;
  int saved_ = 1;
};

Key make_key(Pass pass, ScalarType dtype, const ConvGeometry& g, bool bias, bool one_thread) {
  Key k;
  int64_t* v = k.v;
  v[0] = static_cast<int64_t>(pass);
  v[1] = static_cast<int64_t>(dtype);
  v[2] = g.batch;
  v[3] = g.in_channels;
  v[4] = g.out_channels;
  v[5] = g.groups;
  for (int d = 0; d < 2; ++d) {
    v[6 + d] = g.in[d];
    v[8 + d] = g.out[d];
    v[10 + d] = g.kernel[d];
    v[12 + d] = g.stride[d];
    v[14 + d] = g.pad[d];
    v[16 + d] = g.dilation[d];
  }
  v[18] = bias;
  // A primitive keeps the partitioning it was created with.
  v[19] = one_thread ? 1 : sync_library_threads();
  for (int i = 20; i < 24; ++i) v[i] = 0;
  return k;
}

struct Descs {
  dnnl::memory::dims src, wei, dst, bias, strides, dil, pad_l, pad_r;
  dnnl::memory::format_tag wei_tag;
};

// Dims and paddings of g in oneDNN's terms (dilation 0 = dense; the far-side padding is what
// makes out[d] exact, possibly less than pad[d]).
Descs make_dims(const ConvGeometry& g) {
  Descs d;
  d.src = {g.batch, g.in_channels, g.in[0], g.in[1]};
  d.dst = {g.batch, g.out_channels, g.out[0], g.out[1]};
  d.bias = {g.out_channels};
  if (g.groups == 1) {
    d.wei = {g.out_channels, g.in_channels, g.kernel[0], g.kernel[1]};
    d.wei_tag = dnnl::memory::format_tag::oihw;
  } else {
    d.wei = {g.groups, g.out_channels / g.groups, g.in_channels / g.groups, g.kernel[0],
             g.kernel[1]};
    d.wei_tag = dnnl::memory::format_tag::goihw;
  }
  for (int i = 0; i < 2; ++i) {
    d.strides.push_back(g.stride[i]);
    d.dil.push_back(g.dilation[i] - 1);
    d.pad_l.push_back(g.pad[i]);
    const int64_t extent = (g.kernel[i] - 1) * g.dilation[i] + 1;
    d.pad_r.push_back((g.out[i] - 1) * g.stride[i] + extent - g.in[i] - g.pad[i]);
  }
  return d;
}

void add_arg(Plan& plan, int arg, bool output, const dnnl::memory::desc& user,
             const dnnl::memory::desc& prim) {
  PlanArg a;
  a.arg = arg;
  a.output = output;
  a.user = user;
  a.prim = prim;
  a.reorder = user != prim;
  if (a.reorder) {
    // User scratchpads for the reorders too: a library-owned one would make concurrent runs of
    // one cached plan (Python threads release the GIL) unsafe.
    auto& eng = cpu_engine();
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (output) {
      dnnl::reorder::primitive_desc pd(eng, prim, eng, user, attr);
      a.to_user = dnnl::reorder(pd);
      a.reorder_scratch = pd.scratchpad_desc();
    } else {
      dnnl::reorder::primitive_desc pd(eng, user, eng, prim, attr);
      a.to_prim = dnnl::reorder(pd);
      a.reorder_scratch = pd.scratchpad_desc();
    }
  }
  plan.args.push_back(std::move(a));
}

bool fast_impl(const char* impl) {
  return std::strncmp(impl, "ref", 3) != 0;
}

std::shared_ptr<Plan> build(Pass pass, ScalarType dtype, const ConvGeometry& g, bool bias) {
  auto plan = std::make_shared<Plan>();
  using tag = dnnl::memory::format_tag;
  const auto dt = dnnl_type(dtype);
  const Descs d = make_dims(g);
  auto& eng = cpu_engine();
  const dnnl::memory::desc src_user(d.src, dt, tag::nchw), dst_user(d.dst, dt, tag::nchw),
      wei_user(d.wei, dt, d.wei_tag), bias_user(d.bias, dt, tag::x);
  const dnnl::memory::desc src_any(d.src, dt, tag::any), dst_any(d.dst, dt, tag::any),
      wei_any(d.wei, dt, tag::any);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  try {
    // Backward passes need the forward primitive as a hint, with the same `any` layouts.
    dnnl::convolution_forward::primitive_desc fwd(
        eng, dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, src_any,
        wei_any, bias ? bias_user : dnnl::memory::desc(), dst_any, d.strides, d.dil, d.pad_l,
        d.pad_r, attr);
    if (pass == Pass::kForward) {
      if (!fast_impl(fwd.impl_info_str())) return plan;
      plan->prim = dnnl::convolution_forward(fwd);
      plan->scratch = fwd.scratchpad_desc();
      add_arg(*plan, DNNL_ARG_SRC, false, src_user, fwd.src_desc());
      add_arg(*plan, DNNL_ARG_WEIGHTS, false, wei_user, fwd.weights_desc());
      if (bias) add_arg(*plan, DNNL_ARG_BIAS, false, bias_user, fwd.bias_desc());
      add_arg(*plan, DNNL_ARG_DST, true, dst_user, fwd.dst_desc());
    } else if (pass == Pass::kBackwardData) {
      dnnl::convolution_backward_data::primitive_desc bwd(eng, dnnl::algorithm::convolution_direct,
                                                          src_any, wei_any, dst_any, d.strides,
                                                          d.dil, d.pad_l, d.pad_r, fwd, attr);
      if (!fast_impl(bwd.impl_info_str())) return plan;
      plan->prim = dnnl::convolution_backward_data(bwd);
      plan->scratch = bwd.scratchpad_desc();
      add_arg(*plan, DNNL_ARG_DIFF_DST, false, dst_user, bwd.diff_dst_desc());
      add_arg(*plan, DNNL_ARG_WEIGHTS, false, wei_user, bwd.weights_desc());
      add_arg(*plan, DNNL_ARG_DIFF_SRC, true, src_user, bwd.diff_src_desc());
    } else {
      dnnl::convolution_backward_weights::primitive_desc bwd(
          eng, dnnl::algorithm::convolution_direct, src_any, wei_any,
          bias ? bias_user : dnnl::memory::desc(), dst_any, d.strides, d.dil, d.pad_l, d.pad_r, fwd,
          attr);
      if (!fast_impl(bwd.impl_info_str())) return plan;
      plan->prim = dnnl::convolution_backward_weights(bwd);
      plan->scratch = bwd.scratchpad_desc();
      add_arg(*plan, DNNL_ARG_DIFF_DST, false, dst_user, bwd.diff_dst_desc());
      add_arg(*plan, DNNL_ARG_SRC, false, src_user, bwd.src_desc());
      add_arg(*plan, DNNL_ARG_DIFF_WEIGHTS, true, wei_user, bwd.diff_weights_desc());
      if (bias) add_arg(*plan, DNNL_ARG_DIFF_BIAS, true, bias_user, bwd.diff_bias_desc());
    }
    plan->ok = true;
  } catch (const dnnl::error&) {
    plan->ok = false;
  }
  return plan;
}

// Per-thread, grow-only, 64-byte aligned buffers: slot i holds the reordered copy of one
// argument (or the scratchpad) while a primitive runs on this thread.
void* thread_buffer(size_t slot, size_t bytes) {
  thread_local std::vector<std::vector<char>> buffers;
  if (buffers.size() <= slot) buffers.resize(slot + 1);
  auto& b = buffers[slot];
  if (b.size() < bytes + 64) b.resize(bytes + 64);
  return reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(b.data()) + 63) & ~uintptr_t(63));
}

void run_reorder(const dnnl::reorder& r, const dnnl::memory::desc& scratch, dnnl::stream& stream,
                 const dnnl::memory& from, const dnnl::memory& to, size_t scratch_slot) {
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  const size_t bytes = scratch.get_size();
  if (bytes > 0) {
    args.emplace(DNNL_ARG_SCRATCHPAD,
                 dnnl::memory(scratch, cpu_engine(), thread_buffer(scratch_slot, bytes)));
  }
  r.execute(stream, args);
}

dnnl::stream& thread_stream() {
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

// Buffer slots past any plan's own (one per argument, its scratchpad, its reorders').
constexpr size_t kSharedSlot = 32, kSharedReorderSlot = 33;

// Runs the plan on the user's plain buffers (in the order the plan's args were added).
// Buffer slots: one per argument, then the primitive's scratchpad, then the reorders'.
// `prelaid`: the index of an input whose buffer is already in the primitive's layout.
void execute(const Plan& plan, const std::vector<void*>& user_data, int prelaid = -1) {
  auto& eng = cpu_engine();
  dnnl::stream& stream = thread_stream();
  const size_t reorder_slot = plan.args.size() + 1;
  std::unordered_map<int, dnnl::memory> args;
  std::vector<std::pair<const PlanArg*, dnnl::memory>> pending_outputs;
  for (size_t i = 0; i < plan.args.size(); ++i) {
    const PlanArg& a = plan.args[i];
    if (static_cast<int>(i) == prelaid) {
      args.emplace(a.arg, dnnl::memory(a.prim, eng, user_data[i]));
      continue;
    }
    dnnl::memory user(a.user, eng, user_data[i]);
    if (!a.reorder) {
      args.emplace(a.arg, user);
      continue;
    }
    dnnl::memory prim(a.prim, eng, thread_buffer(i, a.prim.get_size()));
    if (!a.output) run_reorder(a.to_prim, a.reorder_scratch, stream, user, prim, reorder_slot);
    if (a.output) pending_outputs.emplace_back(&a, user);
    args.emplace(a.arg, prim);
  }
  const size_t scratch_bytes = plan.scratch.get_size();
  if (scratch_bytes > 0) {
    args.emplace(DNNL_ARG_SCRATCHPAD,
                 dnnl::memory(plan.scratch, eng, thread_buffer(plan.args.size(), scratch_bytes)));
  }
  plan.prim.execute(stream, args);
  for (auto& [a, user] : pending_outputs) {
    run_reorder(a->to_user, a->reorder_scratch, stream, args.at(a->arg), user, reorder_slot);
  }
  stream.wait();
}

// `one_thread`: the plan of a OneThreadScope (the caller holds the scope while it builds and
// runs the plan).
std::shared_ptr<Plan> plan_for(Pass pass, ScalarType dtype, const ConvGeometry& g, bool bias,
                               bool one_thread = false) {
  return cache().get(make_key(pass, dtype, g, bias, one_thread),
                     [&] { return build(pass, dtype, g, bias); });
}

bool onednn_forward(const ConvGeometry& g, const Tensor& input, const Tensor& weight,
                    const Tensor& bias, const Tensor& output) {
  if (!supported(input.dtype())) return false;
  auto plan = plan_for(Pass::kForward, input.dtype(), g, bias.defined());
  if (!plan->ok) return false;
  std::vector<void*> data{input.data_ptr(), weight.data_ptr()};
  if (bias.defined()) data.push_back(bias.data_ptr());
  data.push_back(output.data_ptr());
  execute(*plan, data);
  return true;
}

bool onednn_backward_data(const ConvGeometry& g, const Tensor& grad_output, const Tensor& weight,
                          const Tensor& grad_input) {
  if (!supported(grad_output.dtype())) return false;
  auto plan = plan_for(Pass::kBackwardData, grad_output.dtype(), g, false);
  if (!plan->ok) return false;
  execute(*plan, {grad_output.data_ptr(), weight.data_ptr(), grad_input.data_ptr()});
  return true;
}

bool onednn_backward_weights(const ConvGeometry& g, const Tensor& grad_output, const Tensor& input,
                             const Tensor& grad_weight, const Tensor& grad_bias) {
  if (!supported(grad_output.dtype())) return false;
  const bool one_thread = deterministic_algorithms();
  OneThreadScope scope(one_thread);
  auto plan =
      plan_for(Pass::kBackwardWeights, grad_output.dtype(), g, grad_bias.defined(), one_thread);
  if (!plan->ok) return false;
  std::vector<void*> data{grad_output.data_ptr(), input.data_ptr(), grad_weight.data_ptr()};
  if (grad_bias.defined()) data.push_back(grad_bias.data_ptr());
  execute(*plan, data);
  return true;
}

}  // namespace

// Both backward passes: grad_output, reordered once when both primitives want it in the same
// blocked layout (it is the largest argument of each).
bool onednn_backward(const ConvGeometry& g, const Tensor& grad_output, const Tensor& input,
                     const Tensor& weight, const Tensor& grad_input, const Tensor& grad_weight,
                     const Tensor& grad_bias) {
  const ScalarType t = grad_output.dtype();
  if (!supported(t)) return false;
  if (deterministic_algorithms()) {
    // The two passes on their own threads each (Note [Deterministic Algorithms]).
    auto pd = plan_for(Pass::kBackwardData, t, g, false);
    if (!pd->ok) return false;
    {
      OneThreadScope scope(true);
      if (!plan_for(Pass::kBackwardWeights, t, g, grad_bias.defined(), true)->ok) return false;
    }
    onednn_backward_data(g, grad_output, weight, grad_input);
    onednn_backward_weights(g, grad_output, input, grad_weight, grad_bias);
    return true;
  }
  auto pd = plan_for(Pass::kBackwardData, t, g, false);
  auto pw = plan_for(Pass::kBackwardWeights, t, g, grad_bias.defined());
  if (!pd->ok || !pw->ok) return false;
  std::vector<void*> data_d{grad_output.data_ptr(), weight.data_ptr(), grad_input.data_ptr()};
  std::vector<void*> data_w{grad_output.data_ptr(), input.data_ptr(), grad_weight.data_ptr()};
  if (grad_bias.defined()) data_w.push_back(grad_bias.data_ptr());
  const PlanArg& ad = pd->args[0];  // DNNL_ARG_DIFF_DST in both plans
  const PlanArg& aw = pw->args[0];
  if (ad.reorder && aw.reorder && ad.prim == aw.prim) {
    auto& eng = cpu_engine();
    void* shared = thread_buffer(kSharedSlot, ad.prim.get_size());
    run_reorder(ad.to_prim, ad.reorder_scratch, thread_stream(),
                dnnl::memory(ad.user, eng, grad_output.data_ptr()),
                dnnl::memory(ad.prim, eng, shared), kSharedReorderSlot);
    data_d[0] = data_w[0] = shared;
    execute(*pd, data_d, 0);
    execute(*pw, data_w, 0);
    return true;
  }
  execute(*pd, data_d);
  execute(*pw, data_w);
  return true;
}

EMBER_REGISTER_KERNEL(conv_fast_forward_stub, CPU, onednn_forward);
EMBER_REGISTER_KERNEL(conv_fast_backward_stub, CPU, onednn_backward);
EMBER_REGISTER_KERNEL(conv_fast_backward_data_stub, CPU, onednn_backward_data);
EMBER_REGISTER_KERNEL(conv_fast_backward_weights_stub, CPU, onednn_backward_weights);

}  // namespace native
}  // namespace ember
