// The linalg solve family's kernels through their stubs: LAPACK's pivots and infos, in-place
// layouts, broadcast batches, and the public ops' identities on small exact examples.
#include <catch2/catch.hpp>
#include <cmath>
#include <complex>

#include "api/linalg/common.h"
#include "api/linalg/solve.h"
#include "core/factory.h"

using namespace ember;
using namespace ember::native;  // the kernels and stubs under test

namespace {

// A (rows, cols) column-major float64 matrix from row-major values.
Tensor col_major(std::initializer_list<double> values, int64_t rows, int64_t cols) {
  Tensor t = native::linalg::empty_column_major({rows, cols}, ScalarType::Float64, "test");
  double* p = t.data<double>();
  int64_t i = 0;
  for (double v : values) {
    p[(i % cols) * rows + i / cols] = v;
    ++i;
  }
  return t;
}

double at(const Tensor& t, int64_t i, int64_t j) {
  return t.data<double>()[i * t.stride(0) + j * t.stride(1)];
}

}  // namespace

TEST_CASE("lu_factor_stub returns LAPACK's pivots and factors", "[linalg]") {
  // getrf on [[1, 2], [3, 4]]: pivot row 2, L = [[1, 0], [1/3, 1]], U = [[3, 4], [0, 2/3]].
  Tensor LU = col_major({1, 2, 3, 4}, 2, 2);
  Tensor piv = native::linalg::empty_int32({2}, "test");
  Tensor info = native::linalg::empty_int32({}, "test");
  lu_factor_stub(Device(), LU, piv, info, true);
  CHECK(piv.data<int32_t>()[0] == 2);
  CHECK(piv.data<int32_t>()[1] == 2);
  CHECK(info.data<int32_t>()[0] == 0);
  CHECK(at(LU, 0, 0) == Approx(3));
  CHECK(at(LU, 0, 1) == Approx(4));
  CHECK(at(LU, 1, 0) == Approx(1.0 / 3));
  CHECK(at(LU, 1, 1) == Approx(2.0 / 3));
}

TEST_CASE("lu_factor_stub reports the first zero pivot and carries on", "[linalg]") {
  Tensor LU = col_major({0, 1, 0, 0, 0, 1, 0, 0, 0}, 3, 3);  // column 0 and row 2 are zero
  Tensor piv = native::linalg::empty_int32({3}, "test");
  Tensor info = native::linalg::empty_int32({}, "test");
  lu_factor_stub(Device(), LU, piv, info, true);
  CHECK(info.data<int32_t>()[0] == 1);
  for (int i = 0; i < 3; ++i) CHECK(std::isfinite(at(LU, i, i)));
}

TEST_CASE("cholesky_stub names the failing leading minor", "[linalg]") {
  Tensor A = col_major({4, 2, 2, 1}, 2, 2);  // 4 * 1 - 2 * 2 = 0: not positive-definite
  Tensor info = native::linalg::empty_int32({}, "test");
  cholesky_stub(Device(), A, info, false, false);
  CHECK(info.data<int32_t>()[0] == 2);
  Tensor B = col_major({4, 2, 2, 5}, 2, 2);
  cholesky_stub(Device(), B, info, false, false);
  CHECK(info.data<int32_t>()[0] == 0);
  CHECK(at(B, 0, 0) == Approx(2));
  CHECK(at(B, 1, 0) == Approx(1));
  CHECK(at(B, 1, 1) == Approx(2));
  CHECK(at(B, 0, 1) == 0);  // the other triangle is zeroed
}

TEST_CASE("cholesky_stub reads the triangle stored transposed in the other one", "[linalg]") {
  // The lower triangle of [[4, 2], [2, 5]] held in the upper one; junk (7) where it is written.
  Tensor B = col_major({4, 2, 7, 5}, 2, 2);
  Tensor info = native::linalg::empty_int32({}, "test");
  cholesky_stub(Device(), B, info, false, true);
  CHECK(info.data<int32_t>()[0] == 0);
  CHECK(at(B, 0, 0) == Approx(2));
  CHECK(at(B, 1, 0) == Approx(1));
  CHECK(at(B, 1, 1) == Approx(2));
  CHECK(at(B, 0, 1) == 0);
  Tensor U = col_major({4, 7, 2, 5}, 2, 2);  // upper triangle held in the lower one
  cholesky_stub(Device(), U, info, true, true);
  CHECK(info.data<int32_t>()[0] == 0);
  CHECK(at(U, 0, 1) == Approx(1));
  CHECK(at(U, 1, 0) == 0);
}

TEST_CASE("triangular_solve_stub covers the four ops on either triangle", "[linalg]") {
  // T = [[2, 1], [0, 4]] (upper); b = [4, 8].
  const Tensor T = col_major({2, 1, 0, 4}, 2, 2);
  auto solve = [&](bool upper, MatrixOp op) {
    Tensor b = col_major({4, 8}, 2, 1);
    triangular_solve_stub(Device(), T, b, upper, false, op);
    return std::make_pair(at(b, 0, 0), at(b, 1, 0));
  };
  auto x = solve(true, MatrixOp::None);  // 2 x0 + x1 = 4, 4 x1 = 8
  CHECK(x.first == Approx(1));
  CHECK(x.second == Approx(2));
  x = solve(true, MatrixOp::Transpose);  // 2 x0 = 4, x0 + 4 x1 = 8
  CHECK(x.first == Approx(2));
  CHECK(x.second == Approx(1.5));
  x = solve(false, MatrixOp::None);  // lower triangle [[2, 0], [0, 4]]
  CHECK(x.first == Approx(2));
  CHECK(x.second == Approx(2));
}

TEST_CASE("linalg ops: det, inverse and solve agree on a small system", "[linalg]") {
  Tensor A = empty_tensor({2, 2}, ScalarType::Float64, Device(), "test");
  double* a = A.data<double>();
  a[0] = 1;
  a[1] = 2;
  a[2] = 3;
  a[3] = 4;
  CHECK(ember::linalg_det(A).data<double>()[0] == Approx(-2));
  Tensor inv = ember::linalg_inv(A);
  CHECK(at(inv, 0, 0) == Approx(-2));
  CHECK(at(inv, 0, 1) == Approx(1));
  CHECK(at(inv, 1, 0) == Approx(1.5));
  CHECK(at(inv, 1, 1) == Approx(-0.5));
  Tensor b = empty_tensor({2}, ScalarType::Float64, Device(), "test");
  b.data<double>()[0] = 5;
  b.data<double>()[1] = 6;
  Tensor x = ember::linalg_solve(A, b, true);
  REQUIRE(x.dim() == 1);
  CHECK(x.data<double>()[0 * x.stride(0)] == Approx(-4));
  CHECK(x.data<double>()[1 * x.stride(0)] == Approx(4.5));
  Tensor singular = empty_tensor({2, 2}, ScalarType::Float64, Device(), "test");
  for (int i = 0; i < 4; ++i) singular.data<double>()[i] = 1;
  CHECK_THROWS_AS(ember::linalg_inv(singular), LinAlgError);
  CHECK(std::get<1>(ember::linalg_inv_ex(singular, false)).data<int32_t>()[0] == 2);
}
