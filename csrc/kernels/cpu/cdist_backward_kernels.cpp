// The cdist backward kernel (PyTorch's _cdist_backward): for every row i of x1, the sum over the
// rows j of x2 of grad_ij * d(dist_ij)/d(x1_i), in one pass without pairwise temporaries. Rows
// are independent, so they are split between threads.
#include <algorithm>
#include <cmath>

#include "core/parallel.h"
#include "dispatch/dtype_dispatch.h"
#include "kernels/gemm_stubs.h"

namespace ember {
namespace native {
namespace {

template <typename T>
T sign_of(T x) {
  return static_cast<T>((x > T(0)) - (x < T(0)));
}

// The case of PyTorch's formula for this p.
enum class Kind { kOne, kBelowTwo, kTwo, kInf, kGeneral };

struct Params {
  Kind kind;
  double pm1, pm2;  // p - 1, p - 2
  bool below_one;
};

// acc (M) <- sum over the R rows y of x2 of g_j * d(dist_j)/dx for one row x of x1.
template <typename T>
void accumulate_row(T* acc, const T* x, const T* rows, const T* g, const T* d, int64_t R, int64_t M,
                    const Params& pr) {
  const T pm1 = static_cast<T>(pr.pm1), pm2 = static_cast<T>(pr.pm2);
  std::fill(acc, acc + M, T(0));
  for (int64_t j = 0; j < R; ++j) {
    // A zero distance means every difference is zero: no contribution in any case.
    if (d[j] == T(0)) continue;
    const T* y = rows + j * M;
    const T gj = g[j];
    switch (pr.kind) {
      case Kind::kOne:
        for (int64_t q = 0; q < M; ++q) acc[q] += gj * sign_of<T>(x[q] - y[q]);
        break;
      case Kind::kTwo: {
        const T c = gj / d[j];
        for (int64_t q = 0; q < M; ++q) acc[q] += (x[q] - y[q]) * c;
        break;
      }
      case Kind::kInf:
        for (int64_t q = 0; q < M; ++q) {
          const T diff = x[q] - y[q];
          if (std::abs(diff) == d[j]) acc[q] += gj * sign_of<T>(diff);
        }
        break;
      case Kind::kBelowTwo: {
        const T c = gj / std::pow(d[j], pm1);
        for (int64_t q = 0; q < M; ++q) {
          const T diff = x[q] - y[q];
          // Below p = 1 the power of a zero difference is infinite; PyTorch counts it as 0.
          if (pr.below_one && diff == T(0)) continue;
          acc[q] += sign_of<T>(diff) * std::pow(std::abs(diff), pm1) * c;
        }
        break;
      }
      case Kind::kGeneral: {
        const T c = gj / std::pow(d[j], pm1);
        for (int64_t q = 0; q < M; ++q) {
          const T diff = x[q] - y[q];
          acc[q] += diff * std::pow(std::abs(diff), pm2) * c;
        }
        break;
      }
    }
  }
}

template <typename T>
void cdist_backward_t(const Tensor& out, const Tensor& grad, const Tensor& x1, const Tensor& x2,
                      const Tensor& dist, double p) {
  const int64_t P = x1.size(1), R = x2.size(1), M = x1.size(2);
  Params pr;
  pr.kind = p == 1.0        ? Kind::kOne
            : p < 2.0       ? Kind::kBelowTwo
            : p == 2.0      ? Kind::kTwo
            : std::isinf(p) ? Kind::kInf
                            : Kind::kGeneral;
  pr.pm1 = p - 1;
  pr.pm2 = p - 2;
  pr.below_one = p < 1.0;
  const T* a = x1.data<T>();
  const T* b = x2.data<T>();
  const T* g = grad.data<T>();
  const T* d = dist.data<T>();
  T* o = out.data<T>();
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R * M, 1));
  parallel_for(0, x1.size(0) * P, grain, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      accumulate_row<T>(o + r * M, a + r * M, b + (r / P) * R * M, g + r * R, d + r * R, R, M, pr);
    }
  });
}

void cdist_backward_kernel(const Tensor& out, const Tensor& grad, const Tensor& x1,
                           const Tensor& x2, const Tensor& dist, double p) {
  dispatch_dtype<kFloat32 | kFloat64>(out.dtype(), "cdist_backward", [&](auto tag) {
    cdist_backward_t<typename decltype(tag)::type>(out, grad, x1, x2, dist, p);
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(cdist_backward_stub, CPU, cdist_backward_kernel);

}  // namespace native
}  // namespace ember
