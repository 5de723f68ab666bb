// gemm_stub and dot_stub on CPU: the dtype decides the back end (see gemm_cpu.h).
#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/gemm_cpu.h"
#include "kernels/cpu/wrap_acc.h"

namespace ember {
namespace native {
namespace {

void gemm_kernel(const GemmParams& p) {
  switch (p.dtype) {
    case ScalarType::Float32:
    case ScalarType::BFloat16:
    case ScalarType::Float16:
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
EMBER_REGISTER_KERNEL(dot_stub, CPU, dot_kernel);

}  // namespace native
}  // namespace ember
