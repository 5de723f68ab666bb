// LU kernels: factorization with partial pivoting (Eigen's blocked getrf, with LAPACK's pivots
// and info), LU without pivoting, solves with the factors (getrs), determinants and permutation
// matrices from the pivots.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>

#include "core/parallel.h"
#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/linalg/eigen.h"
#include "kernels/cpu/linalg/triangular.h"
#include "kernels/linalg/batch.h"

namespace ember {
namespace native {
namespace linalg {
namespace {

// LAPACK's pivot score: |x| for real entries, |re| + |im| for complex ones (i?amax). Eigen's LU
// scores complex entries by modulus, which often picks another row, so its factors would differ
// from LAPACK's (PyTorch's, SciPy's) although equally valid; hence the LU below.
template <typename T>
auto pivot_score(const T& x) {
  if constexpr (Eigen::NumTraits<T>::IsComplex) {
    return std::abs(x.real()) + std::abs(x.imag());
  } else {
    return std::abs(x);
  }
}

// Row interchanges piv[lo..hi) (0-based) applied to `cols` columns starting at a.
template <typename T>
void swap_rows(T* a, int64_t cols, int64_t lda, const int32_t* piv, int64_t lo, int64_t hi) {
  for (int64_t i = lo; i < hi; ++i) {
    const int64_t p = piv[i];
    if (p == i) continue;
    for (int64_t c = 0; c < cols; ++c) std::swap(a[c * lda + i], a[c * lda + p]);
  }
}

// Unblocked LU of a narrow (m, n) panel (getf2): for each column, pick the pivot, swap the whole
// panel row, scale by the pivot's reciprocal (a division below LAPACK's safe minimum), and update
// the rest of the panel. Carries on past an exactly zero pivot, returning the first (0-based).
template <typename T>
int64_t lu_unblocked(T* a, int64_t m, int64_t n, int64_t lda, int32_t* piv) {
  using R = typename Eigen::NumTraits<T>::Real;
  const R safe_min = std::numeric_limits<R>::min();
  const int64_t k = std::min(m, n);
  int64_t first_zero = -1;
  for (int64_t j = 0; j < k; ++j) {
    T* col = a + j * lda;
    int64_t p = j;
    R best = pivot_score(col[j]);
    for (int64_t i = j + 1; i < m; ++i) {
      const R score = pivot_score(col[i]);
      if (score > best) {
        best = score;
        p = i;
      }
    }
    piv[j] = static_cast<int32_t>(p);
    if (best != R(0)) {
      if (p != j) {
        for (int64_t c = 0; c < n; ++c) std::swap(a[c * lda + j], a[c * lda + p]);
      }
      if (std::abs(col[j]) >= safe_min) {
        const T r = T(1) / col[j];
        for (int64_t i = j + 1; i < m; ++i) col[i] *= r;
      } else {
        for (int64_t i = j + 1; i < m; ++i) col[i] /= col[j];
      }
    } else if (first_zero < 0) {
      first_zero = j;
    }
    for (int64_t c = j + 1; c < n; ++c) {
      T* cc = a + c * lda;
      const T f = cc[j];
      if (f == T(0)) continue;
      for (int64_t i = j + 1; i < m; ++i) cc[i] -= col[i] * f;
    }
  }
  return first_zero;
}

// getrf as LAPACK's recursive getrf2: factor the left half of the columns, apply its
// interchanges to the right half, solve for U12, update A22 with one product, factor A22, and
// apply its interchanges back to the left half. Nearly all the work lands in large products
// (Eigen's GEMM, parallel over OpenMP outside a batch loop), which a panel-by-panel LU does not
// achieve (Eigen's own blocked LU runs at half of LAPACK's speed at 512x512).
template <typename T>
int64_t lu_recursive(T* a, int64_t m, int64_t n, int64_t lda, int32_t* piv) {
  constexpr int64_t kBase = 16;
  const int64_t k = std::min(m, n);
  if (k <= kBase) return lu_unblocked(a, m, n, lda, piv);
  const int64_t n1 = k / 2, n2 = n - n1;
  const int64_t zero1 = lu_recursive(a, m, n1, lda, piv);
  T* a12 = a + n1 * lda;
  swap_rows(a12, n2, lda, piv, 0, n1);
  triangular_solve_inplace<T>(a, lda, n1, a12, lda, n2, /*upper=*/false, /*unit=*/true,
                              MatrixOp::None);
  T* a22 = a12 + n1;
  if (m > n1) {
    MutMap<T> A22(a22, m - n1, n2, Eigen::OuterStride<>(lda));
    A22.noalias() -= ConstMap<T>(a + n1, m - n1, n1, Eigen::OuterStride<>(lda)) *
                     ConstMap<T>(a12, n1, n2, Eigen::OuterStride<>(lda));
  }
  const int64_t zero2 = lu_recursive(a22, m - n1, n2, lda, piv + n1);
  for (int64_t i = n1; i < k; ++i) piv[i] += static_cast<int32_t>(n1);
  swap_rows(a, n1, lda, piv, n1, k);
  if (zero1 >= 0) return zero1;
  return zero2 >= 0 ? zero2 + n1 : -1;
}

// getrf on one (m, n) matrix with LAPACK's pivots (1-based) and info (the first exactly zero
// pivot, 1-based; the factorization carries on past it, as getrf's).
template <typename T>
int32_t lu_pivoted(T* a, int64_t m, int64_t n, int64_t lda, int32_t* piv) {
  if (std::min(m, n) == 0) return 0;
  const int64_t first_zero = lu_recursive(a, m, n, lda, piv);
  for (int64_t i = 0; i < std::min(m, n); ++i) piv[i] += 1;
  return first_zero >= 0 ? static_cast<int32_t>(first_zero + 1) : 0;
}

// LU without pivoting, right-looking and blocked: factor a panel of columns unblocked, solve for
// the block row of U beside it, update the trailing matrix with one product. A zero pivot makes
// the rest of its column inf/nan, as PyTorch documents; info names the first one.
template <typename T>
int32_t lu_unpivoted(T* a, int64_t m, int64_t n, int64_t lda, int32_t* piv) {
  const int64_t k = std::min(m, n);
  for (int64_t i = 0; i < k; ++i) piv[i] = static_cast<int32_t>(i + 1);
  MutMap<T> A(a, m, n, Eigen::OuterStride<>(lda));
  int32_t info = 0;
  constexpr int64_t kBlock = 32;
  for (int64_t j0 = 0; j0 < k; j0 += kBlock) {
    const int64_t nb = std::min(kBlock, k - j0);
    for (int64_t j = j0; j < j0 + nb; ++j) {
      const T pivot = A(j, j);
      if (pivot == T(0) && info == 0) info = static_cast<int32_t>(j + 1);
      A.col(j).tail(m - j - 1) /= pivot;
      // Update the rest of the panel only; the trailing matrix waits for the block update.
      const int64_t panel_cols = j0 + nb - j - 1;
      if (panel_cols > 0) {
        A.block(j + 1, j + 1, m - j - 1, panel_cols).noalias() -=
            A.col(j).tail(m - j - 1) * A.row(j).segment(j + 1, panel_cols);
      }
    }
    const int64_t rest = n - j0 - nb;
    if (rest > 0) {
      auto L11 = A.block(j0, j0, nb, nb);
      auto U12 = A.block(j0, j0 + nb, nb, rest);
      L11.template triangularView<Eigen::UnitLower>().solveInPlace(U12);
      if (m - j0 - nb > 0) {
        A.block(j0 + nb, j0 + nb, m - j0 - nb, rest).noalias() -=
            A.block(j0 + nb, j0, m - j0 - nb, nb) * U12;
      }
    }
  }
  return info;
}

void lu_factor_kernel(const Tensor& LU, const Tensor& pivots, const Tensor& infos, bool pivot) {
  const int64_t m = rows(LU), n = cols(LU), k = std::min(m, n), batch = batch_count(LU);
  const int64_t lda = leading_dim(LU);
  int32_t* piv = pivots.data<int32_t>();
  int32_t* info = infos.data<int32_t>();
  if (k == 0) {
    std::fill(info, info + batch, 0);
    return;
  }
  dispatch_dtype<kLinalgTypes>(LU.dtype(), "lu_factor", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* a = LU.data<T>();
    for_each_matrix(batch, m * n * k, [&](int64_t b) {
      T* ab = a + matrix_offset(LU, b);
      info[b] =
          pivot ? lu_pivoted(ab, m, n, lda, piv + b * k) : lu_unpivoted(ab, m, n, lda, piv + b * k);
    });
  });
}

// Row interchanges of getrs: P B applies the pivots first to last, P^T B last to first.
template <typename T>
void apply_pivots(T* b, int64_t ldb, int64_t nrhs, const int32_t* piv, int64_t k, bool forward) {
  for (int64_t s = 0; s < k; ++s) {
    const int64_t i = forward ? s : k - 1 - s;
    const int64_t p = piv[i] - 1;
    if (p == i) continue;
    for (int64_t c = 0; c < nrhs; ++c) std::swap(b[c * ldb + i], b[c * ldb + p]);
  }
}

// B <- op(A)^{-1} B with A = P^T L U (getrs). op(A) = op(U) op(L) P for N / conj, and
// op(L) op(U) P reversed for T / H: A^T = U^T L^T P.
template <typename T>
void lu_solve_one(const T* lu, int64_t lda, const int32_t* piv, int64_t n, T* b, int64_t ldb,
                  int64_t nrhs, MatrixOp op) {
  if (op == MatrixOp::None || op == MatrixOp::Conj) {
    apply_pivots(b, ldb, nrhs, piv, n, /*forward=*/true);
    triangular_solve_inplace<T>(lu, lda, n, b, ldb, nrhs, /*upper=*/false, /*unit=*/true, op);
    triangular_solve_inplace<T>(lu, lda, n, b, ldb, nrhs, /*upper=*/true, /*unit=*/false, op);
  } else {
    triangular_solve_inplace<T>(lu, lda, n, b, ldb, nrhs, /*upper=*/true, /*unit=*/false, op);
    triangular_solve_inplace<T>(lu, lda, n, b, ldb, nrhs, /*upper=*/false, /*unit=*/true, op);
    apply_pivots(b, ldb, nrhs, piv, n, /*forward=*/false);
  }
}

// The right-hand sides of one large solve are independent: with one matrix (nothing for
// for_each_matrix to spread) and several threads, column blocks of B go to different threads.
// The triangular solves are three quarters of linalg.inv's flops and are not parallel inside
// (Eigen's trsm), so this is what lets one large inverse use more than one core.
constexpr int64_t kColumnSplitWork = int64_t(1) << 21;

template <typename T, typename SolveColumns>
void solve_columns(int64_t n, int64_t nrhs, const SolveColumns& solve) {
  if (n * n * nrhs < kColumnSplitWork || get_num_threads() == 1) {
    solve(0, nrhs);
    return;
  }
  // Blocks of at least 32 columns keep the triangular solves at GEMM speed.
  parallel_for(0, nrhs, 32, solve);
}

void lu_solve_kernel(const Tensor& LU, const Tensor& pivots, const Tensor& B, MatrixOp op) {
  const int64_t n = rows(B), nrhs = cols(B), batch = batch_count(B);
  if (n == 0 || nrhs == 0 || batch == 0) return;
  const int64_t lda = leading_dim(LU), ldb = leading_dim(B);
  const int32_t* piv = pivots.data<int32_t>();
  dispatch_dtype<kLinalgTypes>(B.dtype(), "lu_solve", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* a = LU.data<T>();
    T* b = B.data<T>();
    if (batch == 1) {
      solve_columns<T>(n, nrhs, [&](int64_t c0, int64_t c1) {
        lu_solve_one<T>(a, lda, piv, n, b + c0 * ldb, ldb, c1 - c0, op);
      });
      return;
    }
    for_each_matrix(batch, n * n * nrhs, [&](int64_t i) {
      // pivots has B's batch dims plus one: its batch offsets follow the same formula.
      int64_t piv_offset = 0;
      for (int64_t d = pivots.dim() - 2, rest = i; d >= 0 && rest > 0; --d) {
        piv_offset += (rest % pivots.size(d)) * pivots.stride(d);
        rest /= pivots.size(d);
      }
      lu_solve_one<T>(a + matrix_offset(LU, i), lda, piv + piv_offset, n, b + matrix_offset(B, i),
                      ldb, nrhs, op);
    });
  });
}

void lu_inverse_kernel(const Tensor& LU, const Tensor& pivots, const Tensor& X) {
  const int64_t n = rows(LU), batch = batch_count(LU);
  if (n == 0 || batch == 0) return;
  const int64_t lda = leading_dim(LU), ldx = leading_dim(X);
  const int32_t* piv = pivots.data<int32_t>();
  dispatch_dtype<kLinalgTypes>(LU.dtype(), "linalg.inv", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* a = LU.data<T>();
    T* x = X.data<T>();
    if (batch == 1) {
      solve_columns<T>(n, n, [&](int64_t c0, int64_t c1) {
        for (int64_t j = c0; j < c1; ++j) {
          std::fill(x + j * ldx, x + j * ldx + n, T(0));
          x[j * ldx + j] = T(1);
        }
        lu_solve_one<T>(a, lda, piv, n, x + c0 * ldx, ldx, c1 - c0, MatrixOp::None);
      });
      return;
    }
    for_each_matrix(batch, n * n * n, [&](int64_t b) {
      T* xb = x + matrix_offset(X, b);
      for (int64_t j = 0; j < n; ++j) {
        std::fill(xb + j * ldx, xb + j * ldx + n, T(0));
        xb[j * ldx + j] = T(1);
      }
      lu_solve_one<T>(a + matrix_offset(LU, b), lda, piv + b * n, n, xb, ldx, n, MatrixOp::None);
    });
  });
}

// Number of row interchanges in pivots: each one flips the determinant's sign.
bool odd_permutation(const int32_t* piv, int64_t n) {
  bool odd = false;
  for (int64_t i = 0; i < n; ++i) odd ^= (piv[i] - 1 != i);
  return odd;
}

void lu_det_kernel(const Tensor& LU, const Tensor& pivots, const Tensor& det) {
  const int64_t n = rows(LU), batch = batch_count(LU), lda = leading_dim(LU);
  const int32_t* piv = pivots.data<int32_t>();
  dispatch_dtype<kLinalgTypes>(LU.dtype(), "linalg.det", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* a = LU.data<T>();
    T* out = det.data<T>();
    for_each_matrix(batch, n, [&](int64_t b) {
      const T* ab = a + matrix_offset(LU, b);
      T d(1);
      for (int64_t i = 0; i < n; ++i) d *= ab[i * lda + i];
      out[b] = odd_permutation(piv + b * n, n) ? -d : d;
    });
  });
}

void lu_slogdet_kernel(const Tensor& LU, const Tensor& pivots, const Tensor& sign,
                       const Tensor& logabsdet) {
  const int64_t n = rows(LU), batch = batch_count(LU), lda = leading_dim(LU);
  const int32_t* piv = pivots.data<int32_t>();
  dispatch_dtype<kLinalgTypes>(LU.dtype(), "linalg.slogdet", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = typename Eigen::NumTraits<T>::Real;
    const T* a = LU.data<T>();
    T* s = sign.data<T>();
    R* logabs = logabsdet.data<R>();
    for_each_matrix(batch, n, [&](int64_t b) {
      const T* ab = a + matrix_offset(LU, b);
      T sgn(odd_permutation(piv + b * n, n) ? -1 : 1);
      R acc(0);
      for (int64_t i = 0; i < n; ++i) {
        const T d = ab[i * lda + i];
        const R mag = std::abs(d);
        // A zero pivot: the determinant is 0, its sign 0 and its log -inf (PyTorch's values).
        sgn = mag == R(0) ? T(0) : sgn * (d / mag);
        acc += std::log(mag);
      }
      s[b] = sgn;
      logabs[b] = acc;
    });
  });
}

// P (batch, m, m) of A = P L U: start from the identity's row order and apply the interchanges
// (P^T A = L U, so P's column j is the unit vector of the row that ended up at position j).
void lu_permutation_kernel(const Tensor& pivots, const Tensor& P) {
  const int64_t m = rows(P), k = pivots.size(pivots.dim() - 1), batch = batch_count(P);
  const int32_t* piv = pivots.data<int32_t>();
  // Any dtype: lu_unpack accepts integer LU tensors too, as PyTorch's.
  dispatch_dtype<kAllTypes>(P.dtype(), "lu_unpack", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = P.data<T>();
    const int64_t rs = P.stride(P.dim() - 2), cs = P.stride(P.dim() - 1);
    for_each_matrix(batch, m * m, [&](int64_t b) {
      std::vector<int64_t> perm(m);
      for (int64_t i = 0; i < m; ++i) perm[i] = i;
      const int32_t* pb = piv + b * k;
      for (int64_t i = 0; i < k; ++i) std::swap(perm[i], perm[pb[i] - 1]);
      T* pm = p + matrix_offset(P, b);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < m; ++j) pm[i * rs + j * cs] = static_cast<T>(0);
      }
      for (int64_t j = 0; j < m; ++j) pm[perm[j] * rs + j * cs] = static_cast<T>(1);
    });
  });
}

}  // namespace
}  // namespace linalg

EMBER_REGISTER_KERNEL(lu_factor_stub, CPU, &linalg::lu_factor_kernel);
EMBER_REGISTER_KERNEL(lu_solve_stub, CPU, &linalg::lu_solve_kernel);
EMBER_REGISTER_KERNEL(lu_inverse_stub, CPU, &linalg::lu_inverse_kernel);
EMBER_REGISTER_KERNEL(lu_det_stub, CPU, &linalg::lu_det_kernel);
EMBER_REGISTER_KERNEL(lu_slogdet_stub, CPU, &linalg::lu_slogdet_kernel);
EMBER_REGISTER_KERNEL(lu_permutation_stub, CPU, &linalg::lu_permutation_kernel);

}  // namespace native
}  // namespace ember
