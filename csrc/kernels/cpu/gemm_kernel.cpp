// gemm_stub and dot_stub on CPU: the dtype decides the back end (see gemm_cpu.h).
#include <atomic>
#include <cmath>
#include <vector>

#include "core/cpu_capability.h"
#include "core/parallel.h"
#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/gemm_cpu.h"
#include "kernels/cpu/wrap_acc.h"

namespace ember {
namespace native {

namespace {
std::atomic<PackedSgemmMode> packed_mode{PackedSgemmMode::Auto};
}  // namespace
PackedSgemmMode packed_sgemm_mode() {
  return packed_mode.load(std::memory_order_relaxed);
}
void set_packed_sgemm_mode(PackedSgemmMode mode) {
  packed_mode.store(mode);
}

namespace {

// Note [16-bit GEMM without 16-bit dot products]: where the CPU has no bfloat16 dot product
// instruction (below avx512_vnni_bf16), and for float16 (no CPU level of Ember has float16
// arithmetic), oneDNN's own 16-bit kernels convert inside the inner loop and ran at a fifth of the
// float32 speed (21 against 108 GFLOP/s at 1024 on an AVX2 level; PyTorch's at 1). Converting the
// operands to float32 once, O(mk + kn + mn) work, and running the float32 GEMM gives the float32
// speed with the same result: bfloat16 and float16 products are exact in float32, and oneDNN
// accumulates the 16-bit kernels in float32 too.

// The `rows` x `cols` matrices of x (batch of them, or one when its batch stride is 0) as
// contiguous row-major float32.
template <typename T>
std::vector<float> widen(const GemmMatrix& x, int64_t batch, int64_t rows, int64_t cols) {
  const int64_t nb = x.batch_stride == 0 ? 1 : batch;
  std::vector<float> out(static_cast<size_t>(nb * rows * cols));
  const T* src = static_cast<const T*>(x.data);
  parallel_for(0, nb * rows, std::max<int64_t>(1, kGrainSize / cols), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t b = r / rows, i = r % rows;
      const T* row = src + b * x.batch_stride + i * x.row_stride;
      float* dst = out.data() + r * cols;
      for (int64_t j = 0; j < cols; ++j) dst[j] = static_cast<float>(row[j * x.col_stride]);
    }
  });
  return out;
}

template <typename T>
void gemm_through_float32(const GemmParams& p) {
  std::vector<float> a = widen<T>(p.a, p.batch, p.m, p.k);
  std::vector<float> b = widen<T>(p.b, p.batch, p.k, p.n);
  const bool read_c = p.beta.to_double() != 0.0;
  std::vector<float> c = read_c ? widen<T>(p.c, p.batch, p.m, p.n)
                                : std::vector<float>(static_cast<size_t>(p.batch * p.m * p.n));
  GemmParams f = p;
  f.dtype = ScalarType::Float32;
  f.a = {a.data(), p.a.batch_stride == 0 ? 0 : p.m * p.k, p.k, 1};
  f.b = {b.data(), p.b.batch_stride == 0 ? 0 : p.k * p.n, p.n, 1};
  f.c = {c.data(), p.m * p.n, p.n, 1};
  if (!onednn_gemm(f)) blocked_gemm(f);
  T* dst = static_cast<T*>(p.c.data);
  parallel_for(0, p.batch * p.m, std::max<int64_t>(1, kGrainSize / p.n),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r) {
                   const int64_t bi = r / p.m, i = r % p.m;
                   T* row = dst + bi * p.c.batch_stride + i * p.c.row_stride;
                   const float* from = c.data() + r * p.n;
                   for (int64_t j = 0; j < p.n; ++j) row[j * p.c.col_stride] = T(from[j]);
                 }
               });
}

// A float32 matrix-vector product (m == 1 or n == 1, the matrix operand contiguous along k) by
// the CPU level's GEMV kernel; false for other shapes and layouts.
bool float32_gemv(const GemmParams& p) {
  if (p.batch != 1) return false;
  GemvArgs g;
  const float* x = nullptr;
  int64_t incx = 1;
  if (p.m == 1 && p.b.row_stride == 1) {  // x (1 x k) @ B: B's columns are the rows
    g.a = static_cast<const float*>(p.b.data);
    g.rows = p.n;
    g.lda = p.b.col_stride;
    x = static_cast<const float*>(p.a.data);
    incx = p.a.col_stride;
    g.incy = p.c.col_stride;
  } else if (p.n == 1 && p.a.col_stride == 1) {  // A @ x (k x 1)
    g.a = static_cast<const float*>(p.a.data);
    g.rows = p.m;
    g.lda = p.a.row_stride;
    x = static_cast<const float*>(p.b.data);
    incx = p.b.row_stride;
    g.incy = p.c.row_stride;
  } else {
    return false;
  }
  std::vector<float> packed_x;
  if (incx != 1) {
    packed_x.resize(static_cast<size_t>(p.k));
    for (int64_t e = 0; e < p.k; ++e) packed_x[e] = x[e * incx];
    x = packed_x.data();
  }
  g.k = p.k;
  g.x = x;
  g.y = static_cast<float*>(p.c.data);
  g.alpha = static_cast<float>(p.alpha.to_double());
  g.beta = static_cast<float>(p.beta.to_double());
  gemv_f32_stub(Device(), g);
  return true;
}

void gemm_kernel(const GemmParams& p) {
  switch (p.dtype) {
    case ScalarType::BFloat16:
      if (cpu_capability() < CpuCapability::Avx512VnniBf16)
        return gemm_through_float32<BFloat16>(p);
      if (onednn_gemm(p)) return;
      return blocked_gemm(p);
    case ScalarType::Float16:
      return gemm_through_float32<Half>(p);
    case ScalarType::Float32:
      if (float32_gemv(p)) return;
      if (packed_sgemm_stub(Device(), p, nullptr)) return;
      if (openblas_sgemm(p)) return;
      if (onednn_gemm(p)) return;
      return blocked_gemm(p);
    case ScalarType::Float64:
      if (openblas_gemm(p)) return;
      return eigen_gemm(p);
    case ScalarType::Complex64:
    case ScalarType::Complex128:
      return eigen_gemm(p);
    default:
      return blocked_gemm(p);
  }
}

// The epilogue after a plain GEMM, where oneDNN does not take it (float64, or oneDNN declined).
template <typename T>
void apply_epilogue(const GemmParams& p, const GemmEpilogue& e) {
  const T* bias = static_cast<const T*>(e.bias);
  const T* res = static_cast<const T*>(e.residual);
  parallel_for(0, p.m, std::max<int64_t>(1, kGrainSize / p.n), [&](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i) {
      T* row = static_cast<T*>(p.c.data) + i * p.c.row_stride;
      for (int64_t j = 0; j < p.n; ++j) {
        T x = row[j] + (bias ? bias[j] : T(0));
        if (e.activation == GemmActivation::Relu) {
          x = x > T(0) ? x : (x == x ? T(0) : x);  // relu keeps NaN
        } else if (e.activation == GemmActivation::Gelu) {
          x = T(0.5) * x * std::erfc(-x * T(0.70710678118654752440));
        }
        row[j] = res ? x + res[i * e.residual_row_stride + j] : x;
      }
    }
  });
}

void gemm_epilogue_kernel(const GemmParams& p, const GemmEpilogue& e) {
  EMBER_CHECK(p.batch == 1 && p.c.col_stride == 1 && p.alpha.to_double() == 1.0 &&
                  p.beta.to_double() == 0.0,
              "[gemm_epilogue] expects one matrix, a row-major C, alpha 1 and beta 0");
  const bool plain =
      e.bias == nullptr && e.activation == GemmActivation::None && e.residual == nullptr;
  if (plain) return gemm_kernel(p);
  if (p.dtype == ScalarType::Float32 && packed_sgemm_stub(Device(), p, &e)) return;
  if (p.dtype == ScalarType::Float32 && onednn_gemm(p, &e)) return;
  gemm_kernel(p);
  dispatch_dtype<kFloat32 | kFloat64>(p.dtype, "gemm_epilogue", [&](auto tag) {
    using T = typename decltype(tag)::type;
    apply_epilogue<T>(p, e);
  });
}

template <typename T>
T conj_if(T v, bool conj) {
  if constexpr (is_complex_v<T>)
    return conj ? std::conj(v) : v;
  else
    return v;
}

void dot_kernel(void* out, ScalarType dtype, int64_t n, const void* x, int64_t incx, const void* y,
                int64_t incy, bool conj_x) {
  dispatch_dtype<kNumericTypes>(dtype, "dot", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = wrap_acc_t<T>;
    const T* px = static_cast<const T*>(x);
    const T* py = static_cast<const T*>(y);
    // Eight independent partial sums: vectorisable, and more accurate than one running sum.
    A lanes[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      for (int l = 0; l < 8; ++l) {
        lanes[l] += static_cast<A>(conj_if(px[(i + l) * incx], conj_x)) *
                    static_cast<A>(py[(i + l) * incy]);
      }
    }
    A total = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
              ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
    for (; i < n; ++i) {
      total += static_cast<A>(conj_if(px[i * incx], conj_x)) * static_cast<A>(py[i * incy]);
    }
    *static_cast<T*>(out) = static_cast<T>(total);
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(gemm_stub, CPU, gemm_kernel);
EMBER_REGISTER_KERNEL(gemm_epilogue_stub, CPU, gemm_epilogue_kernel);
EMBER_REGISTER_KERNEL(dot_stub, CPU, dot_kernel);

}  // namespace native
}  // namespace ember
