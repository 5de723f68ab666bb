// Eigen against LAPACK (OpenBLAS from scipy-openblas32) for the spectral decompositions: the
// measurements behind docs/design/linalg.md's engine decision. Not part of the build:
//
//   SO=$(python -c "import scipy_openblas32 as s; print(s.get_lib_dir())")
//   g++ -O3 -march=native -fopenmp -DNDEBUG -I/usr/include/eigen3 benchmarks/linalg_engines.cpp \
//       -o /tmp/linalg_engines -L$SO -lscipy_openblas -Wl,-rpath,$SO
//   OMP_NUM_THREADS=1 /tmp/linalg_engines
//
// Prints microseconds per call (per batch for the 256x32x32 case): eigh (SelfAdjointEigenSolver
// vs dsyevd), svd (BDCSVD, JacobiSVD vs dgesdd), qr with Q formed (HouseholderQR vs dgeqrf +
// dorgqr), least squares (ColPivHouseholderQR, HouseholderQR vs dgelsy).
#include <omp.h>
#include <Eigen/Dense>
#include <Eigen/Eigenvalues>
#include <Eigen/SVD>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>
extern "C" {
void scipy_dsyevd_(const char*, const char*, const int*, double*, const int*, double*, double*,
                   const int*, int*, const int*, int*, size_t, size_t);
void scipy_dgesdd_(const char*, const int*, const int*, double*, const int*, double*, double*,
                   const int*, double*, const int*, double*, const int*, int*, int*, size_t);
void scipy_dgeqrf_(const int*, const int*, double*, const int*, double*, double*, const int*, int*);
void scipy_dorgqr_(const int*, const int*, const int*, double*, const int*, const double*, double*,
                   const int*, int*);
void scipy_dgelsy_(const int*, const int*, const int*, double*, const int*, double*, const int*,
                   int*, const double*, int*, double*, const int*, int*);
void scipy_openblas_set_num_threads(int);
}
using M = Eigen::MatrixXd;
template <class F>
double timeit(F f, int reps) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto a = std::chrono::steady_clock::now();
    f();
    auto b = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double>(b - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
int main(int argc, char** argv) {
  struct Case {
    int n, batch, reps;
  };
  Case cases[] = {{4, 1, 2001}, {64, 1, 201}, {512, 1, 7}, {32, 256, 21}};
  for (auto c : cases) {
    int n = c.n, B = c.batch;
    std::vector<M> A(B), S(B);
    for (int b = 0; b < B; ++b) {
      A[b] = M::Random(n, n);
      S[b] = A[b] + A[b].transpose();
    }
    auto par = [&](auto fn) {
      if (B == 1) {
        fn(0);
      } else {
#pragma omp parallel for schedule(static)
        for (int b = 0; b < B; ++b) fn(b);
      }
    };
    int nt = B == 1 ? omp_get_max_threads() : 1;
    scipy_openblas_set_num_threads(nt);
    double t_eigh_e =
        timeit([&] { par([&](int b) { Eigen::SelfAdjointEigenSolver<M> es(S[b]); }); }, c.reps);
    double t_eigh_l = timeit(
        [&] {
          par([&](int b) {
            M w = S[b];
            Eigen::VectorXd ev(n);
            int lw = 1 + 6 * n + 2 * n * n, li = 3 + 5 * n, info;
            std::vector<double> work(lw);
            std::vector<int> iw(li);
            scipy_dsyevd_("V", "L", &n, w.data(), &n, ev.data(), work.data(), &lw, iw.data(), &li,
                          &info, 1, 1);
          });
        },
        c.reps);
    double t_svd_e = timeit(
        [&] {
          par([&](int b) { Eigen::BDCSVD<M> s(A[b], Eigen::ComputeThinU | Eigen::ComputeThinV); });
        },
        c.reps);
    double t_svd_j =
        n <= 64 ? timeit(
                      [&] {
                        par([&](int b) {
                          Eigen::JacobiSVD<M> s(A[b], Eigen::ComputeThinU | Eigen::ComputeThinV);
                        });
                      },
                      c.reps)
                : 0;
    double t_svd_l = timeit(
        [&] {
          par([&](int b) {
            M w = A[b];
            M u(n, n), vt(n, n);
            Eigen::VectorXd s(n);
            int info, lw = -1;
            double q;
            std::vector<int> iw(8 * n);
            scipy_dgesdd_("S", &n, &n, w.data(), &n, s.data(), u.data(), &n, vt.data(), &n, &q, &lw,
                          iw.data(), &info, 1);
            lw = (int)q;
            std::vector<double> work(lw);
            scipy_dgesdd_("S", &n, &n, w.data(), &n, s.data(), u.data(), &n, vt.data(), &n,
                          work.data(), &lw, iw.data(), &info, 1);
          });
        },
        c.reps);
    double t_qr_e = timeit(
        [&] {
          par([&](int b) {
            Eigen::HouseholderQR<M> qr(A[b]);
            M Q = qr.householderQ() * M::Identity(n, n);
            M R = qr.matrixQR().triangularView<Eigen::Upper>();
          });
        },
        c.reps);
    double t_qr_l = timeit(
        [&] {
          par([&](int b) {
            M w = A[b];
            Eigen::VectorXd tau(n);
            int info, lw = -1;
            double q;
            scipy_dgeqrf_(&n, &n, w.data(), &n, tau.data(), &q, &lw, &info);
            lw = std::max((int)q, 64 * n);
            std::vector<double> work(lw);
            scipy_dgeqrf_(&n, &n, w.data(), &n, tau.data(), work.data(), &lw, &info);
            M R = w.triangularView<Eigen::Upper>();
            scipy_dorgqr_(&n, &n, &n, w.data(), &n, tau.data(), work.data(), &lw, &info);
          });
        },
        c.reps);
    double t_ls_e = timeit(
        [&] {
          par([&](int b) {
            Eigen::ColPivHouseholderQR<M> qr(A[b]);
            M x = qr.solve(S[b]);
          });
        },
        c.reps);
    double t_ls_e2 = timeit(
        [&] {
          par([&](int b) {
            Eigen::HouseholderQR<M> qr(A[b]);
            M x = qr.solve(S[b]);
          });
        },
        c.reps);
    double t_ls_l = timeit(
        [&] {
          par([&](int b) {
            M w = A[b], x = S[b];
            std::vector<int> jp(n, 0);
            double rc = 1e-15;
            int rank, info, lw = -1;
            double q;
            scipy_dgelsy_(&n, &n, &n, w.data(), &n, x.data(), &n, jp.data(), &rc, &rank, &q, &lw,
                          &info);
            lw = (int)q;
            std::vector<double> work(lw);
            scipy_dgelsy_(&n, &n, &n, w.data(), &n, x.data(), &n, jp.data(), &rc, &rank,
                          work.data(), &lw, &info);
          });
        },
        c.reps);
    printf(
        "n=%d batch=%d (us)  eigh eigen %.1f lapack %.1f | svd bdc %.1f jacobi %.1f lapack %.1f | "
        "qr eigen %.1f lapack %.1f | lstsq colpiv %.1f hh %.1f gelsy %.1f\n",
        n, B, t_eigh_e * 1e6, t_eigh_l * 1e6, t_svd_e * 1e6, t_svd_j * 1e6, t_svd_l * 1e6,
        t_qr_e * 1e6, t_qr_l * 1e6, t_ls_e * 1e6, t_ls_e2 * 1e6, t_ls_l * 1e6);
  }
}
