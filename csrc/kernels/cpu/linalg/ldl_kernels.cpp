// LDL factorization with Bunch-Kaufman pivoting and its solve, as LAPACK's ?sytf2 / ?hetf2 and
// ?sytrs / ?hetrs with UPLO = 'L' (the routines PyTorch's ldl_factor / ldl_solve call): the
// same pivot choices, D blocks, multipliers and IPIV encoding (k > 0: 1x1 block with rows k and
// IPIV(k) interchanged; IPIV(k) = IPIV(k+1) = -p < 0: 2x2 block with rows k+1 and p
// interchanged). Unblocked: the factorization is O(n^3) with level-2 updates, which is what
// LAPACK's blocked sytrf reduces to for the matrix sizes ldl is used on.
#include <algorithm>
#include <cmath>
#include <complex>

#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/linalg/eigen.h"
#include "kernels/linalg/batch.h"
#include "kernels/linalg/solve_stubs.h"

namespace ember {
namespace native {
namespace linalg {
namespace {

template <typename T>
struct Scalars {
  using R = T;
  static constexpr bool kComplex = false;
  static R abs1(T x) { return std::abs(x); }
  static R real(T x) { return x; }
  static T conj(T x) { return x; }
};
template <typename R_>
struct Scalars<std::complex<R_>> {
  using R = R_;
  using T = std::complex<R_>;
  static constexpr bool kComplex = true;
  static R abs1(T x) { return std::abs(x.real()) + std::abs(x.imag()); }  // LAPACK's CABS1
  static R real(T x) { return x.real(); }
  static T conj(T x) { return std::conj(x); }
};

// One matrix: Herm selects ?hetf2 (A = L D L^H, D Hermitian with real 1x1 blocks) over ?sytf2
// (A = L D L^T). Returns LAPACK's info (k: D(k,k) is exactly zero; the factorization completes).
template <typename T, bool Herm>
int32_t ldl_factor_one(T* a, int64_t n, int64_t lda, int32_t* ipiv) {
  using S = Scalars<T>;
  using R = typename S::R;
  auto A = [a, lda](int64_t i, int64_t j) -> T& { return a[i + j * lda]; };
  auto cj = [](T x) { return Herm ? S::conj(x) : x; };
  auto diag_abs = [](T x) { return Herm ? std::abs(S::real(x)) : S::abs1(x); };
  auto make_real = [&](int64_t i) {
    if (Herm) A(i, i) = T(S::real(A(i, i)));
  };
  const R alpha = (R(1) + std::sqrt(R(17))) / R(8);
  int32_t info = 0;
  int64_t k = 0;
  while (k < n) {
    int64_t kstep = 1, kp = k;
    const R absakk = diag_abs(A(k, k));
    int64_t imax = k;
    R colmax = 0;
    for (int64_t i = k + 1; i < n; ++i) {
      if (S::abs1(A(i, k)) > colmax) {
        colmax = S::abs1(A(i, k));
        imax = i;
      }
    }
    if (std::max(absakk, colmax) == R(0) || std::isnan(absakk)) {
      // A zero column: D(k,k) = 0, nothing to eliminate.
      if (info == 0) info = static_cast<int32_t>(k + 1);
      make_real(k);
    } else {
      if (absakk < alpha * colmax) {
        // The largest off-diagonal entry of row/column imax.
        R rowmax = 0;
        for (int64_t j = k; j < imax; ++j) rowmax = std::max(rowmax, S::abs1(A(imax, j)));
        for (int64_t j = imax + 1; j < n; ++j) rowmax = std::max(rowmax, S::abs1(A(j, imax)));
        if (absakk >= alpha * colmax * (colmax / rowmax)) {
          kp = k;  // no interchange, 1x1 pivot
        } else if (diag_abs(A(imax, imax)) >= alpha * rowmax) {
          kp = imax;  // interchange k and imax, 1x1 pivot
        } else {
          kp = imax;  // interchange k+1 and imax, 2x2 pivot
          kstep = 2;
        }
      }
      const int64_t kk = k + kstep - 1;
      if (kp != kk) {
        // Interchange rows and columns kk and kp of the trailing (lower-stored) submatrix.
        for (int64_t i = kp + 1; i < n; ++i) std::swap(A(i, kk), A(i, kp));
        for (int64_t j = kk + 1; j < kp; ++j) {
          const T t = cj(A(j, kk));
          A(j, kk) = cj(A(kp, j));
          A(kp, j) = t;
        }
        if (Herm) A(kp, kk) = S::conj(A(kp, kk));
        std::swap(A(kk, kk), A(kp, kp));
        make_real(kk);
        make_real(kp);
        if (kstep == 2) {
          make_real(k);
          std::swap(A(k + 1, k), A(kp, k));
        }
      } else {
        make_real(k);
        if (kstep == 2) make_real(k + 1);
      }
      if (kstep == 1) {
        // A22 -= x d^{-1} x^T (x^H), then L's column = x / d.
        if (k < n - 1) {
          const T d = Herm ? T(R(1) / S::real(A(k, k))) : T(1) / A(k, k);
          for (int64_t j = k + 1; j < n; ++j) {
            const T f = d * cj(A(j, k));
            for (int64_t i = j; i < n; ++i) A(i, j) -= A(i, k) * f;
            make_real(j);
          }
          for (int64_t i = k + 1; i < n; ++i) A(i, k) *= d;
        }
      } else if (k < n - 2) {
        // 2x2 pivot D = [[A(k,k), .], [A(k+1,k), A(k+1,k+1)]]: columns k, k+1 of L and the
        // rank-2 update of A22, in LAPACK's operation order.
        if constexpr (Herm) {
          const R d = std::abs(A(k + 1, k));
          const R d11 = S::real(A(k + 1, k + 1)) / d, d22 = S::real(A(k, k)) / d;
          const R tt = R(1) / (d11 * d22 - R(1));
          const T d21 = A(k + 1, k) / d;
          const R scale = tt / d;
          for (int64_t j = k + 2; j < n; ++j) {
            const T wk = scale * (d11 * A(j, k) - d21 * A(j, k + 1));
            const T wkp1 = scale * (d22 * A(j, k + 1) - S::conj(d21) * A(j, k));
            for (int64_t i = j; i < n; ++i) {
              A(i, j) -= A(i, k) * S::conj(wk) + A(i, k + 1) * S::conj(wkp1);
            }
            A(j, k) = wk;
            A(j, k + 1) = wkp1;
            make_real(j);
          }
        } else {
          T d21 = A(k + 1, k);
          const T d11 = A(k + 1, k + 1) / d21, d22 = A(k, k) / d21;
          const T t = T(1) / (d11 * d22 - T(1));
          d21 = t / d21;
          for (int64_t j = k + 2; j < n; ++j) {
            const T wk = d21 * (d11 * A(j, k) - A(j, k + 1));
            const T wkp1 = d21 * (d22 * A(j, k + 1) - A(j, k));
            for (int64_t i = j; i < n; ++i) A(i, j) -= A(i, k) * wk + A(i, k + 1) * wkp1;
            A(j, k) = wk;
            A(j, k + 1) = wkp1;
          }
        }
      }
    }
    if (kstep == 1) {
      ipiv[k] = static_cast<int32_t>(kp + 1);
    } else {
      ipiv[k] = ipiv[k + 1] = -static_cast<int32_t>(kp + 1);
    }
    k += kstep;
  }
  // The strict upper triangle holds nothing of the factorization: zero it, as PyTorch does.
  for (int64_t j = 1; j < n; ++j) std::fill(a + j * lda, a + j * lda + j, T(0));
  return info;
}

template <typename T>
void swap_rows(T* b, int64_t ldb, int64_t nrhs, int64_t i, int64_t p) {
  if (i == p) return;
  for (int64_t c = 0; c < nrhs; ++c) std::swap(b[c * ldb + i], b[c * ldb + p]);
}

// ?sytrs / ?hetrs (lower): B <- A^{-1} B with A = L D L^T (L D L^H).
template <typename T, bool Herm>
void ldl_solve_one(const T* a, int64_t lda, const int32_t* ipiv, int64_t n, T* b, int64_t ldb,
                   int64_t nrhs) {
  using S = Scalars<T>;
  auto A = [a, lda](int64_t i, int64_t j) { return a[i + j * lda]; };
  auto B = [b, ldb](int64_t i, int64_t c) -> T& { return b[i + c * ldb]; };
  auto cj = [](T x) { return Herm ? S::conj(x) : x; };
  // L D Y = B, block by block.
  for (int64_t k = 0; k < n;) {
    if (ipiv[k] > 0) {
      swap_rows(b, ldb, nrhs, k, ipiv[k] - 1);
      for (int64_t c = 0; c < nrhs; ++c) {
        const T bk = B(k, c);
        for (int64_t i = k + 1; i < n; ++i) B(i, c) -= A(i, k) * bk;
        B(k, c) *= Herm ? T(1 / S::real(A(k, k))) : T(1) / A(k, k);
      }
      k += 1;
    } else {
      swap_rows(b, ldb, nrhs, k + 1, -ipiv[k] - 1);
      const T akm1k = A(k + 1, k);
      const T akm1 = A(k, k) / cj(akm1k), ak = A(k + 1, k + 1) / akm1k;
      const T denom = akm1 * ak - T(1);
      for (int64_t c = 0; c < nrhs; ++c) {
        const T b0 = B(k, c), b1 = B(k + 1, c);
        for (int64_t i = k + 2; i < n; ++i) B(i, c) -= A(i, k) * b0 + A(i, k + 1) * b1;
        const T bkm1 = b0 / cj(akm1k), bk = b1 / akm1k;
        B(k, c) = (ak * bkm1 - bk) / denom;
        B(k + 1, c) = (akm1 * bk - bkm1) / denom;
      }
      k += 2;
    }
  }
  // L^T X = Y (L^H X = Y), from the last block up.
  for (int64_t k = n - 1; k >= 0;) {
    const int64_t first = ipiv[k] > 0 ? k : k - 1;  // a 2x2 block spans rows k-1 and k
    for (int64_t r = first; r <= k; ++r) {
      for (int64_t c = 0; c < nrhs; ++c) {
        T acc(0);
        for (int64_t i = k + 1; i < n; ++i) acc += cj(A(i, r)) * B(i, c);
        B(r, c) -= acc;
      }
    }
    swap_rows(b, ldb, nrhs, k, (ipiv[k] > 0 ? ipiv[k] : -ipiv[k]) - 1);
    k = first - 1;
  }
}

void ldl_factor_kernel(const Tensor& LD, const Tensor& pivots, const Tensor& infos,
                       bool hermitian) {
  const int64_t n = rows(LD), batch = batch_count(LD), lda = leading_dim(LD);
  int32_t* piv = pivots.data<int32_t>();
  int32_t* info = infos.data<int32_t>();
  dispatch_dtype<kLinalgTypes>(LD.dtype(), "linalg.ldl_factor", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* a = LD.data<T>();
    const bool herm = hermitian && Scalars<T>::kComplex;
    for_each_matrix(batch, n * n * n / 3 + 1, [&](int64_t b) {
      T* ab = a + matrix_offset(LD, b);
      info[b] = herm ? ldl_factor_one<T, true>(ab, n, lda, piv + b * n)
                     : ldl_factor_one<T, false>(ab, n, lda, piv + b * n);
    });
  });
}

void ldl_solve_kernel(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian) {
  const int64_t n = rows(B), nrhs = cols(B), batch = batch_count(B);
  if (n == 0 || nrhs == 0 || batch == 0) return;
  const int64_t lda = leading_dim(LD), ldb = leading_dim(B);
  const int32_t* piv = pivots.data<int32_t>();
  dispatch_dtype<kLinalgTypes>(B.dtype(), "linalg.ldl_solve", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* a = LD.data<T>();
    T* b = B.data<T>();
    const bool herm = hermitian && Scalars<T>::kComplex;
    for_each_matrix(batch, n * n * nrhs, [&](int64_t i) {
      int64_t piv_offset = 0;
      for (int64_t d = pivots.dim() - 2, rest = i; d >= 0 && rest > 0; --d) {
        piv_offset += (rest % pivots.size(d)) * pivots.stride(d);
        rest /= pivots.size(d);
      }
      const T* ai = a + matrix_offset(LD, i);
      T* bi = b + matrix_offset(B, i);
      if (herm) {
        ldl_solve_one<T, true>(ai, lda, piv + piv_offset, n, bi, ldb, nrhs);
      } else {
        ldl_solve_one<T, false>(ai, lda, piv + piv_offset, n, bi, ldb, nrhs);
      }
    });
  });
}

}  // namespace
}  // namespace linalg

EMBER_REGISTER_KERNEL(ldl_factor_stub, CPU, &linalg::ldl_factor_kernel);
EMBER_REGISTER_KERNEL(ldl_solve_stub, CPU, &linalg::ldl_solve_kernel);

}  // namespace native
}  // namespace ember
