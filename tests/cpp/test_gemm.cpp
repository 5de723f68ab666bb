// gemm_stub against a plain triple-loop reference twin, for every back end (oneDNN float32 /
// bfloat16, Eigen float64 / complex, blocked integer loops), every operand layout, broadcast
// batches and alpha/beta; dot and vdot.
#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <random>
#include <thread>
#include <vector>

#include "api/gemm.h"
#include "api/shape_util.h"
#include "api/sort.h"
#include "core/cpu_capability.h"
#include "core/parallel.h"
#include "kernels/cpu/convert.h"
#include "kernels/gemm_stubs.h"

using namespace ember;
using namespace ember::native;  // the kernels and stubs under test

namespace {

// C = alpha * A @ B + beta * C with doubles (or complex doubles), the reference twin.
template <typename T>
void reference_gemm(const GemmParams& p, std::vector<std::complex<double>>& c) {
  auto at = [](const void* base, const GemmMatrix& g, int64_t b, int64_t i, int64_t j) {
    const T* t = static_cast<const T*>(base);
    return convert<complex128>(t[b * g.batch_stride + i * g.row_stride + j * g.col_stride]);
  };
  const complex128 alpha = p.alpha.to_complex(), beta = p.beta.to_complex();
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j) {
        complex128 s = 0;
        for (int64_t k = 0; k < p.k; ++k)
          s += at(p.a.data, p.a, b, i, k) * at(p.b.data, p.b, b, k, j);
        complex128 old = at(p.c.data, p.c, b, i, j);
        c[(b * p.m + i) * p.n + j] = alpha * s + (beta == 0.0 ? complex128(0) : beta * old);
      }
    }
  }
}

template <typename T>
void check_layouts(double tol) {
  std::mt19937 gen(42);
  std::uniform_int_distribution<int> dist(-3, 3);
  for (bool a_row : {true, false}) {
    for (bool b_row : {true, false}) {
      for (bool broadcast_a : {false, true}) {
        const int64_t batch = 3, m = 5, n = 7, k = 11;
        std::vector<T> a((broadcast_a ? 1 : batch) * m * k), b(batch * k * n), c(batch * m * n);
        for (auto& v : a) v = static_cast<T>(static_cast<float>(dist(gen)));
        for (auto& v : b) v = static_cast<T>(static_cast<float>(dist(gen)));
        for (auto& v : c) v = static_cast<T>(static_cast<float>(dist(gen)));
        GemmParams p;
        p.dtype = scalar_type_of<T>;
        p.batch = batch;
        p.m = m;
        p.n = n;
        p.k = k;
        p.a = {a.data(), broadcast_a ? 0 : m * k, a_row ? k : 1, a_row ? 1 : m};
        p.b = {b.data(), k * n, b_row ? n : 1, b_row ? 1 : k};
        p.c = {c.data(), m * n, n, 1};
        p.alpha = Scalar(int64_t(2));
        p.beta = Scalar(int64_t(3));
        std::vector<std::complex<double>> want(c.size());
        reference_gemm<T>(p, want);
        gemm_stub(Device(), p);
        for (size_t i = 0; i < c.size(); ++i) {
          INFO("dtype " << dtype_name(p.dtype) << " a_row " << a_row << " b_row " << b_row
                        << " broadcast " << broadcast_a << " at " << i);
          const complex128 got = convert<complex128>(c[i]);
          if constexpr (std::is_integral_v<T>) {
            CHECK(c[i] == static_cast<T>(static_cast<int64_t>(want[i].real())));
          } else {
            CHECK(std::abs(got - want[i]) <= tol * (1 + std::abs(want[i])));
          }
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("gemm back ends match the reference twin", "[gemm]") {
  check_layouts<float>(1e-6);
  check_layouts<double>(1e-12);
  check_layouts<BFloat16>(1e-2);
  check_layouts<Half>(1e-3);
  check_layouts<complex64>(1e-6);
  check_layouts<complex128>(1e-12);
  check_layouts<int8_t>(0);
  check_layouts<uint8_t>(0);
  check_layouts<int32_t>(0);
  check_layouts<int64_t>(0);
}

TEST_CASE("beta zero never reads C", "[gemm]") {
  std::vector<double> a{1, 2}, b{3, 4}, c{std::nan("")};
  GemmParams p;
  p.dtype = ScalarType::Float64;
  p.m = 1;
  p.n = 1;
  p.k = 2;
  p.a = {a.data(), 0, 2, 1};
  p.b = {b.data(), 0, 1, 1};
  p.c = {c.data(), 0, 1, 1};
  p.beta = Scalar(0.0);
  gemm_stub(Device(), p);
  CHECK(c[0] == 11.0);
  std::vector<float> af{1, 2}, bf{3, 4}, cf{std::nanf("")};
  p.dtype = ScalarType::Float32;
  p.a.data = af.data();
  p.b.data = bf.data();
  p.c.data = cf.data();
  gemm_stub(Device(), p);
  CHECK(cf[0] == 11.0f);
}

// The float32 GEMV kernel at every CPU level: row counts around its 4-row blocks, k around the
// vector widths (tails), a padded lda, y strided, beta 0 (y never read) and not; then gemm_stub
// routing m == 1 and n == 1 products, with a strided x, to it.
TEST_CASE("float32 matrix-vector products at every level", "[gemm]") {
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (int l = 0; l <= static_cast<int>(max_cpu_capability()); ++l) {
    const auto level = static_cast<CpuCapability>(l);
    for (int64_t rows : {1, 3, 4, 5, 9}) {
      for (int64_t k : {1, 3, 4, 8, 15, 16, 17, 31, 32, 33, 70}) {
        const int64_t lda = k + 3, incy = 2;
        std::vector<float> a(rows * lda), x(k), y(rows * incy);
        for (auto& v : a) v = dist(gen);
        for (auto& v : x) v = dist(gen);
        for (float beta : {0.f, 0.5f}) {
          for (auto& v : y) v = beta == 0.f ? std::nanf("") : dist(gen);
          std::vector<float> old(y);
          GemvArgs g;
          g.a = a.data();
          g.rows = rows;
          g.k = k;
          g.lda = lda;
          g.x = x.data();
          g.y = y.data();
          g.incy = incy;
          g.alpha = 1.5f;
          g.beta = beta;
          gemv_f32_stub.cpu_kernel_at(level)(g);
          for (int64_t i = 0; i < rows; ++i) {
            double dot = 0;
            for (int64_t e = 0; e < k; ++e) dot += double(a[i * lda + e]) * x[e];
            const double want = 1.5 * dot + (beta == 0.f ? 0.0 : beta * double(old[i * incy]));
            INFO("level " << cpu_capability_name(level) << " rows " << rows << " k " << k
                          << " beta " << beta << " row " << i);
            CHECK(std::abs(y[i * incy] - want) <= 1e-5 * (1 + k));
            CHECK(std::isnan(y[i * incy + 1]) == (beta == 0.f));  // the gaps untouched
          }
        }
      }
    }
  }
  // Through gemm_stub: x (1 x k, strided) @ B with B's columns contiguous, and A @ x (k x 1).
  const int64_t m = 6, k = 19;
  std::vector<float> a(m * k), xs(2 * k), c(m, 0.f);
  for (auto& v : a) v = dist(gen);
  for (auto& v : xs) v = dist(gen);
  for (bool row_vector : {true, false}) {
    GemmParams p;
    p.dtype = ScalarType::Float32;
    if (row_vector) {  // (1 x k) @ (k x m), B = a^T
      p.m = 1;
      p.n = m;
      p.k = k;
      p.a = {xs.data(), 0, 2 * k, 2};
      p.b = {a.data(), 0, 1, k};
      p.c = {c.data(), 0, m, 1};
    } else {  // (m x k) @ (k x 1)
      p.m = m;
      p.n = 1;
      p.k = k;
      p.a = {a.data(), 0, k, 1};
      p.b = {xs.data(), 0, 2, 1};
      p.c = {c.data(), 0, 1, 1};
    }
    std::vector<std::complex<double>> want(m);
    reference_gemm<float>(p, want);
    gemm_stub(Device(), p);
    for (int64_t i = 0; i < m; ++i) CHECK(std::abs(c[i] - want[i].real()) <= 1e-5);
  }
}

TEST_CASE("dot and vdot", "[gemm]") {
  std::vector<complex128> x{{1, 2}, {3, -1}, {0, 1}}, y{{2, 0}, {1, 1}, {-1, 3}};
  complex128 out;
  dot_stub(Device(), &out, ScalarType::Complex128, 3, x.data(), 1, y.data(), 1, true);
  complex128 want = 0;
  for (int i = 0; i < 3; ++i) want += std::conj(x[i]) * y[i];
  CHECK(std::abs(out - want) < 1e-12);
  std::vector<int8_t> xi(100, 3), yi(100, 5);  // 1500 wraps modulo 256 like PyTorch
  int8_t oi;
  dot_stub(Device(), &oi, ScalarType::Int8, 100, xi.data(), 1, yi.data(), 1, false);
  CHECK(oi == static_cast<int8_t>(1500));
}

TEST_CASE("library calls follow set_num_threads on every thread", "[gemm][parallel]") {
  // oneDNN sizes its teams from the calling thread's OpenMP default, which OpenMP keeps per
  // thread; sync_library_threads makes it Ember's count (and is what the primitive caches key
  // on, so a primitive made at one count is not reused at another).
  const int before = ember::get_num_threads();
  ember::set_num_threads(3);
  REQUIRE(ember::sync_library_threads() == 3);
  int seen = 0;
  std::thread worker([&] { seen = ember::sync_library_threads(); });
  worker.join();
  CHECK(seen == 3);
  ember::set_num_threads(1);
  CHECK(ember::sync_library_threads() == 1);
  ember::set_num_threads(before);
}

namespace {

// act(A @ B + bias) + residual with doubles, the reference twin of gemm_epilogue_stub.
double epilogue_reference(double dot, double bias, GemmActivation act, double residual) {
  double x = dot + bias;
  if (act == GemmActivation::Relu) x = x > 0 ? x : 0;
  if (act == GemmActivation::Gelu) x = 0.5 * x * std::erfc(-x / std::sqrt(2.0));
  return x + residual;
}

template <typename T>
void check_epilogue(double tol) {
  std::mt19937 gen(7);
  std::normal_distribution<double> dist(0.0, 1.0);
  const int64_t m = 37, n = 45, k = 29;  // odd sizes: the vector tails run
  std::vector<T> a(m * k), w(n * k), bias(n), res(m * (n + 3)), c(m * n);
  for (auto* v : {&a, &w, &bias, &res}) {
    for (auto& x : *v) x = static_cast<T>(dist(gen));
  }
  for (auto act : {GemmActivation::None, GemmActivation::Relu, GemmActivation::Gelu}) {
    for (bool with_bias : {false, true}) {
      for (bool with_residual : {false, true}) {
        GemmParams p;
        p.dtype = scalar_type_of<T>;
        p.m = m;
        p.n = n;
        p.k = k;
        p.a = {a.data(), 0, k, 1};
        p.b = {w.data(), 0, 1, k};  // B = w^T, as the fastpath's linears
        p.c = {c.data(), 0, n, 1};
        GemmEpilogue e;
        e.bias = with_bias ? bias.data() : nullptr;
        e.activation = act;
        e.residual = with_residual ? res.data() : nullptr;
        e.residual_row_stride = n + 3;  // a strided residual
        gemm_epilogue_stub(Device(), p, e);
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double dot = 0;
            for (int64_t q = 0; q < k; ++q) dot += double(a[i * k + q]) * double(w[j * k + q]);
            const double want =
                epilogue_reference(dot, with_bias ? double(bias[j]) : 0.0, act,
                                   with_residual ? double(res[i * (n + 3) + j]) : 0.0);
            INFO("act " << int(act) << " bias " << with_bias << " residual " << with_residual);
            REQUIRE(std::abs(double(c[i * n + j]) - want) <= tol * (1 + std::abs(want)));
          }
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("gemm epilogues: bias, relu / gelu and residual fused into the product", "[gemm]") {
  check_epilogue<float>(2e-5);    // oneDNN's post-ops (or the packed kernel's, on Intel)
  check_epilogue<double>(1e-12);  // the plain GEMM, then the epilogue loop
  // Ember's packed float32 kernel's epilogue, on any AVX-512 core.
  set_packed_sgemm_mode(PackedSgemmMode::Always);
  check_epilogue<float>(2e-5);
  set_packed_sgemm_mode(PackedSgemmMode::Auto);
}

TEST_CASE("the packed float32 GEMM: layouts, remainders, k blocks, threads", "[gemm]") {
  // Note [A packed float32 GEMM for wide products]. "always" hands it every product it can lay
  // out; it takes them on AVX-512 levels and declines below. Sizes cross the 14-row and
  // 32-column tiles, the 16-wide packing transposes, k blocks (k > 1024) and row blocks.
  set_packed_sgemm_mode(PackedSgemmMode::Always);
#if defined(EMBER_TEST_HAS_AVX512_KERNELS)
  const bool avx512 = cpu_capability() >= CpuCapability::Avx512;
#else
  const bool avx512 = false;  // a baseline-only build (the sanitizer one): no AVX-512 copy
#endif
  std::mt19937 gen(9);
  std::normal_distribution<float> dist(0.f, 1.f);
  struct Shape {
    int64_t m, n, k;
  };
  const int saved_threads = get_num_threads();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (Shape s : {Shape{1, 1, 1}, Shape{13, 7, 5}, Shape{29, 70, 33}, Shape{45, 33, 1100},
                    Shape{1030, 8, 1024}}) {
      for (bool b_transposed : {true, false}) {  // a Linear's W^T, or a row-major B
        for (int beta : {0, 1}) {
          std::vector<float> a(s.m * (s.k + 3)), b(s.k * s.n + 5), c(s.m * s.n);
          for (auto& v : a) v = dist(gen);
          for (auto& v : b) v = dist(gen);
          for (auto& v : c) v = beta == 0 ? std::nanf("") : dist(gen);  // beta 0: never read
          GemmParams p;
          p.dtype = ScalarType::Float32;
          p.m = s.m;
          p.n = s.n;
          p.k = s.k;
          p.a = {a.data(), 0, s.k + 3, 1};  // rows 3 floats longer than k
          p.b = b_transposed ? GemmMatrix{b.data(), 0, 1, s.k} : GemmMatrix{b.data(), 0, s.n, 1};
          p.c = {c.data(), 0, s.n, 1};
          p.beta = Scalar(int64_t(beta));
          std::vector<std::complex<double>> want(c.size());
          reference_gemm<float>(p, want);
          const bool taken = packed_sgemm_stub(Device(), p, nullptr);
          CHECK(taken == avx512);
          if (!taken) gemm_stub(Device(), p);
          for (size_t i = 0; i < c.size(); ++i) {
            INFO("m " << s.m << " n " << s.n << " k " << s.k << " b_transposed " << b_transposed
                      << " beta " << beta << " threads " << threads << " at " << i);
            REQUIRE(std::abs(c[i] - want[i].real()) <=
                    2e-5 * (1 + std::sqrt(double(s.k))) * (1 + std::abs(want[i].real())));
          }
        }
      }
    }
  }
  set_num_threads(saved_threads);
  set_packed_sgemm_mode(PackedSgemmMode::Auto);
}
