// Cholesky (potrf) through Eigen's blocked in-place LLT, which reports the first leading minor
// that is not positive-definite (LAPACK's info).
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/linalg/eigen.h"
#include "kernels/linalg/batch.h"
#include "kernels/linalg/solve_stubs.h"

namespace ember {
namespace native {
namespace linalg {
namespace {

// Right-looking Cholesky of the lower triangle for small matrices, in panels of kPanel columns:
// each panel is factored column by column (scale a column, subtract its outer product from the
// panel's later columns), then the trailing columns receive the whole panel's update at once,
// two columns at a time: every load and store of a trailing column then carries kPanel
// multiply-adds instead of one. All contiguous column loops the compiler vectorizes (Eigen's
// variants work through strided rows, twice slower at 32x32; the unpanelled loop was 1.7x
// slower). Returns the failing leading minor's order (0: success).
template <typename T>
int32_t cholesky_small_lower(T* a, int64_t n, int64_t lda) {
  using R = typename Eigen::NumTraits<T>::Real;
  using Eigen::numext::conj;
  constexpr int64_t kPanel = 8;
  for (int64_t k0 = 0; k0 < n; k0 += kPanel) {
    const int64_t kend = std::min(k0 + kPanel, n);
    for (int64_t k = k0; k < kend; ++k) {
      T* ck = a + k * lda;
      const R d = std::real(ck[k]);
      if (!(d > R(0))) return static_cast<int32_t>(k + 1);  // also catches NaN
      const R s = std::sqrt(d);
      ck[k] = T(s);
      const R inv = R(1) / s;
      for (int64_t i = k + 1; i < n; ++i) ck[i] *= inv;
      for (int64_t j = k + 1; j < kend; ++j) {
        T* cj = a + j * lda;
        const T f = conj(ck[j]);
        for (int64_t i = j; i < n; ++i) cj[i] -= ck[i] * f;
      }
    }
    if (kend - k0 < kPanel) continue;  // the last, partial panel has no trailing columns
    const T* p = a + k0 * lda;         // the panel: p[q * lda + i] is L(i, k0 + q)
    int64_t j = kend;
    for (; j + 1 < n; j += 2) {
      T* c0 = a + j * lda;
      T* c1 = c0 + lda;
      T f0[kPanel], f1[kPanel];
      for (int q = 0; q < kPanel; ++q) {
        f0[q] = conj(p[q * lda + j]);
        f1[q] = conj(p[q * lda + j + 1]);
      }
      T acc = p[j] * f0[0];
      for (int q = 1; q < kPanel; ++q) acc += p[q * lda + j] * f0[q];
      c0[j] -= acc;
      for (int64_t i = j + 1; i < n; ++i) {
        T acc0 = p[i] * f0[0], acc1 = p[i] * f1[0];
        for (int q = 1; q < kPanel; ++q) {
          acc0 += p[q * lda + i] * f0[q];
          acc1 += p[q * lda + i] * f1[q];
        }
        c0[i] -= acc0;
        c1[i] -= acc1;
      }
    }
    if (j < n) {  // one trailing column left: only its diagonal element
      T acc = p[j] * conj(p[j]);
      for (int q = 1; q < kPanel; ++q) acc += p[q * lda + j] * conj(p[q * lda + j]);
      a[j * lda + j] -= acc;
    }
  }
  return 0;
}

template <typename T>
int32_t cholesky_one(T* a, int64_t n, int64_t lda, bool upper, bool from_other_triangle) {
  MutMap<T> A(a, n, n, Eigen::OuterStride<>(lda));
  if (from_other_triangle) {
    // The triangle to read lies transposed in the other one (a row-major input viewed as
    // column-major): move it into place, a plain transpose of the strict part.
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t i = j + 1; i < n; ++i) {
        if (upper) {
          a[i * lda + j] = a[j * lda + i];
        } else {
          a[j * lda + i] = a[i * lda + j];
        }
      }
    }
  }
  // Eigen's Upper variant factors the transposed lower problem: U^H U from the upper triangle.
  constexpr int64_t kSmall = 64;
  if (n <= kSmall) {
    // The upper factor U of A is the conjugate of the lower factor of A^T (stored in A's upper
    // triangle read as columns of A^T): transpose into the lower triangle, factor, transpose back.
    if (upper) {
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t i = j + 1; i < n; ++i) a[j * lda + i] = a[i * lda + j];
      }
    }
    int32_t info = cholesky_small_lower(a, n, lda);
    if (upper) {
      // Row j of the factor's strict lower part becomes column j of the strict upper part.
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t i = j + 1; i < n; ++i) {
          a[i * lda + j] = a[j * lda + i];
          a[j * lda + i] = T(0);
        }
      }
    } else {
      for (int64_t j = 1; j < n; ++j) std::fill(a + j * lda, a + j * lda + j, T(0));
    }
    return info;
  }
  const Eigen::Index failed = upper ? Eigen::internal::llt_inplace<T, Eigen::Upper>::blocked(A)
                                    : Eigen::internal::llt_inplace<T, Eigen::Lower>::blocked(A);
  int32_t info = failed >= 0 ? static_cast<int32_t>(failed + 1) : 0;
  if (info == 0) {
    // potrf also stops at a NaN pivot, which Eigen's "x <= 0" test lets through.
    for (int64_t i = 0; i < n; ++i) {
      if (std::isnan(std::real(A(i, i)))) {
        info = static_cast<int32_t>(i + 1);
        break;
      }
    }
  }
  if (upper) {
    A.template triangularView<Eigen::StrictlyLower>().setZero();
  } else {
    A.template triangularView<Eigen::StrictlyUpper>().setZero();
  }
  return info;
}

void cholesky_kernel(const Tensor& A, const Tensor& infos, bool upper, bool from_other_triangle) {
  const int64_t n = rows(A), batch = batch_count(A), lda = leading_dim(A);
  int32_t* info = infos.data<int32_t>();
  dispatch_dtype<kLinalgTypes>(A.dtype(), "linalg.cholesky", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* a = A.data<T>();
    for_each_matrix(batch, n * n * n / 3 + 1, [&](int64_t b) {
      info[b] =
          n == 0 ? 0 : cholesky_one(a + matrix_offset(A, b), n, lda, upper, from_other_triangle);
    });
  });
}

}  // namespace
}  // namespace linalg

EMBER_REGISTER_KERNEL(cholesky_stub, CPU, &linalg::cholesky_kernel);

}  // namespace native
}  // namespace ember
