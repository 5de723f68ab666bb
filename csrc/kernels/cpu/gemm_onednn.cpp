// float32 / bfloat16 / float16 GEMM through oneDNN's matmul primitive.
//
// Note [oneDNN primitive cache]: creating a matmul primitive costs far more than running a
// small one, so primitives are cached by everything that shapes them: dtype, batch/m/n/k, the
// three matrices' strides, the thread count, whether alpha is applied (as a runtime weights scale,
// so its value is not part of the key) and beta (baked into the sum post-op). Scratch memory is per
// thread (see below), so concurrent callers may share a primitive. A fused epilogue (bias,
// activation, residual: the transformer fastpath) is part of the key too. oneDNN runs on the same
// OpenMP runtime (libgomp) as Ember's parallel_for, so set_num_threads governs it too.
#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <cstring>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/cpu_capability.h"
#include "core/parallel.h"
#include "kernels/cpu/gemm_cpu.h"
#include "kernels/cpu/onednn_isa.h"

namespace ember {
namespace native {
namespace {

struct Key {
  int64_t v[20];
  bool operator==(const Key& o) const { return std::memcmp(v, o.v, sizeof(v)) == 0; }
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = 1469598103934665603ull;
    for (int64_t x : k.v) h = (h ^ static_cast<size_t>(x)) * 1099511628211ull;
    return h;
  }
};

struct Entry {
  dnnl::matmul prim;
  dnnl::memory::desc a, b, c, scratch, bias, residual;
  int residual_post_op = -1;  // the index of the residual's binary-add post-op
  bool fast = false;          // false: oneDNN picked its reference implementation; do not use
  // > 0: B is copied into a buffer with this row stride before the call (Note [Padded B rows]).
  int64_t padded_b_row_stride = 0;
};

// Note [Padded B rows]
// oneDNN's f32 GEMM below AVX-512 (`gemm:jit`, the avx2 kernels; AVX-512 takes the brgemm
// matmul) runs a 512 x 512 product at 60% of its usual speed when B's rows are 2 KiB apart: 3.9
// ms instead of 2.5 on one Zen 4 core forced to AVX2, and 1.4x PyTorch's time. With B's rows 16
// floats further apart it runs at full speed, and the copy costs 2% of the product. So for
// row-major f32 B of at least 256 KiB whose row stride is an odd multiple of 2 KiB (cache-set
// aliasing between B's rows; 4 KiB multiples, as at 1024, measured fine), the primitive is built
// for a padded B and each call copies B into a per-thread buffer first. On two threads the same
// product went from 1.9 to 1.2 ms (and was 1.4x PyTorch's time in bench_cpu_levels.py).
//
// On Intel cores the AVX-512 brgemm matmul has the opposite trouble: it reads a row-major B in
// place, and once B is a few MiB (past L2) it runs at 33-80 GFLOP/s on a Cascade Lake core, where
// the same product with B's rows padded, which makes oneDNN pick its gemm:jit kernel (it packs B
// itself), runs at 100-130 GFLOP/s with the copy included: 2048^3 went from 67 to 125 GFLOP/s,
// an LM head's backward (4096 x 8192 @ 8192 x 256) from 59 to 103, a BERT feed-forward shape
// (1024 x 768 @ 768 x 3072) from 45 to 116. Below 3 MiB, and for B narrower than 256 columns,
// brgemm stayed ahead (0.63-0.85 at 64 columns), and so it did with a transposed A (a weight
// gradient, X^T G: 57-60 GFLOP/s padded against 88-110). On Zen 4 brgemm already matched PyTorch on
// such products (matmul f32 2048: 0.85x), so the rule is kept to Intel cores, where it was
// measured.
bool wants_padded_b(const GemmParams& p, const std::string& impl) {
  if (p.dtype != ScalarType::Float32 || p.batch != 1 || p.b.col_stride != 1) return false;
  const int64_t b_bytes = p.k * p.n * 4;
  if (impl.rfind("brg:avx512_core", 0) == 0) {
    return cpu_is_intel() && p.a.col_stride == 1 && p.n >= 256 && b_bytes >= (3 << 20);
  }
  if (impl.rfind("gemm:jit", 0) != 0) return false;
  const int64_t row_bytes = p.b.row_stride * 4;
  return row_bytes % 4096 == 2048 && b_bytes >= (256 << 10);
}

dnnl::engine& cpu_engine() {
  limit_onednn_isa_to_cpu_capability();
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

class PrimitiveCache {
 public:
  static constexpr size_t kCapacity = 512;
  // Returns the entry for key, building it with make() on a miss (LRU eviction).
  template <typename Make>
  std::shared_ptr<Entry> get(const Key& key, Make make) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = map_.find(key);
      if (it != map_.end()) {
        lru_.splice(lru_.begin(), lru_, it->second.second);
        return it->second.first;
      }
    }
    std::shared_ptr<Entry> e = make();  // built outside the lock: creation may take a while
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it != map_.end()) return it->second.first;
    lru_.push_front(key);
    map_.emplace(key, std::make_pair(e, lru_.begin()));
    if (map_.size() > kCapacity) {
      map_.erase(lru_.back());
      lru_.pop_back();
    }
    return e;
  }

 private:
  std::mutex mu_;
  std::list<Key> lru_;
  std::unordered_map<Key, std::pair<std::shared_ptr<Entry>, std::list<Key>::iterator>, KeyHash>
      map_;
};

PrimitiveCache& cache() {
  static PrimitiveCache c;
  return c;
}

dnnl::memory::data_type dnnl_type(ScalarType t) {
  switch (t) {
    case ScalarType::Float32:
      return dnnl::memory::data_type::f32;
    case ScalarType::BFloat16:
      return dnnl::memory::data_type::bf16;
    default:
      return dnnl::memory::data_type::f16;
  }
}

dnnl::memory::desc matrix_desc(int64_t batch, int64_t rows, int64_t cols, const GemmMatrix& g,
                               dnnl::memory::data_type dt) {
  // A broadcast batch is a batch dim of size 1, which oneDNN broadcasts itself.
  const int64_t b = g.batch_stride == 0 ? 1 : batch;
  const int64_t bs = g.batch_stride == 0 ? rows * cols : g.batch_stride;
  if (batch == 1) return dnnl::memory::desc({rows, cols}, dt, {g.row_stride, g.col_stride});
  return dnnl::memory::desc({b, rows, cols}, dt, {bs, g.row_stride, g.col_stride});
}

// Note [Tiny products on one thread]: oneDNN splits even a 128 x 1 x 4 product over the whole
// OpenMP team. Each call then pays a fork/join, and on a busy machine (more runnable threads than
// cores) waking the second thread took milliseconds: the backward of a small policy network
// (pytorch/examples' actor-critic example, a 4-128-2 MLP over a few hundred steps) spent 170 ms
// per episode in such joins against 2 ms on one thread. Products of at most kSerialWork
// multiply-adds (a few microseconds of work) run on the calling thread, as PyTorch's BLAS does.
constexpr int64_t kSerialWork = int64_t(1) << 16;

// Sets the calling thread's OpenMP team size to 1 for its lifetime (oneDNN reads it both when a
// primitive is created and when it runs), restoring the previous size after.
class SerialScope {
 public:
  explicit SerialScope(bool on) : saved_(on ? omp_get_max_threads() : 1) {
    if (saved_ != 1) omp_set_num_threads(1);
  }
  ~SerialScope() {
    if (saved_ != 1) omp_set_num_threads(saved_);
  }
  SerialScope(const SerialScope&) = delete;
  SerialScope& operator=(const SerialScope&) = delete;

 private:
  int saved_;
};

}  // namespace

bool onednn_gemm(const GemmParams& p, const GemmEpilogue* epilogue) {
  const GemmEpilogue none;
  const GemmEpilogue& ep = epilogue ? *epilogue : none;
  const float alpha = static_cast<float>(p.alpha.to_double());
  const float beta = static_cast<float>(p.beta.to_double());
  const bool use_alpha = alpha != 1.0f;
  Key key;
  int64_t* v = key.v;
  v[0] = static_cast<int64_t>(p.dtype);
  v[1] = p.batch;
  v[2] = p.m;
  v[3] = p.n;
  v[4] = p.k;
  v[5] = p.a.batch_stride;
  v[6] = p.a.row_stride;
  v[7] = p.a.col_stride;
  v[8] = p.b.batch_stride;
  v[9] = p.b.row_stride;
  v[10] = p.b.col_stride;
  v[11] = p.c.batch_stride;
  v[12] = p.c.row_stride;
  v[13] = p.c.col_stride;
  v[14] = use_alpha;
  uint32_t beta_bits;
  std::memcpy(&beta_bits, &beta, 4);
  v[15] = beta_bits;
  const int threads = sync_library_threads();
  const bool serial = threads > 1 && p.batch * p.m * p.n * p.k <= kSerialWork;
  SerialScope serial_scope(serial);
  v[16] = serial ? 1 : threads;  // a primitive keeps the partitioning it was created with
  v[17] = ep.bias != nullptr;
  v[18] = static_cast<int64_t>(ep.activation);
  v[19] = ep.residual ? ep.residual_row_stride : -1;
  auto entry = cache().get(key, [&] {
    auto e = std::make_shared<Entry>();
    const auto dt = dnnl_type(p.dtype);
    e->a = matrix_desc(p.batch, p.m, p.k, p.a, dt);
    e->b = matrix_desc(p.batch, p.k, p.n, p.b, dt);
    e->c = matrix_desc(p.batch, p.m, p.n, p.c, dt);
    dnnl::primitive_attr attr;
    // The caller supplies scratch memory (per thread), which makes one cached primitive safe to
    // run from several threads at once; a library-owned scratchpad is shared and is not.
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (use_alpha) attr.set_scales_mask(DNNL_ARG_WEIGHTS, 0);
    dnnl::post_ops po;
    if (beta != 0.0f) po.append_sum(beta);
    if (ep.activation == GemmActivation::Relu) {
      po.append_eltwise(dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    } else if (ep.activation == GemmActivation::Gelu) {
      po.append_eltwise(dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
    }
    if (ep.residual) {
      e->residual = dnnl::memory::desc({p.m, p.n}, dt, {ep.residual_row_stride, 1});
      e->residual_post_op = po.len();
      po.append_binary(dnnl::algorithm::binary_add, e->residual);
    }
    if (po.len() > 0) attr.set_post_ops(po);
    if (ep.bias) e->bias = dnnl::memory::desc({1, p.n}, dt, {p.n, 1});
    auto make_pd = [&] {
      return ep.bias ? dnnl::matmul::primitive_desc(cpu_engine(), e->a, e->b, e->bias, e->c, attr)
                     : dnnl::matmul::primitive_desc(cpu_engine(), e->a, e->b, e->c, attr);
    };
    try {
      dnnl::matmul::primitive_desc pd = make_pd();
      const std::string impl = pd.impl_info_str();
      e->fast = impl.rfind("ref", 0) != 0;
      if (e->fast && wants_padded_b(p, impl)) {
        GemmMatrix padded = p.b;
        padded.row_stride = p.b.row_stride + 16;
        e->b = matrix_desc(p.batch, p.k, p.n, padded, dt);
        pd = make_pd();
        e->padded_b_row_stride = padded.row_stride;
      }
      if (e->fast) {
        e->prim = dnnl::matmul(pd);
        e->scratch = pd.scratchpad_desc();
      }
    } catch (const dnnl::error&) {
      e->fast = false;
    }
    return e;
  });
  if (!entry->fast) return false;
  thread_local dnnl::stream stream(cpu_engine());
  auto& eng = cpu_engine();
  void* b_data = p.b.data;
  // A thread keeps its copy buffer for the next call, up to 64 MiB; a larger B gets a buffer of
  // its own, freed after the call, so that one huge product does not pin its size per thread.
  std::vector<float> large_padded_b;
  if (entry->padded_b_row_stride > 0) {
    thread_local std::vector<float> padded_b;
    const int64_t ld = entry->padded_b_row_stride;
    const size_t elements = static_cast<size_t>(p.k * ld);
    std::vector<float>& buffer =
        elements * sizeof(float) <= (size_t(64) << 20) ? padded_b : large_padded_b;
    if (buffer.size() < elements) buffer.resize(elements);
    const float* src = static_cast<const float*>(p.b.data);
    for (int64_t r = 0; r < p.k; ++r) {
      std::memcpy(buffer.data() + r * ld, src + r * p.b.row_stride, p.n * sizeof(float));
    }
    b_data = buffer.data();
  }
  dnnl::memory ma(entry->a, eng, p.a.data), mb(entry->b, eng, b_data), mc(entry->c, eng, p.c.data);
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}};
  if (ep.bias)
    args.emplace(DNNL_ARG_BIAS, dnnl::memory(entry->bias, eng, const_cast<void*>(ep.bias)));
  if (ep.residual) {
    args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(entry->residual_post_op) | DNNL_ARG_SRC_1,
                 dnnl::memory(entry->residual, eng, const_cast<void*>(ep.residual)));
  }
  const size_t scratch_bytes = entry->scratch.get_size();
  if (scratch_bytes > 0) {
    thread_local std::vector<char> scratch;
    if (scratch.size() < scratch_bytes + 64) scratch.resize(scratch_bytes + 64);
    void* aligned = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(scratch.data()) + 63) &
                                            ~uintptr_t(63));
    args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(entry->scratch, eng, aligned));
  }
  float alpha_value = alpha;
  if (use_alpha) {
    dnnl::memory::desc sd({1}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::x);
    args.emplace(DNNL_ARG_ATTR_SCALES | DNNL_ARG_WEIGHTS, dnnl::memory(sd, eng, &alpha_value));
  }
  entry->prim.execute(stream, args);
  stream.wait();
  return true;
}

}  // namespace native
}  // namespace ember
