// The matrix exponential of each matrix of a batch, with PyTorch's algorithm: the optimized
// Taylor polynomials T1, T2, T4, T8, T12, T18 of
//   P. Bader, S. Blanes, F. Casas, "Computing the Matrix Exponential with an Optimized Taylor
//   Polynomial Approximation", Mathematics 7 (2019) 1174,
// the lowest degree whose error bound holds for the matrix's 1-norm, and for larger norms T18
// of A / 2^s squared s times. The degree is chosen per matrix (PyTorch groups a batch by
// degree, with the same result). Products go through Eigen on the row-major data in place.
#include <Eigen/Core>
#include <array>
#include <cmath>
#include <limits>

#include "dispatch/dtype_dispatch.h"
#include "kernels/linalg/batch.h"
#include "kernels/linalg/misc_stubs.h"

namespace ember {
namespace native {
namespace {

template <typename T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The largest 1-norm for which T1, T2, T4, T8, T12, T18 are accurate to the dtype's precision
// (the paper's Table; PyTorch's thetas).
template <typename R>
constexpr std::array<R, 6> kThetas = {};
template <>
constexpr std::array<float, 6> kThetas<float> = {1.192092800768788e-07f, 5.978858893805233e-04f,
                                                 5.116619363445086e-02f, 5.800524627688768e-01f,
                                                 1.461661507209034e+00f, 3.010066362817634e+00f};
template <>
constexpr std::array<double, 6> kThetas<double> = {2.220446049250313e-16, 2.580956802971767e-08,
                                                   3.397168839976962e-04, 4.991228871115323e-02,
                                                   2.996158913811580e-01, 1.090863719290036e+00};

// M += c * I.
template <typename T>
void add_identity(Mat<T>& m, T c) {
  m.diagonal().array() += c;
}

template <typename T>
Mat<T> taylor1(const Mat<T>& A) {
  Mat<T> E = A;
  add_identity(E, T(1));
  return E;
}

template <typename T>
Mat<T> taylor2(const Mat<T>& A) {
  Mat<T> E = A + T(0.5) * (A * A);
  add_identity(E, T(1));
  return E;
}

// I + A + A^2 (I / 2 + A / 6 + A^2 / 24)
template <typename T>
Mat<T> taylor4(const Mat<T>& A) {
  const Mat<T> A2 = A * A;
  Mat<T> inner = A / T(6) + A2 / T(24);
  add_identity(inner, T(0.5));
  Mat<T> E = A;
  E.noalias() += A2 * inner;
  add_identity(E, T(1));
  return E;
}

// Degree 8 with three products (the paper's construction for m = 8).
template <typename T, typename R>
Mat<T> taylor8(const Mat<T>& A) {
  // The coefficients are formed in double (they involve cancellations), then rounded.
  constexpr double sqrt_177 = 0.1330413469565007072504e+2;
  constexpr double x3 = 2.0 / 3.0;
  constexpr double x1 = x3 * ((1.0 + sqrt_177) / 88.0);
  constexpr double x2 = x3 * ((1.0 + sqrt_177) / 352.0);
  constexpr double x4 = (-271.0 + 29.0 * sqrt_177) / (315.0 * x3);
  constexpr double x5 = (-11.0 + 11.0 * sqrt_177) / (1260.0 * x3);
  constexpr double x6 = (-99.0 + 11.0 * sqrt_177) / (5040.0 * x3);
  // x3 squared, as in the paper (older PyTorch releases divided by x3 once, which left the
  // polynomial exact only to degree 4).
  constexpr double x7 = (89.0 - sqrt_177) / (5040.0 * x3 * x3);
  constexpr double y2 = (857.0 - 58.0 * sqrt_177) / 630.0;
  auto c = [](double v) { return T(static_cast<R>(v)); };
  const Mat<T> A2 = A * A;
  const Mat<T> A4 = A2 * (c(x1) * A + c(x2) * A2);
  Mat<T> right = c(x5) * A + c(x6) * A2 + c(x7) * A4;
  add_identity(right, c(x4));
  Mat<T> E = A + c(y2) * A2;
  E.noalias() += (c(x3) * A2 + A4) * right;
  add_identity(E, T(1));
  return E;
}

// B_i = sum_j b[i][j] P_j over the powers P = {I, A, A^2, A^3, A^6}.
template <typename T, typename R, size_t N>
Mat<T> combine(const std::array<R, N>& b, const std::array<const Mat<T>*, N>& powers) {
  Mat<T> B = T(b[1]) * *powers[1];
  for (size_t j = 2; j < N; ++j) {
    if (b[j] != R(0)) B += T(b[j]) * *powers[j];
  }
  add_identity(B, T(b[0]));
  return B;
}

// Degree 12 with four products.
template <typename T, typename R>
Mat<T> taylor12(const Mat<T>& A) {
  static constexpr std::array<std::array<double, 4>, 4> b = {{
      {9.0198e-16, 0.46932117595418237389, -0.20099424927047284052, -0.04623946134063071740},
      {5.31597895759871264183, 1.19926790417132231573, 0.01179296240992997031,
       0.01108844528519167989},
      {0.18188869982170434744, 0.05502798439925399070, 0.09351590770535414968,
       0.00610700528898058230},
      {-2.0861320e-13, -0.13181061013830184015, -0.02027855540589259079, -0.00675951846863086359},
  }};
  const Mat<T> A2 = A * A;
  const Mat<T> A3 = A * A2;
  const std::array<const Mat<T>*, 4> P = {nullptr, &A, &A2, &A3};
  auto row = [&](int i) {
    std::array<R, 4> r;
    for (int j = 0; j < 4; ++j) r[j] = static_cast<R>(b[i][j]);
    return combine<T, R, 4>(r, P);
  };
  const Mat<T> B0 = row(0);
  Mat<T> B1 = row(1);
  Mat<T> B2 = row(2);
  const Mat<T> B3 = row(3);
  B2.noalias() += B3 * B3;  // the A^6 terms
  B1 += B2;
  Mat<T> E = B0;
  E.noalias() += B1 * B2;
  return E;
}

// Degree 18 with five products.
template <typename T, typename R>
Mat<T> taylor18(const Mat<T>& A) {
  static constexpr std::array<std::array<double, 5>, 5> b = {{
      {0., -1.00365581030144618291e-01, -8.02924648241156932449e-03, -8.92138498045729985177e-04,
       0.},
      {0., 3.97849749499645077844e-01, 1.36783778460411720168e+00, 4.98289622525382669416e-01,
       -6.37898194594723280150e-04},
      {-1.09676396052962061844e+01, 1.68015813878906206114e+00, 5.71779846478865511061e-02,
       -6.98210122488052056106e-03, 3.34975017086070470649e-05},
      {-9.04316832390810593223e-02, -6.76404519071381882256e-02, 6.75961301770459654925e-02,
       2.95552570429315521194e-02, -1.39180257516060693404e-05},
      {0., 0., -9.23364619367118555360e-02, -1.69364939002081722752e-02,
       -1.40086798182036094347e-05},
  }};
  const Mat<T> A2 = A * A;
  const Mat<T> A3 = A * A2;
  const Mat<T> A6 = A3 * A3;
  const std::array<const Mat<T>*, 5> P = {nullptr, &A, &A2, &A3, &A6};
  auto row = [&](int i) {
    std::array<R, 5> r;
    for (int j = 0; j < 5; ++j) r[j] = static_cast<R>(b[i][j]);
    return combine<T, R, 5>(r, P);
  };
  const Mat<T> B0 = row(0);
  const Mat<T> B1 = row(1);
  Mat<T> B2 = row(2);
  Mat<T> B3 = row(3);
  const Mat<T> B4 = row(4);
  B3.noalias() += B0 * B4;  // the A^9 terms
  B2 += B3;
  Mat<T> E = B1;
  E.noalias() += B2 * B3;
  return E;
}

template <typename T>
void matrix_exp_one(const T* a, T* out, int64_t n) {
  using R = typename Eigen::NumTraits<T>::Real;
  const Eigen::Map<const Mat<T>> A(a, n, n);
  Eigen::Map<Mat<T>> result(out, n, n);
  // The 1-norm: the largest absolute column sum.
  const R norm = A.cwiseAbs().colwise().sum().maxCoeff();
  if (!std::isfinite(norm)) {
    // NaN or inf entries (or an overflowing sum): no polynomial is meaningful.
    result.setConstant(T(std::numeric_limits<R>::quiet_NaN()));
    return;
  }
  const std::array<R, 6>& theta = kThetas<R>;
  const Mat<T> Am = A;
  if (norm < theta[4]) {
    if (norm <= theta[0]) {
      result = taylor1<T>(Am);
    } else if (norm <= theta[1]) {
      result = taylor2<T>(Am);
    } else if (norm <= theta[2]) {
      result = taylor4<T>(Am);
    } else if (norm <= theta[3]) {
      result = taylor8<T, R>(Am);
    } else {
      result = taylor12<T, R>(Am);
    }
    return;
  }
  // Scaling and squaring: exp(A) = exp(A / 2^s)^(2^s) with |A / 2^s|_1 <= theta[5].
  const int s = std::max(0, static_cast<int>(std::ceil(std::log2(norm / theta[5]))));
  Mat<T> E = taylor18<T, R>(Am * T(std::ldexp(R(1), -s)));
  Mat<T> square(n, n);
  for (int i = 0; i < s; ++i) {
    square.noalias() = E * E;
    E.swap(square);
  }
  result = E;
}

void matrix_exp_kernel(const Tensor& out, const Tensor& a) {
  const int64_t batch = a.size(0), n = a.size(1);
  dispatch_dtype<kFloat32 | kFloat64 | kComplexTypes>(
      a.dtype(), "linalg.matrix_exp", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* in = a.data<T>();
        T* res = out.data<T>();
        // About 6 products of n^3 multiply-adds per matrix (more when the norm is large).
        linalg::for_each_matrix(batch, 6 * n * n * n, [&](int64_t b) {
          matrix_exp_one<T>(in + b * n * n, res + b * n * n, n);
        });
      });
}

}  // namespace

EMBER_REGISTER_KERNEL(matrix_exp_stub, CPU, matrix_exp_kernel);

}  // namespace native
}  // namespace ember
