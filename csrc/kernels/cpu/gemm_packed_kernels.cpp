// packed_sgemm_stub (kernels/gemm_stubs.h): float32 GEMMs through Ember's own register-blocked
// AVX-512 kernel (gemm_packed_f32.h), with the fastpath's epilogue, for the shapes where it was
// measured faster than oneDNN on an Intel core. Below the avx512 level it declines every product.
//
// Note [A packed float32 GEMM for wide products]: on a Cascade Lake core (Intel Xeon @ 2.50GHz,
// 152 GFLOP/s fp32 peak per core) oneDNN's brgemm ran a BERT-base feed-forward Linear (1024 x 768
// @ 768 x 3072) at 111-117 GFLOP/s and PyTorch's MKL at 120-126, which left Ember's dense encoder
// at 0.93-0.99x PyTorch's. benchmarks/bench_gemm_engines.py, in one process, alternating with the
// kernel switched off, on Ember-allocated (64-byte aligned) operands, one thread (this kernel's
// time over the other engine's):
//   - forward Linears X W^T + bias with k = 768 and n = 2304 / 3072 (BERT's qkv and first
//     feed-forward, m = 512 or 1024): 0.94-0.97, at 114-121 GFLOP/s; at m = 128, 0.98; an LM
//     head (k = 256, n = 8192, m = 4096): 0.89-0.91;
//   - but n = 768 or 1024 about even (0.99-1.02) and k = 3072 (BERT's second feed-forward) even
//     at every blocking tried: oneDNN keeps those;
//   - input gradients G W with n = 256 and k >= 2048 (m = 4096): 0.92-0.93 against OpenBLAS; at
//     k = 768 / 1024 1.12-1.18 and at n = 512 1.06, where oneDNN's brgemm reads row-major A
//     without the transposing copy this kernel makes;
//   - weight gradients G^T X: never ahead of OpenBLAS / oneDNN (0.95-1.13): not routed.
// With two threads the m = 1024 products were even, the m = 4096 ones 0.94-0.95. The kernel's
// speed comes from k up to 1024 in one block (each C element written once, with its bias,
// instead of read back per k block: 15% of the time with blocks of 256) and from bringing the
// next row panel of packed A in from L3 while the current one runs (5-10%). The rule in
// `applies` keeps to those wins. AMD cores keep oneDNN: unmeasured there.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <new>

#include "core/cpu_capability.h"
#include "core/parallel.h"
#include "kernels/cpu/cpu_level.h"
#include "kernels/gemm_stubs.h"

#if EMBER_CPU_LEVEL >= 2
#include "kernels/cpu/gemm_packed_f32.h"
#include "kernels/cpu/nn/activation_math.h"
#endif

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

#if EMBER_CPU_LEVEL >= 2
using packed_f32::Blocking;
using packed_f32::Operand;

enum class Layout { NT, NN, Other };

// A and B as the product sees them: NT a Linear's forward (A row-major, B = W^T), NN an input
// gradient (both row-major).
Layout layout_of(const GemmParams& p) {
  const bool a_rows = p.a.col_stride == 1;
  const bool b_rows = p.b.col_stride == 1, b_cols = p.b.row_stride == 1;
  if (a_rows && b_cols && !b_rows) return Layout::NT;
  if (a_rows && b_rows) return Layout::NN;
  return Layout::Other;
}

// Note [A packed float32 GEMM for wide products]: where this kernel beat Ember's other engines.
bool applies(const GemmParams& p, Layout layout) {
  const int64_t m = p.m, n = p.n, k = p.k;
  switch (layout) {
    case Layout::NT:
      // With two threads the BERT-sized products (m = 1024) came out even with oneDNN; the
      // larger ones (m = 4096) still 5-10% ahead.
      return m >= (get_num_threads() > 1 ? 2048 : 128) && k >= 256 && k <= 1024 && n >= 2048;
    case Layout::NN:
      // Measured at n = 256 (an LM's input gradients into d_model 256); 5% behind at n = 512.
      return m >= 2048 && n >= 192 && n <= 320 && k >= 2048;
    default:
      return false;
  }
}

// The activation and residual of the epilogue, over C's rows [i0, i0 + rows) x [j0, j0 + cols)
// after their last k block (the bias went in with the first).
void finish_tile(const GemmParams& p, const GemmEpilogue& e, int64_t i0, int64_t rows, int64_t j0,
                 int64_t cols) {
  using V = vec::Vec<float>;
  float* c = static_cast<float*>(p.c.data);
  const float* res = static_cast<const float*>(e.residual);
  for (int64_t i = i0; i < i0 + rows; ++i) {
    float* row = c + i * p.c.row_stride;
    const float* res_row = res ? res + i * e.residual_row_stride : nullptr;
    for (int64_t j = j0; j < j0 + cols; j += V::size) {
      const int64_t width = std::min<int64_t>(V::size, j0 + cols - j);
      V x = V::load_n(row + j, width);
      if (e.activation == GemmActivation::Relu) {
        x = select(x <= V(0.0f), V(0.0f), x);  // NaN <= 0 is false: relu keeps NaN
      } else if (e.activation == GemmActivation::Gelu) {
        x = act_math::gelu(x);
      }
      if (res_row) x = x + V::load_n(res_row + j, width);
      x.store_n(row + j, width);
    }
  }
}

// Each thread's packing scratch, kept between calls (grown, never shrunk: at most a few MB per
// thread, see choose_blocking) so that a call does not page-fault fresh buffers in.
float* thread_scratch(size_t floats) {
  struct Buffer {
    std::unique_ptr<float, void (*)(void*)> data{nullptr, &std::free};
    size_t floats = 0;
  };
  thread_local Buffer buffer;
  if (buffer.floats < floats) {
    const size_t bytes = (floats * sizeof(float) + 63) / 64 * 64;
    void* raw = std::aligned_alloc(64, bytes);
    if (raw == nullptr) throw std::bad_alloc();
    buffer.data.reset(static_cast<float*>(raw));
    buffer.floats = floats;
  }
  return buffer.data.get();
}

void run(const GemmParams& p, const GemmEpilogue* e) {
  const Operand a{static_cast<const float*>(p.a.data), p.a.row_stride, p.a.col_stride};
  const Operand b{static_cast<const float*>(p.b.data), p.b.row_stride, p.b.col_stride};
  float* c = static_cast<float*>(p.c.data);
  const float* bias = e ? static_cast<const float*>(e->bias) : nullptr;
  const bool finish = e && (e->activation != GemmActivation::None || e->residual != nullptr);
  const bool accumulate = p.beta.to_double() != 0.0;
  const Blocking blk = packed_f32::choose_blocking(p.m, p.k);
  // Threads split C's columns (each packs all of A, its own part of B) or its rows (each packs
  // all of B): whichever repeats the smaller operand's packing. Every element is summed in the
  // same order either way.
  const int64_t threads = std::max(1, get_num_threads());
  const bool split_columns = p.m <= p.n;
  const int64_t unit = split_columns ? packed_f32::kNr : packed_f32::kMr;
  const int64_t units = ((split_columns ? p.n : p.m) + unit - 1) / unit;
  const int64_t parts = std::min<int64_t>(threads, units);
  parallel_for(0, parts, 1, [&](int64_t part0, int64_t part1) {
    float* scratch = thread_scratch(packed_f32::scratch_floats(blk));
    for (int64_t part = part0; part < part1; ++part) {
      const int64_t lo = std::min(units * part / parts * unit, split_columns ? p.n : p.m);
      const int64_t hi = std::min(units * (part + 1) / parts * unit, split_columns ? p.n : p.m);
      const int64_t i0 = split_columns ? 0 : lo, i1 = split_columns ? p.m : hi;
      const int64_t j0 = split_columns ? lo : 0, j1 = split_columns ? hi : p.n;
      auto done = [&](int64_t row, int64_t col, int64_t rows, int64_t cols) {
        if (finish) finish_tile(p, *e, row, rows, col, cols);
      };
      packed_f32::gemm_range(a, b, c, p.c.row_stride, p.k, bias, accumulate, blk, i0, i1, j0, j1,
                             scratch, done);
    }
  });
}
#endif

bool packed_sgemm(const GemmParams& p, const GemmEpilogue* e) {
#if EMBER_CPU_LEVEL >= 2
  if (p.dtype != ScalarType::Float32 || p.batch != 1 || p.c.col_stride != 1) return false;
  // beta 1 is addmm's (a Linear's bias, broadcast into C first).
  const double beta = p.beta.to_double();
  if (p.alpha.to_double() != 1.0 || (beta != 0.0 && beta != 1.0)) return false;
  const PackedSgemmMode mode = packed_sgemm_mode();
  if (mode == PackedSgemmMode::Off) return false;
  const Layout layout = layout_of(p);
  if (layout == Layout::Other) return false;
  if (mode == PackedSgemmMode::Auto && (!cpu_is_intel() || !applies(p, layout))) return false;
  run(p, e);
  return true;
#else
  (void)p;
  (void)e;
  return false;
#endif
}

}  // namespace

EMBER_REGISTER_KERNEL(packed_sgemm_stub, CPU, packed_sgemm);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
