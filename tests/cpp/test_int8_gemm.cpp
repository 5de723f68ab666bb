// The int8 kernels (kernels/quantized_stubs.h) at every CPU capability level this machine
// supports, each called through its own registered kernel, against the scalar reference twins:
// the raw int32 sums must match exactly, for 7-bit and 8-bit activations, odd shapes (k not a
// multiple of 4, 32 or 64; m and n around the tile and panel sizes), extreme operands (255 x
// -128 everywhere, the case that saturates a naive vpmaddubsw) and extreme zero points; the
// dequantized float output to float rounding; the activation quantizer exactly.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
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

namespace {
// fill_a callback over a Problem's rows (what the quantized convolution's unfolding provides).
void fill_from_problem(const void* context, int64_t i0, int64_t i1, uint8_t* a, int64_t lda) {
  const Problem& p = *static_cast<const Problem*>(context);
  for (int64_t i = i0; i < i1; ++i) {
    std::memcpy(a + (i - i0) * lda, p.a.data() + i * p.lda, static_cast<size_t>(lda));
  }
}
}  // namespace

TEST_CASE("int8 GEMM with mostly 7-bit 8-bit activations picks the product tile by tile",
          "[int8]") {
  // 8-bit activations whose rows are <= 127 except a few (the outliers past a reduce_range
  // calibration): the levels without VNNI take the 7-bit product for the clean tiles, which
  // must not change a sum; with rows made on the fly too.
  for (CpuCapability level : levels()) {
    Problem p = make_problem(150, 40, 70, 127, 31, false);
    for (int64_t i : {0, 5, 17, 64, 100, 149}) p.a[i * p.lda + (i % p.k)] = 255;
    INFO("level " << cpu_capability_name(level));
    CHECK(raw_sums(p, false, level) == reference_sums(p));
    PackedInt8Weights packed;
    int8_pack_weights_stub.cpu_kernel_at(level)(p.w.data(), p.n, p.k, p.k, packed);
    std::vector<int32_t> raw(p.m * p.n, -1);
    Int8GemmArgs g;
    g.m = p.m;
    g.lda = p.lda;
    g.w = &packed;
    g.raw = raw.data();
    g.ldo = p.n;
    g.fill_a = fill_from_problem;
    g.fill_a_context = &p;
    int8_gemm_stub.cpu_kernel_at(level)(g);
    CHECK(raw == reference_sums(p));
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

TEST_CASE("int8 GEMM requantizing epilogue at every level", "[int8]") {
  const Problem p = make_problem(29, 70, 77, 255, 9, false);
  std::vector<float> scales(p.n), bias(p.n);
  for (int64_t j = 0; j < p.n; ++j) {
    scales[j] = 0.002f * (1 + j % 5);
    bias[j] = 0.25f * (j % 7) - 0.7f;
  }
  for (bool relu : {false, true}) {
    Int8GemmArgs g;
    g.a = p.a.data();
    g.m = p.m;
    g.lda = p.lda;
    g.a_scale = 0.01f;
    g.a_zero_point = 3;
    g.w_scales = scales.data();
    g.bias = bias.data();
    g.relu = relu;
    g.ldo = p.n;
    PackedInt8Weights ref_packed;
    int8_pack_weights_reference(p.w.data(), p.n, p.k, p.k, 8, ref_packed);
    g.w = &ref_packed;
    std::vector<float> real(p.m * p.n);
    g.out = real.data();
    int8_gemm_reference(g, p.w.data(), p.k);
    // Requantized: exactly quantize_per_tensor(y, 0.05, 100) of the float result, clamps hit.
    std::vector<uint8_t> want(p.m * p.n);
    g.out = nullptr;
    g.out_u8 = want.data();
    g.out_inv_scale = 1.f / 0.05f;
    g.out_zero_point = 100;
    int8_gemm_reference(g, p.w.data(), p.k);
    bool clamped_low = false, clamped_high = false;
    for (size_t i = 0; i < want.size(); ++i) {
      const float q = std::nearbyint(real[i] * (1.f / 0.05f)) + 100.f;
      CHECK(want[i] == static_cast<uint8_t>(std::min(std::max(q, 0.f), 255.f)));
      clamped_low |= q < 0.f;
      clamped_high |= q > 255.f;
    }
    CHECK((relu || clamped_low));
    CHECK(clamped_high);
    for (CpuCapability level : levels()) {
      PackedInt8Weights packed;
      int8_pack_weights_stub.cpu_kernel_at(level)(p.w.data(), p.n, p.k, p.k, packed);
      std::vector<uint8_t> got(p.m * p.n, 7);
      g.w = &packed;
      g.out_u8 = got.data();
      int8_gemm_stub.cpu_kernel_at(level)(g);
      INFO("level " << cpu_capability_name(level) << " relu " << relu);
      // The kernels may fuse the multiply-add, which can move a value across a rounding
      // midpoint: one step at most.
      for (size_t i = 0; i < got.size(); ++i) REQUIRE(std::abs(int(got[i]) - int(want[i])) <= 1);
    }
  }
}

// The integer requantization (saturating packs) against the reference's float clamp where
// values leave int16 and int32: huge, infinite and NaN biases, odd and even widths (a row's two
// vectors, and two rows' one vector), each zero point's extremes.
TEST_CASE("int8 GEMM requantization saturates huge, infinite and NaN values", "[int8]") {
  const float specials[] = {1e30f, -1e30f, INFINITY, -INFINITY, NAN, 4e4f, -4e4f, 1e9f, -1e9f};
  for (int64_t n : {16, 24, 40}) {
    const Problem p = make_problem(13, n, 21, 255, 5, false);
    std::vector<float> scales(p.n, 0.003f), bias(p.n);
    for (int64_t j = 0; j < p.n; ++j) bias[j] = j % 2 ? specials[j / 2 % 9] : 0.1f * j;
    for (int32_t zero_point : {0, 128, 255}) {
      for (bool relu : {false, true}) {
        Int8GemmArgs g;
        g.a = p.a.data();
        g.m = p.m;
        g.lda = p.lda;
        g.a_scale = 0.01f;
        g.a_zero_point = 3;
        g.w_scales = scales.data();
        g.bias = bias.data();
        g.relu = relu;
        g.ldo = p.n;
        g.out_inv_scale = 1.f / 0.05f;
        g.out_zero_point = zero_point;
        PackedInt8Weights ref_packed;
        int8_pack_weights_reference(p.w.data(), p.n, p.k, p.k, 8, ref_packed);
        g.w = &ref_packed;
        std::vector<uint8_t> want(p.m * p.n);
        g.out_u8 = want.data();
        int8_gemm_reference(g, p.w.data(), p.k);
        for (CpuCapability level : levels()) {
          PackedInt8Weights packed;
          int8_pack_weights_stub.cpu_kernel_at(level)(p.w.data(), p.n, p.k, p.k, packed);
          std::vector<uint8_t> got(p.m * p.n, 7);
          g.w = &packed;
          g.out_u8 = got.data();
          int8_gemm_stub.cpu_kernel_at(level)(g);
          INFO("level " << cpu_capability_name(level) << " n " << n << " zp " << zero_point
                        << " relu " << relu);
          for (size_t i = 0; i < got.size(); ++i) {
            const float b = bias[i % p.n];
            if (std::isnan(b)) {  // NaN stores 0, or under ReLU (max(NaN, 0) = 0) the zero point
              REQUIRE(int(got[i]) == (relu ? zero_point : 0));
            } else {
              REQUIRE(std::abs(int(got[i]) - int(want[i])) <= 1);
            }
          }
        }
      }
    }
  }
}

// A transposed convolution's output row from its gathered contributions: 0-9 taps a pixel,
// channel counts around the vector widths (tails), a group offset, with and without bias, and
// sums whose requantization clamps at both ends.
TEST_CASE("transposed convolution tap sums equal the reference at every level", "[int8]") {
  std::mt19937 rng(47);
  std::uniform_int_distribution<int> dv(-3000, 3000), dcount(0, 9);
  int clamped_low = 0, clamped_high = 0;
  for (int64_t channels : {1, 7, 8, 16, 17, 33, 64}) {
    const int64_t offset = 5, pixels = 11, stride = offset + channels + 3;
    std::vector<float> columns(40 * stride);
    for (auto& v : columns) v = static_cast<float>(dv(rng));
    std::vector<const float*> taps;
    std::vector<int64_t> begin{0};
    for (int64_t x = 0; x < pixels; ++x) {
      for (int n = dcount(rng); n > 0; --n) taps.push_back(&columns[(rng() % 40) * stride]);
      begin.push_back(static_cast<int64_t>(taps.size()));
    }
    std::vector<float> bias(channels);
    for (int64_t k = 0; k < channels; ++k) bias[k] = 0.5f * static_cast<float>(k % 7) - 1.5f;
    for (bool with_bias : {true, false}) {
      TapSumsArgs p;
      p.taps = taps.data();
      p.tap_begin = begin.data();
      p.pixels = pixels;
      p.channels = channels;
      p.offset = offset;
      p.scale = 0.0007f;
      p.bias = with_bias ? bias.data() : nullptr;
      p.inv_scale = 1.f / 0.02f;
      p.zero_point = 90;
      p.ldo = channels + 2;
      std::vector<uint8_t> want(pixels * p.ldo, 5);
      p.out = want.data();
      tap_sums_u8_reference(p);
      for (uint8_t v : want) clamped_low += v == 0, clamped_high += v == 255;
      for (CpuCapability level : levels()) {
        INFO("level " << cpu_capability_name(level) << " channels " << channels << " bias "
                      << with_bias);
        std::vector<uint8_t> got(pixels * p.ldo, 5);
        p.out = got.data();
        tap_sums_u8_stub.cpu_kernel_at(level)(p);
        for (size_t i = 0; i < got.size(); ++i) {  // one step: a fused multiply-add may round
          REQUIRE(std::abs(int(got[i]) - int(want[i])) <= 1);
        }
      }
    }
  }
  CHECK(clamped_low > 0);
  CHECK(clamped_high > 0);
}

TEST_CASE("int8 GEMM with rows made on the fly equals the reference at every level", "[int8]") {
  // Several row blocks and a partial one; weight zero points make the kernel sum each block.
  const Problem p = make_problem(203, 40, 45, 255, 11, false);
  std::vector<float> scales(p.n, 0.01f);
  std::vector<int32_t> zps(p.n);
  for (int64_t j = 0; j < p.n; ++j) zps[j] = j % 3 - 1;
  std::vector<int32_t> row_sums(p.m, 0);
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t e = 0; e < p.k; ++e) row_sums[i] += p.a[i * p.lda + e];
  }
  Int8GemmArgs g;
  g.a = p.a.data();
  g.m = p.m;
  g.lda = p.lda;
  g.a_scale = 0.5f;
  g.a_zero_point = 17;
  g.a_row_sums = row_sums.data();
  g.w_scales = scales.data();
  g.w_zero_points = zps.data();
  g.ldo = p.n;
  PackedInt8Weights ref_packed;
  int8_pack_weights_reference(p.w.data(), p.n, p.k, p.k, 8, ref_packed);
  g.w = &ref_packed;
  std::vector<float> want(p.m * p.n);
  g.out = want.data();
  int8_gemm_reference(g, p.w.data(), p.k);
  for (CpuCapability level : levels()) {
    INFO("level " << cpu_capability_name(level));
    PackedInt8Weights packed;
    int8_pack_weights_stub.cpu_kernel_at(level)(p.w.data(), p.n, p.k, p.k, packed);
    Int8GemmArgs f = g;
    f.a = nullptr;
    f.a_row_sums = nullptr;
    f.fill_a = fill_from_problem;
    f.fill_a_context = &p;
    f.w = &packed;
    std::vector<int32_t> raw(p.m * p.n, -1);
    f.raw = raw.data();
    int8_gemm_stub.cpu_kernel_at(level)(f);
    CHECK(raw == reference_sums(p));
    f.raw = nullptr;
    std::vector<float> got(p.m * p.n, std::numeric_limits<float>::quiet_NaN());
    f.out = got.data();
    int8_gemm_stub.cpu_kernel_at(level)(f);
    for (size_t i = 0; i < got.size(); ++i) {
      REQUIRE(std::abs(got[i] - want[i]) <= 1e-6f * std::max(1.f, std::abs(want[i])));
    }
  }
}

TEST_CASE("quantized add and mul equal the reference at every level", "[int8]") {
  std::mt19937 rng(21);
  std::uniform_int_distribution<int> d(0, 255);
  for (int64_t n : {1, 7, 16, 33, 1000}) {
    std::vector<uint8_t> a(n), b(n);
    for (auto& v : a) v = static_cast<uint8_t>(d(rng));
    for (auto& v : b) v = static_cast<uint8_t>(d(rng));
    for (QuantizedBinaryOp op : {QuantizedBinaryOp::kAdd, QuantizedBinaryOp::kMul}) {
      for (bool relu : {false, true}) {
        QuantizedBinaryArgs p;
        p.a = a.data();
        p.b = b.data();
        p.n = n;
        p.op = op;
        p.a_scale = 0.05f;
        p.b_scale = 0.02f;
        p.a_zero_point = 128;
        p.b_zero_point = 3;
        p.out_inv_scale = 1.f / 0.04f;
        p.out_zero_point = 100;
        p.relu = relu;
        std::vector<uint8_t> want(n);
        p.out = want.data();
        quantized_binary_u8_reference(p);
        for (CpuCapability level : levels()) {
          INFO("level " << cpu_capability_name(level) << " n " << n << " relu " << relu);
          std::vector<uint8_t> got(n + 1, 77);  // one guard byte past the end
          p.out = got.data();
          quantized_binary_u8_stub.cpu_kernel_at(level)(p);
          CHECK(got[n] == 77);
          // A fused multiply-add may move a value across a rounding midpoint: one step.
          for (int64_t i = 0; i < n; ++i) REQUIRE(std::abs(int(got[i]) - int(want[i])) <= 1);
        }
      }
    }
  }
}

namespace {

struct DepthwiseGeometry {
  int64_t kernel, stride, dilation, padding;
};

// Float copies of the taps and their kernel-row sums: what the interior fast path reads.
void add_float_taps(DepthwiseArgs& p, const std::vector<int32_t>& taps, std::vector<float>& taps_f,
                    std::vector<float>& row_sums) {
  taps_f.assign(taps.begin(), taps.end());
  row_sums.assign(p.kernel[0] * p.c, 0.f);
  for (int64_t i = 0; i < p.kernel[0]; ++i) {
    for (int64_t j = 0; j < p.kernel[1]; ++j) {
      for (int64_t c = 0; c < p.c; ++c)
        row_sums[i * p.c + c] += taps_f[(i * p.kernel[1] + j) * p.c + c];
    }
  }
  p.taps_f = taps_f.data();
  p.row_sums_f = row_sums.data();
  p.float_exact = true;
}

}  // namespace

// Geometries with interior fast paths (3 and 5 wide, strides 1 and 2) and without (a dilation,
// 7 wide); channel counts that fill 4, 2 and 1 vectors and leave lanes over; work ranges that
// start and end mid-row, as parallel_for cuts them.
TEST_CASE("depthwise convolution equals the reference at every level", "[int8]") {
  std::mt19937 rng(41);
  std::uniform_int_distribution<int> dx(0, 255), dw(-255, 255);
  const DepthwiseGeometry geometries[] = {{3, 1, 1, 1}, {3, 2, 1, 1}, {5, 1, 1, 2},
                                          {5, 2, 1, 0}, {3, 1, 2, 1}, {7, 1, 1, 3}};
  for (const DepthwiseGeometry& geo : geometries) {
    for (int64_t c : {1, 7, 16, 37, 80}) {
      DepthwiseArgs p;
      p.h = 9;
      p.w = 14;
      p.c = c;
      p.kernel[0] = p.kernel[1] = geo.kernel;
      p.stride[0] = p.stride[1] = geo.stride;
      p.padding[0] = p.padding[1] = geo.padding;
      p.dilation[0] = p.dilation[1] = geo.dilation;
      const int64_t extent = (geo.kernel - 1) * geo.dilation + 1;
      p.oh = (p.h + 2 * geo.padding - extent) / geo.stride + 1;
      p.ow = (p.w + 2 * geo.padding - extent) / geo.stride + 1;
      const int64_t taps_n = geo.kernel * geo.kernel;
      std::vector<uint8_t> x(2 * p.h * p.w * c);
      for (auto& v : x) v = static_cast<uint8_t>(dx(rng));
      std::vector<int32_t> taps(taps_n * c);
      for (auto& v : taps) v = dw(rng);
      std::vector<float> scales(c), bias(c), taps_f, row_sums;
      for (int64_t i = 0; i < c; ++i) {
        scales[i] = 0.0004f * (1 + i % 3) / geo.kernel;
        bias[i] = 0.3f * (i % 5) - 0.6f;
      }
      p.x = x.data();
      p.taps = taps.data();
      p.scales = scales.data();
      p.bias = bias.data();
      p.out_inv_scale = 1.f / 0.05f;
      p.out_zero_point = 70;
      p.ldo = c;
      const int64_t rows = 2 * p.oh * p.ow;
      for (int32_t x_zero_point : {131, 0, 255}) {
        p.x_zero_point = x_zero_point;
        for (bool relu : {false, true}) {
          p.relu = relu;
          p.float_exact = false;
          p.taps_f = p.row_sums_f = nullptr;
          std::vector<uint8_t> want(rows * c);
          p.out = want.data();
          p.r0 = 0;
          p.r1 = rows;
          depthwise_u8_reference(p);
          add_float_taps(p, taps, taps_f, row_sums);
          for (CpuCapability level : levels()) {
            INFO("level " << cpu_capability_name(level) << " kernel " << geo.kernel << " stride "
                          << geo.stride << " dilation " << geo.dilation << " c " << c << " x_zp "
                          << x_zero_point << " relu " << relu);
            std::vector<uint8_t> got(rows * c, 3);
            p.out = got.data();
            const int64_t cuts[] = {0, 5, p.ow + 3, rows / 2 + 1, rows};
            for (int k = 0; k + 1 < 5; ++k) {
              DepthwiseArgs part = p;
              part.r0 = cuts[k];
              part.r1 = cuts[k + 1];
              depthwise_u8_stub.cpu_kernel_at(level)(part);
            }
            for (size_t i = 0; i < got.size(); ++i) {
              REQUIRE(std::abs(int(got[i]) - int(want[i])) <= 1);
            }
          }
        }
      }
    }
  }
}

// Groups of 2, 4, 8 and 16 (spread within a vector, or wider than a vector at the lower
// levels), stems (1 to 5 inputs, outputs in whole vectors or not: the scalar form), channel
// counts that leave lanes over, borders, strides, dilation, extreme zero points, 7-bit inputs,
// and work ranges cut mid-row and not a multiple of the pixel block.
TEST_CASE("grouped convolution equals the reference at every level", "[int8]") {
  std::mt19937 rng(43);
  std::uniform_int_distribution<int> dx(0, 255), dw(-128, 127);
  const DepthwiseGeometry geometries[] = {{3, 1, 1, 1}, {3, 2, 1, 0}, {3, 1, 2, 2}, {1, 1, 1, 0}};
  struct Grouping {
    int64_t in_group, out_group, groups;
  };
  const Grouping groupings[] = {{2, 2, 3},  {2, 2, 4},   {4, 4, 1},  {4, 4, 3},
                                {8, 8, 3},  {16, 16, 4}, {3, 32, 1}, {1, 16, 1},
                                {4, 48, 2}, {5, 16, 1},  {3, 20, 1}};
  for (const Grouping& grouping : groupings) {
    const int64_t group = grouping.in_group, groups = grouping.groups;
    for (const DepthwiseGeometry& geo : geometries) {
      {
        GroupedConvArgs p;
        p.n = 2;
        p.h = 7;
        p.w = 9;
        p.c_in = group * groups;
        p.c_out = grouping.out_group * groups;
        p.in_group = group;
        p.out_group = grouping.out_group;
        p.kernel[0] = p.kernel[1] = geo.kernel;
        p.stride[0] = p.stride[1] = geo.stride;
        p.padding[0] = p.padding[1] = geo.padding;
        p.dilation[0] = p.dilation[1] = geo.dilation;
        const int64_t extent = (geo.kernel - 1) * geo.dilation + 1;
        p.oh = (p.h + 2 * geo.padding - extent) / geo.stride + 1;
        p.ow = (p.w + 2 * geo.padding - extent) / geo.stride + 1;
        const int64_t taps = geo.kernel * geo.kernel, c = p.c_out;
        std::vector<uint8_t> x(2 * p.h * p.w * p.c_in);
        for (auto& v : x) v = static_cast<uint8_t>(dx(rng));
        std::vector<uint8_t> x7(x);  // 7-bit activations (reduce_range): the dot7 path
        for (auto& v : x7) v &= 127;
        std::vector<int8_t> weights(c * group * taps);
        for (auto& v : weights) v = static_cast<int8_t>(dw(rng));
        std::vector<int32_t> packed(taps * ((group + 3) / 4) * c), sums(c);
        grouped_conv_pack(weights.data(), c, group, grouping.out_group, taps, packed.data(),
                          sums.data());
        std::vector<float> scales(c), bias(c);
        for (int64_t i = 0; i < c; ++i) {
          scales[i] = 0.0002f * (1 + i % 3) / static_cast<float>(taps * group);
          bias[i] = 0.3f * (i % 5) - 0.6f;
        }
        p.weights = weights.data();
        p.packed = packed.data();
        p.weight_sums = sums.data();
        p.scales = scales.data();
        p.bias = bias.data();
        p.out_inv_scale = 1.f / 0.05f;
        p.out_zero_point = 70;
        p.ldo = c;
        const int64_t rows = 2 * p.oh * p.ow;
        for (int32_t x_zero_point : {131, 0, 255, 127}) {
          p.x_zero_point = x_zero_point;
          p.x = x_zero_point == 127 ? x7.data() : x.data();
          for (bool relu : {false, true}) {
            p.relu = relu;
            std::vector<uint8_t> want(rows * c);
            p.out = want.data();
            p.r0 = 0;
            p.r1 = rows;
            grouped_conv_u8_reference(p);
            for (CpuCapability level : levels()) {
              INFO("level " << cpu_capability_name(level) << " in " << group << " out "
                            << grouping.out_group << " groups " << groups << " kernel "
                            << geo.kernel << " stride " << geo.stride << " x_zp " << x_zero_point
                            << " relu " << relu);
              std::vector<uint8_t> got(rows * c, 3);
              p.out = got.data();
              const int64_t cuts[] = {0, 5, p.ow + 2, rows / 2 + 1, rows};
              for (int k = 0; k + 1 < 5; ++k) {
                GroupedConvArgs part = p;
                part.r0 = cuts[k];
                part.r1 = std::max(cuts[k], cuts[k + 1]);
                grouped_conv_u8_stub.cpu_kernel_at(level)(part);
              }
              for (size_t i = 0; i < got.size(); ++i) {
                REQUIRE(std::abs(int(got[i]) - int(want[i])) <= 1);
              }
            }
          }
        }
      }
    }
  }
}

// Widths held in registers (1-8 vectors at every level) and not (the row-by-row form), 8 and 4
// bits, sum (with and without per-sample weights) and max, a padding index, an empty bag, and
// prefetches reaching into later bags.
TEST_CASE("quantized embedding bags equal the reference at every level", "[int8]") {
  std::mt19937 rng(47);
  std::uniform_int_distribution<int> dq(0, 255);
  std::uniform_real_distribution<float> df(-1.f, 1.f);
  const int64_t rows = 50, header = 8;
  for (int bits : {8, 4}) {
    for (int64_t dim : {16, 32, 48, 64, 96, 128, 7, 40}) {
      const int64_t row_bytes = bits == 8 ? dim : (dim + 1) / 2, stride = header + row_bytes;
      std::vector<uint8_t> table(rows * stride);
      for (int64_t r = 0; r < rows; ++r) {
        const float scale = 0.01f + 0.02f * std::abs(df(rng)), bias = df(rng);
        std::memcpy(&table[r * stride], &scale, 4);
        std::memcpy(&table[r * stride + 4], &bias, 4);
        for (int64_t b = 0; b < row_bytes; ++b) table[r * stride + header + b] = uint8_t(dq(rng));
      }
      std::vector<int64_t> idx(30);
      for (auto& i : idx) i = dq(rng) % rows;
      std::vector<float> weights(idx.size());
      for (auto& w : weights) w = df(rng);
      const int64_t bags[][2] = {{0, 9}, {9, 9}, {9, 30}};
      for (bool max : {false, true}) {
        for (bool weighted : {false, true}) {
          if (max && weighted) continue;
          for (const auto& bag_range : bags) {
            EmbeddingBagArgs p;
            p.table = table.data();
            p.row_stride = stride;
            p.header = header;
            p.dim = dim;
            p.bits = bits;
            p.idx = idx.data();
            p.begin = bag_range[0];
            p.end = bag_range[1];
            p.prefetch_end = static_cast<int64_t>(idx.size());
            p.per_sample_weights = weighted ? weights.data() : nullptr;
            p.max = max;
            p.padding_idx = idx[3];
            std::vector<float> want(dim), got(dim, 5.f);
            p.out = want.data();
            const int64_t want_count = embedding_bag_rows_reference(p);
            for (CpuCapability level : levels()) {
              INFO("level " << cpu_capability_name(level) << " bits " << bits << " dim " << dim
                            << " max " << max << " weighted " << weighted << " bag " << bag_range[0]
                            << ".." << bag_range[1]);
              p.out = got.data();
              REQUIRE(embedding_bag_rows_stub.cpu_kernel_at(level)(p) == want_count);
              if (want_count == 0) continue;  // the caller writes an empty bag's zeros
              for (int64_t d = 0; d < dim; ++d) {
                REQUIRE(std::abs(got[d] - want[d]) <= 1e-5f * (1.f + std::abs(want[d])));
              }
            }
          }
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
