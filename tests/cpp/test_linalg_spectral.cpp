// The LAPACK-backed spectral kernels through their ops: values on small known matrices, and the
// thread scopes of Note [LAPACK threads] (a large matrix with OpenBLAS parallel on Ember's pool,
// then a batch with it single-threaded, then the large one again), run under ASan in CI.
#include <catch2/catch.hpp>
#include <cmath>

#include "api/linalg/spectral.h"
#include "core/factory.h"
#include "core/parallel.h"

using namespace ember;

namespace {

Tensor matrix(int64_t batch, int64_t m, int64_t n, double (*f)(int64_t, int64_t, int64_t)) {
  Tensor a = empty_tensor({batch, m, n}, ScalarType::Float64, Device(), "test");
  double* p = a.data<double>();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) p[(b * m + i) * n + j] = f(b, i, j);
  return a;
}

}  // namespace

TEST_CASE("eigvalsh and svdvals of known matrices", "[linalg]") {
  // [[2, 1], [1, 2]]: eigenvalues 1 and 3 (ascending), singular values 3 and 1 (descending)
  Tensor a = matrix(1, 2, 2, [](int64_t, int64_t i, int64_t j) { return i == j ? 2.0 : 1.0; });
  Tensor L = linalg::eigvalsh(a);
  CHECK(std::abs(L.data<double>()[0] - 1.0) < 1e-14);
  CHECK(std::abs(L.data<double>()[1] - 3.0) < 1e-14);
  Tensor S = linalg::svdvals(a);
  CHECK(std::abs(S.data<double>()[0] - 3.0) < 1e-14);
  CHECK(std::abs(S.data<double>()[1] - 1.0) < 1e-14);
}

TEST_CASE("large and batched LAPACK calls alternate between thread scopes", "[linalg]") {
  const int saved = get_num_threads();
  set_num_threads(2);
  // diagonal-dominant 160x160: one matrix, enough flops for OpenBLAS to run parallel inside
  auto f = [](int64_t b, int64_t i, int64_t j) {
    return i == j ? 200.0 + i : std::sin(double(b + 3 * i + 7 * j));
  };
  Tensor big = matrix(1, 160, 160, f);
  Tensor batch = matrix(64, 12, 12, f);
  for (int round = 0; round < 2; ++round) {
    auto [Q, R] = linalg::qr(big);
    // |R_00| is the norm of the first column; Q's first column has unit norm
    double norm = 0, qnorm = 0;
    for (int i = 0; i < 160; ++i) {
      norm += big.data<double>()[i * 160] * big.data<double>()[i * 160];
      qnorm += Q.data<double>()[i] * Q.data<double>()[i];  // column-major: column 0 first
    }
    CHECK(std::abs(std::abs(R.data<double>()[0]) - std::sqrt(norm)) < 1e-9);
    CHECK(std::abs(qnorm - 1.0) < 1e-12);
    Tensor S = linalg::svdvals(batch);
    CHECK(S.size(0) == 64);
    CHECK(S.data<double>()[0] >= S.data<double>()[11]);
  }
  set_num_threads(saved);
}
