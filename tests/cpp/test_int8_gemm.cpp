// The int8 kernels (kernels/quantized_stubs.h) at every CPU capability level this machine
// supports, each called through its own registered kernel, against the scalar reference twins:
// the raw int32 sums must match exactly, for 7-bit and 8-bit activations, odd shapes (k not a
// multiple of 4, 32 or 64; m and n around the tile and panel sizes), extreme operands (255 x
// -128 everywhere, the case that saturates a naive vpmaddubsw) and extreme zero points; the
// dequantized float output to float rounding; the activation quantizer exactly.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/cpu_capability.h"
#include "kernels/quantized_stubs.h"

using namespace ember;
using namespace ember::native;

namespace {

struct Problem {
  int64_t m, n, k;
  std::vector<uint8_t> a;  // m x lda, zero beyond k
  int64_t lda;
  std::vector<int8_t> w;  // n x k
};

Problem make_problem(int64_t m, int64_t n, int64_t k, int amax, uint32_t seed, bool extreme) {
  Problem p{m, n, k, {}, int8_gemm_padded_k(k), {}};
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> da(0, amax), dw(-128, 127);
  p.a.assign(m * p.lda, 0);
  p.w.resize(n * k);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t e = 0; e < k; ++e) p.a[i * p.lda + e] = extreme ? amax : da(rng);
  }
  for (auto& v : p.w) v = extreme ? -128 : static_cast<int8_t>(dw(rng));
  return p;
}

std::vector<int32_t> raw_sums(const Problem& p, bool seven_bit, CpuCapability level) {
  PackedInt8Weights packed;
  auto pack = int8_pack_weights_stub.cpu_kernel_at(level);
  auto gemm = int8_gemm_stub.cpu_kernel_at(level);
  REQUIRE(pack != nullptr);
  REQUIRE(gemm != nullptr);
  pack(p.w.data(), p.n, p.k, p.k, packed);
  std::vector<int32_t> out(p.m * p.n, -1);
  Int8GemmArgs g;
  g.a = p.a.data();
  g.m = p.m;
  g.lda = p.lda;
  g.a_7bit = seven_bit;
  g.w = &packed;
  g.raw = out.data();
  g.ldo = p.n;
  gemm(g);
  return out;
}

std::vector<int32_t> reference_sums(const Problem& p) {
  PackedInt8Weights packed;
  int8_pack_weights_reference(p.w.data(), p.n, p.k, p.k, 8, packed);
  std::vector<int32_t> out(p.m * p.n, -1);
  Int8GemmArgs g;
  g.a = p.a.data();
  g.m = p.m;
  g.lda = p.lda;
  g.w = &packed;
  g.raw = out.data();
  g.ldo = p.n;
  int8_gemm_reference(g, p.w.data(), p.k);
  return out;
}

std::vector<CpuCapability> levels() {
  std::vector<CpuCapability> out;
  for (int l = 0; l <= static_cast<int>(max_cpu_capability()); ++l) {
    out.push_back(static_cast<CpuCapability>(l));
  }
  return out;
}

}  // namespace

TEST_CASE("int8 GEMM sums equal the reference at every level", "[int8]") {
  const int64_t shapes[][3] = {{1, 1, 1},   {1, 5, 3},    {3, 17, 13},  {8, 32, 64},
                               {9, 33, 65}, {65, 31, 31}, {7, 100, 77}, {130, 70, 200}};
  for (CpuCapability level : levels()) {
    for (const auto& s : shapes) {
      for (bool seven_bit : {true, false}) {
        const int amax = seven_bit ? 127 : 255;
        for (bool extreme : {false, true}) {
          const Problem p = make_problem(s[0], s[1], s[2], amax, 17 * s[0] + s[2], extreme);
          INFO("level " << cpu_capability_name(level) << " m " << s[0] << " n " << s[1] << " k "
                        << s[2] << (seven_bit ? " 7-bit" : " 8-bit")
                        << (extreme ? " extreme" : ""));
          CHECK(raw_sums(p, seven_bit, level) == reference_sums(p));
        }
      }
    }
  }
}

TEST_CASE("int8 GEMM epilogue: zero points, scales, bias and relu at every level", "[int8]") {
  const Problem p = make_problem(37, 45, 99, 255, 5, false);
  std::vector<float> scales(p.n), bias(p.n);
  std::vector<int32_t> zps(p.n);
  for (int64_t j = 0; j < p.n; ++j) {
    scales[j] = 0.001f * (j + 1);
    bias[j] = 0.5f - 0.03f * j;
    zps[j] = j % 2 ? -128 : 127;  // extreme weight zero points
  }
  std::vector<int32_t> row_sums(p.m, 0);
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t e = 0; e < p.k; ++e) row_sums[i] += p.a[i * p.lda + e];
  }
  for (bool relu : {false, true}) {
    for (bool with_zps : {false, true}) {
      Int8GemmArgs g;
      g.a = p.a.data();
      g.m = p.m;
      g.lda = p.lda;
      g.a_scale = 0.02f;
      g.a_zero_point = 255;  // extreme activation zero point
      g.a_row_sums = row_sums.data();
      g.w_scales = scales.data();
      g.w_zero_points = with_zps ? zps.data() : nullptr;
      g.bias = bias.data();
      g.relu = relu;
      g.ldo = p.n;
      PackedInt8Weights ref_packed;
      int8_pack_weights_reference(p.w.data(), p.n, p.k, p.k, 8, ref_packed);
      std::vector<float> want(p.m * p.n);
      g.w = &ref_packed;
      g.out = want.data();
      int8_gemm_reference(g, p.w.data(), p.k);
      // The reference itself against the definition, in double.
      for (int64_t i = 0; i < p.m; ++i) {
        for (int64_t j = 0; j < p.n; ++j) {
          double s = 0;
          const int zw = with_zps ? zps[j] : 0;
          for (int64_t e = 0; e < p.k; ++e) {
            s += double(p.a[i * p.lda + e] - 255) * double(p.w[j * p.k + e] - zw);
          }
          double y = s * 0.02 * scales[j] + bias[j];
          if (relu) y = std::max(y, 0.0);
          CHECK(std::abs(want[i * p.n + j] - y) <= 1e-5 * std::max(1.0, std::abs(y)));
        }
      }
      for (CpuCapability level : levels()) {
        PackedInt8Weights packed;
        int8_pack_weights_stub.cpu_kernel_at(level)(p.w.data(), p.n, p.k, p.k, packed);
        std::vector<float> got(p.m * p.n, std::numeric_limits<float>::quiet_NaN());
        g.w = &packed;
        g.out = got.data();
        int8_gemm_stub.cpu_kernel_at(level)(g);
        INFO("level " << cpu_capability_name(level) << " relu " << relu << " zps " << with_zps);
        for (size_t i = 0; i < got.size(); ++i) {
          REQUIRE(std::abs(got[i] - want[i]) <= 1e-6f * std::max(1.f, std::abs(want[i])));
        }
      }
    }
  }
}

TEST_CASE("activation quantizer and min/max equal the reference at every level", "[int8]") {
  std::mt19937 rng(3);
  std::normal_distribution<float> d(0.f, 3.f);
  const int64_t m = 5, k = 37, lda = int8_gemm_padded_k(k);
  std::vector<float> x(m * k);
  for (auto& v : x) v = d(rng);
  x[3] = 0.5f * 7;                                 // a tie that rounds to even
  x[4] = 1e30f;                                    // clamps to qmax
  x[5] = -1e30f;                                   // clamps to 0
  x[6] = std::numeric_limits<float>::quiet_NaN();  // lands on 0
  for (int32_t qmax : {127, 255}) {
    QuantizeRowsArgs q;
    q.x = x.data();
    q.m = m;
    q.k = k;
    q.ldx = k;
    q.inv_scale = 2.f;
    q.zero_point = 9;
    q.qmax = qmax;
    std::vector<uint8_t> want(m * lda, 77);
    q.a = want.data();
    q.lda = lda;
    quantize_rows_u8_reference(q);
    for (CpuCapability level : levels()) {
      std::vector<uint8_t> got(m * lda, 77);
      q.a = got.data();
      quantize_rows_u8_stub.cpu_kernel_at(level)(q);
      INFO("level " << cpu_capability_name(level) << " qmax " << qmax);
      CHECK(got == want);
    }
  }
  x[6] = 0.f;
  for (CpuCapability level : levels()) {
    float lo = 0, hi = 0;
    min_max_rows_stub.cpu_kernel_at(level)(x.data(), m, k, k, &lo, &hi);
    CHECK(lo == -1e30f);
    CHECK(hi == 1e30f);
    x[20] = std::numeric_limits<float>::quiet_NaN();
    min_max_rows_stub.cpu_kernel_at(level)(x.data(), m, k, k, &lo, &hi);
    CHECK(std::isnan(lo));
    CHECK(std::isnan(hi));
    x[20] = 0.f;
  }
}
