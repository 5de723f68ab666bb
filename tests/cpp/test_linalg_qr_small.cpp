// The small-matrix QR kernels (linalg_qr_small.h) against LAPACK on the same inputs: ?geqr2 vs
// ?geqrf, ?org2r vs ?orgqr, ?laqp2-style pivoted QR vs ?geqp3 (same pivots), and the cases where
// the kernels must give up (LAPACK's scaling); the threaded blocked QR (linalg_qr_parallel.h)
// against ?geqrf / ?orgqr.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/lapack.h"
#include "kernels/cpu/linalg/qr_parallel.h"
#include "kernels/cpu/linalg/qr_small.h"

extern "C" void scipy_dgeqp3_(const int*, const int*, double*, const int*, int*, double*, double*,
                              const int*, int*);

using namespace ember;
using namespace ember::native;  // the kernels and stubs under test

namespace {

// Uniform in [-3, 3) from a 64-bit LCG (full rank in practice, unlike sin(i) grids).
std::vector<double> random_matrix(int m, int n, uint64_t seed) {
  std::vector<double> a(size_t(m) * n);
  for (double& x : a) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    x = double(seed >> 11) * 0x1p-53 * 6 - 3;
  }
  return a;
}

double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

void check_qr_like_lapack(int m, int n, std::vector<double> a) {
  INFO("m " << m << " n " << n);
  const int k = std::min(m, n);
  std::vector<double> b = a, tau_small(k), tau_lapack(k), work(64 * (n + 1));
  REQUIRE(linalg_small::geqr2(m, n, a.data(), tau_small.data()));
  int info = 0;
  lapack::geqrf(m, n, b.data(), m, tau_lapack.data(), work.data(), int(work.size()), &info);
  REQUIRE(info == 0);
  CHECK(max_diff(a, b) < 1e-12);
  CHECK(max_diff(tau_small, tau_lapack) < 1e-12);
  if (m >= n) {
    linalg_small::org2r(m, n, k, a.data(), tau_small.data());
    lapack::orgqr(m, n, k, b.data(), m, tau_lapack.data(), work.data(), int(work.size()), &info);
    CHECK(max_diff(a, b) < 1e-12);
  }
}

}  // namespace

TEST_CASE("small QR equals LAPACK's geqrf and orgqr", "[linalg]") {
  for (auto [m, n] : {std::pair{1, 1}, {4, 4}, {32, 32}, {33, 7}, {7, 33}, {64, 64}, {5, 1}}) {
    check_qr_like_lapack(m, n, random_matrix(m, n, m * 100 + n));
  }
  // singular: a zero column (tau 0) and a zero row
  std::vector<double> a = random_matrix(6, 4, 3);
  for (int i = 0; i < 6; ++i) a[6 + i] = 0;
  for (int j = 0; j < 4; ++j) a[j * 6 + 5] = 0;
  check_qr_like_lapack(6, 4, a);
  // negative zero alpha: OpenBLAS's SIGN(x, -0.0) is -x
  std::vector<double> z = random_matrix(3, 3, 9);
  z[0] = -0.0;
  check_qr_like_lapack(3, 3, z);
}

TEST_CASE("small QR gives up where LAPACK scales", "[linalg]") {
  std::vector<double> tau(3);
  std::vector<double> tiny = random_matrix(3, 3, 1);
  for (double& x : tiny) x *= 1e-300;
  CHECK_FALSE(linalg_small::geqr2(3, 3, tiny.data(), tau.data()));
  std::vector<double> huge = random_matrix(3, 3, 2);
  for (double& x : huge) x *= 1e300;
  CHECK_FALSE(linalg_small::geqr2(3, 3, huge.data(), tau.data()));
  std::vector<double> nan = random_matrix(3, 3, 3);
  nan[4] = std::numeric_limits<double>::quiet_NaN();
  CHECK_FALSE(linalg_small::all_finite(nan.data(), 9));
  CHECK(linalg_small::all_finite(tiny.data(), 9));
}

TEST_CASE("small pivoted QR picks LAPACK's pivots", "[linalg]") {
  for (auto [m, n] : {std::pair{32, 32}, {40, 9}, {6, 6}}) {
    std::vector<double> a = random_matrix(m, n, m + n), b = a;
    // scale the columns so that the pivots are not in order
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i)
        a[size_t(j) * m + i] *= 1 + (j * 7 % n), b[size_t(j) * m + i] = a[size_t(j) * m + i];
    std::vector<int> jp_small(n), jp_lapack(n, 0);
    std::vector<double> tau_small(n), tau_lapack(n), work(2 * n), lwork(64 * (n + 1));
    REQUIRE(linalg_small::geqp2(m, n, a.data(), jp_small.data(), tau_small.data(), work.data()));
    int info = 0, lw = int(lwork.size());
    scipy_dgeqp3_(&m, &n, b.data(), &m, jp_lapack.data(), tau_lapack.data(), lwork.data(), &lw,
                  &info);
    REQUIRE(info == 0);
    CHECK(jp_small == jp_lapack);
    CHECK(max_diff(a, b) < 1e-11);
    CHECK(max_diff(tau_small, tau_lapack) < 1e-12);
  }
}

TEST_CASE("parallel blocked QR equals LAPACK's geqrf and orgqr", "[linalg]") {
  const int saved = get_num_threads();
  set_num_threads(2);
  for (auto [m, n] : {std::pair{200, 200}, {230, 197}}) {
    std::vector<double> a = random_matrix(m, n, m * 7 + n), b = a;
    std::vector<double> tau_par(n), tau_lapack(n), work(64 * (n + 1));
    CHECK(lapack::qr_parallel_eligible(1, m, n));
    {
      lapack::ThreadScope scope(false);
      lapack::geqrf_parallel(m, n, a.data(), m, tau_par.data());
    }
    int info = 0;
    lapack::geqrf(m, n, b.data(), m, tau_lapack.data(), work.data(), int(work.size()), &info);
    REQUIRE(info == 0);
    CHECK(max_diff(a, b) < 1e-10);
    CHECK(max_diff(tau_par, tau_lapack) < 1e-12);
    {
      lapack::ThreadScope scope(false);
      lapack::orgqr_parallel(m, n, n, a.data(), m, tau_par.data());
    }
    lapack::orgqr(m, n, n, b.data(), m, tau_lapack.data(), work.data(), int(work.size()), &info);
    CHECK(max_diff(a, b) < 1e-12);
  }
  set_num_threads(saved);
}
