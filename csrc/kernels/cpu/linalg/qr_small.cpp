// Householder QR for small real matrices (see linalg_qr_small.h): ?geqr2, ?org2r, ?laqp2 and
// ?orm2r as LAPACK computes them, with vectorisable loops.
#include "kernels/cpu/linalg/qr_small.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ember {
namespace native {
namespace linalg_small {
namespace {

// Sums of squares inside [lo, hi] are exact enough (no term that matters under- or overflows):
// a column has at most kMaxElements terms, so the largest is at least lo / 4096, far above the
// smallest normal number, and hi leaves room below overflow.
template <typename T>
struct SafeRange;
template <>
struct SafeRange<double> {
  static constexpr double lo = 0x1p-900, hi = 0x1p900;
};
template <>
struct SafeRange<float> {
  static constexpr float lo = 0x1p-100f, hi = 0x1p100f;
};

template <typename T>
T sum_squares(int n, const T* x) {
  T s = 0;
#pragma omp simd reduction(+ : s)
  for (int i = 0; i < n; ++i) s += x[i] * x[i];
  return s;
}

// The 2-norm of x (n elements) into *norm; false where the plain sum of squares is not exact
// enough (LAPACK's ?nrm2 scales there). A zero vector is fine.
template <typename T>
bool safe_norm(int n, const T* x, T* norm) {
  const T s = sum_squares(n, x);
  if (s >= SafeRange<T>::lo && s <= SafeRange<T>::hi) {
    *norm = std::sqrt(s);
    return true;
  }
  if (s == T(0)) {  // all zero, or terms that underflowed
    for (int i = 0; i < n; ++i) {
      if (x[i] != T(0)) return false;
    }
    *norm = 0;
    return true;
  }
  return false;  // tiny, huge, inf or NaN
}

// ?lapy2: sqrt(x^2 + y^2) without overflow (both finite here).
template <typename T>
T lapy2(T x, T y) {
  const T xa = std::abs(x), ya = std::abs(y);
  const T w = std::max(xa, ya), z = std::min(xa, ya);
  if (z == T(0)) return w;
  const T q = z / w;
  return w * std::sqrt(T(1) + q * q);
}

// ?larfg on (alpha, x[0..n-2]): returns false where LAPACK would rescale.
template <typename T>
bool larfg(int n, T* alpha, T* x, T* tau) {
  if (n <= 1) {
    *tau = 0;
    return true;
  }
  T xnorm;
  if (!safe_norm(n - 1, x, &xnorm)) return false;
  if (xnorm == T(0)) {
    *tau = 0;
    return true;
  }
  if (!std::isfinite(*alpha)) return false;
  const T norm = lapy2(*alpha, xnorm);
  const T beta = -std::copysign(norm, *alpha);  // -SIGN(norm, alpha), -0.0 counting as negative
  // beta >= xnorm >= 2^-450: never below LAPACK's rescaling threshold.
  *tau = (beta - *alpha) / beta;
  const T scale = T(1) / (*alpha - beta);
#pragma omp simd
  for (int i = 0; i < n - 1; ++i) x[i] *= scale;
  *alpha = beta;
  return true;
}

// C (rows x cols, leading dimension ldc) = (I - tau v v^T) C, v[0] == 1 (as ?larf with
// ?gemv + ?ger: w = C^T v, then C(:, j) += (-tau w_j) v). Four columns at a time share v.
template <typename T>
void apply_reflector(int rows, int cols, const T* v, T tau, T* c, int ldc) {
  if (tau == T(0)) return;
  int j = 0;
  for (; j + 4 <= cols; j += 4) {
    T* c0 = c + int64_t(j) * ldc;
    T* c1 = c0 + ldc;
    T* c2 = c1 + ldc;
    T* c3 = c2 + ldc;
    T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
    for (int r = 0; r < rows; ++r) {
      s0 += v[r] * c0[r];
      s1 += v[r] * c1[r];
      s2 += v[r] * c2[r];
      s3 += v[r] * c3[r];
    }
    const T t0 = -tau * s0, t1 = -tau * s1, t2 = -tau * s2, t3 = -tau * s3;
#pragma omp simd
    for (int r = 0; r < rows; ++r) {
      c0[r] += t0 * v[r];
      c1[r] += t1 * v[r];
      c2[r] += t2 * v[r];
      c3[r] += t3 * v[r];
    }
  }
  for (; j < cols; ++j) {
    T* c0 = c + int64_t(j) * ldc;
    T s0 = 0;
#pragma omp simd reduction(+ : s0)
    for (int r = 0; r < rows; ++r) s0 += v[r] * c0[r];
    const T t0 = -tau * s0;
#pragma omp simd
    for (int r = 0; r < rows; ++r) c0[r] += t0 * v[r];
  }
}

}  // namespace

template <typename T>
bool all_finite(const T* x, int64_t count) {
  // x - x is 0 for finite x and NaN otherwise; the sum stays 0 only if all are finite.
  T s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < count; ++i) s += x[i] - x[i];
  return s == T(0);
}

template <typename T>
bool geqr2(int m, int n, T* a, T* tau) {
  const int k = std::min(m, n);
  for (int i = 0; i < k; ++i) {
    T* aii = a + int64_t(i) * m + i;
    if (!larfg(m - i, aii, aii + 1, &tau[i])) return false;
    if (i + 1 < n) {
      const T beta = *aii;
      *aii = T(1);
      apply_reflector(m - i, n - i - 1, aii, tau[i], aii + m, m);
      *aii = beta;
    }
  }
  return true;
}

template <typename T>
void org2r(int m, int n, int k, T* a, const T* tau) {
  for (int j = k; j < n; ++j) {
    T* aj = a + int64_t(j) * m;
    std::fill(aj, aj + m, T(0));
    aj[j] = T(1);
  }
  for (int i = k - 1; i >= 0; --i) {
    T* aii = a + int64_t(i) * m + i;
    if (i + 1 < n) {
      *aii = T(1);
      apply_reflector(m - i, n - i - 1, aii, tau[i], aii + m, m);
    }
    const T minus_tau = -tau[i];
#pragma omp simd
    for (int r = 1; r < m - i; ++r) aii[r] *= minus_tau;
    *aii = T(1) - tau[i];
    std::fill(a + int64_t(i) * m, aii, T(0));
  }
}

template <typename T>
bool geqp2(int m, int n, T* a, int* jpvt, T* tau, T* work) {
  T* vn1 = work;
  T* vn2 = work + n;
  const T tol3z = std::sqrt(std::numeric_limits<T>::epsilon());
  for (int j = 0; j < n; ++j) {
    jpvt[j] = j + 1;
    if (!safe_norm(m, a + int64_t(j) * m, &vn1[j])) return false;
    vn2[j] = vn1[j];
  }
  const int k = std::min(m, n);
  for (int i = 0; i < k; ++i) {
    // The pivot: the first column of largest partial norm (?idamax).
    int pvt = i;
    for (int j = i + 1; j < n; ++j) {
      if (vn1[j] > vn1[pvt]) pvt = j;
    }
    if (pvt != i) {
      std::swap_ranges(a + int64_t(pvt) * m, a + int64_t(pvt + 1) * m, a + int64_t(i) * m);
      std::swap(jpvt[pvt], jpvt[i]);
      vn1[pvt] = vn1[i];
      vn2[pvt] = vn2[i];
    }
    T* aii = a + int64_t(i) * m + i;
    if (!larfg(m - i, aii, aii + 1, &tau[i])) return false;
    if (i + 1 < n) {
      const T beta = *aii;
      *aii = T(1);
      apply_reflector(m - i, n - i - 1, aii, tau[i], aii + m, m);
      *aii = beta;
    }
    // Downdate the partial column norms (LAPACK Working Note 176).
    for (int j = i + 1; j < n; ++j) {
      if (vn1[j] == T(0)) continue;
      const T* aj = a + int64_t(j) * m;
      const T ratio = std::abs(aj[i]) / vn1[j];
      T temp = std::max(T(1) - ratio * ratio, T(0));
      const T q = vn1[j] / vn2[j];
      const T temp2 = temp * q * q;
      if (temp2 <= tol3z) {
        if (i + 1 < m) {
          if (!safe_norm(m - i - 1, aj + i + 1, &vn1[j])) return false;
          vn2[j] = vn1[j];
        } else {
          vn1[j] = vn2[j] = 0;
        }
      } else {
        vn1[j] *= std::sqrt(temp);
      }
    }
  }
  return true;
}

template <typename T>
void apply_qt(int m, int nrhs, int k, const T* a, const T* tau, T* b, int ldb) {
  // v is column i of a below the diagonal with v[0] = 1: copied so the 1 needs no write to a.
  T v[kMaxElements];
  for (int i = 0; i < k; ++i) {
    const T* ai = a + int64_t(i) * m + i;
    v[0] = T(1);
    std::copy(ai + 1, ai + (m - i), v + 1);
    apply_reflector(m - i, nrhs, v, tau[i], b + i, ldb);
  }
}

template <typename T>
void solve_upper(int n, int nrhs, const T* a, int lda, T* b, int ldb) {
  for (int j = 0; j < nrhs; ++j) {
    T* x = b + int64_t(j) * ldb;
    for (int k = n - 1; k >= 0; --k) {
      if (x[k] == T(0)) continue;
      const T* ak = a + int64_t(k) * lda;
      x[k] /= ak[k];
      const T xk = x[k];
#pragma omp simd
      for (int i = 0; i < k; ++i) x[i] -= xk * ak[i];
    }
  }
}

#define EMBER_QR_SMALL(T)                                                \
  template bool all_finite<T>(const T*, int64_t);                        \
  template bool geqr2<T>(int, int, T*, T*);                              \
  template void org2r<T>(int, int, int, T*, const T*);                   \
  template bool geqp2<T>(int, int, T*, int*, T*, T*);                    \
  template void apply_qt<T>(int, int, int, const T*, const T*, T*, int); \
  template void solve_upper<T>(int, int, const T*, int, T*, int);
EMBER_QR_SMALL(float)
EMBER_QR_SMALL(double)
#undef EMBER_QR_SMALL

}  // namespace linalg_small
}  // namespace native
}  // namespace ember
