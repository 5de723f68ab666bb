// Reduction kernels against scalar reference loops: the vectorised expf, cascade summation and
// every plan of the reduction driver (inner, outer, full, split across threads).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "api/creation.h"
#include "api/reduce.h"
#include "api/views.h"
#include "core/parallel.h"
#include "kernels/cpu/reduce_loops.h"
#include "kernels/cpu/reduce_vec.h"

using namespace ember;
using namespace ember::native;  // the kernels and stubs under test

TEST_CASE("vexpf matches std::exp within 2 ulp", "[reductions][vec_math]") {
  double worst = 0;
  for (float x = -87.0f; x < 88.5f; x += 0.00731f) {
    const double want = std::exp(static_cast<double>(x));
    const double rel = std::abs(vexpf(x) - want) / want;
    worst = std::max(worst, rel);
  }
  CHECK(worst < 2 * 5.96e-8);
  CHECK(vexpf(-INFINITY) == 0.0f);
  CHECK(vexpf(-100.0f) == 0.0f);
  CHECK(std::isinf(vexpf(100.0f)));
  CHECK(std::isnan(vexpf(NAN)));
  CHECK(vexpf(0.0f) == 1.0f);
}

TEST_CASE("cascade_sum is accurate and agrees with a double reference", "[reductions]") {
  std::mt19937 gen(0);
  std::uniform_real_distribution<float> dist(0.1f, 1.0f);
  for (int64_t n :
       {0, 1, 7, 63, 64, 65, 95, 96, 100, 127, 1000, 1023, 1024, 1025, 1032, 100000, 3000001}) {
    std::vector<float> v(static_cast<size_t>(n));
    double want = 0;
    for (auto& x : v) {
      x = dist(gen);
      want += x;
    }
    const float got = cascade_sum<float, float>(reinterpret_cast<const char*>(v.data()), 4, n);
    CHECK(std::abs(got - want) <= 1e-6 * std::max(1.0, want));
    // strided: every other element
    if (n >= 2) {
      double want2 = 0;
      for (int64_t i = 0; i < n / 2; ++i) want2 += v[2 * i];
      const float got2 =
          cascade_sum<float, float>(reinterpret_cast<const char*>(v.data()), 8, n / 2);
      CHECK(std::abs(got2 - want2) <= 1e-6 * std::max(1.0, want2));
    }
  }
}

namespace {

// Naive sum of a float tensor over `dims` (as a double), for any geometry.
std::vector<double> reference_sum(const Tensor& t, const std::vector<int64_t>& dims) {
  const int64_t nd = t.dim();
  std::vector<bool> red(static_cast<size_t>(nd), false);
  for (int64_t d : dims) red[d] = true;
  DimVector out_sizes;
  for (int64_t d = 0; d < nd; ++d) {
    if (!red[d]) out_sizes.push_back(t.size(d));
  }
  int64_t n_out = 1;
  for (int64_t s : out_sizes) n_out *= s;
  std::vector<double> out(static_cast<size_t>(n_out), 0.0);
  DimVector idx(static_cast<size_t>(nd), 0);
  const float* base = t.data<float>();
  for (int64_t lin = 0; lin < t.numel(); ++lin) {
    int64_t off = 0, o = 0;
    for (int64_t d = 0; d < nd; ++d) off += idx[d] * t.stride(d);
    for (int64_t d = 0; d < nd; ++d) {
      if (!red[d]) o = o * t.size(d) + idx[d];
    }
    out[o] += base[off];
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[d] < t.size(d)) break;
      idx[d] = 0;
    }
  }
  return out;
}

Tensor random_tensor(IntArrayRef sizes, uint32_t seed) {
  Tensor t = empty(sizes, ScalarType::Float32);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(gen);
  return t;
}

}  // namespace

TEST_CASE("every reduction plan agrees with a naive loop", "[reductions][driver]") {
  struct Case {
    std::vector<int64_t> sizes;
    std::vector<int64_t> dims;
    bool transpose;
  };
  const std::vector<Case> cases = {
      {{100000}, {0}, false},         // full, inner
      {{4, 50000}, {1}, false},       // few long inner runs: split per output
      {{50000, 4}, {0}, false},       // outer with few strips: rows split
      {{300, 500}, {0}, false},       // outer strips
      {{300, 500}, {1}, false},       // inner, many outputs
      {{300, 500}, {0}, true},        // transposed input
      {{20, 30, 40}, {0, 2}, false},  // two reduced dims around a kept one
      {{20, 30, 40}, {1}, true},      //
      {{7, 1, 9}, {1}, false},        // size-1 reduced dim: nothing to fold
  };
  const int old = get_num_threads();
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    for (const Case& c : cases) {
      Tensor t = random_tensor(c.sizes, 42);
      if (c.transpose) t = ember::transpose(ember::contiguous(ember::transpose(t, 0, -1)), 0, -1);
      Tensor got = ember::contiguous(ember::sum(t, c.dims));
      std::vector<double> want = reference_sum(t, c.dims);
      REQUIRE(got.numel() == static_cast<int64_t>(want.size()));
      for (size_t i = 0; i < want.size(); ++i) {
        CHECK(std::abs(got.data<float>()[i] - want[i]) <= 1e-4 * (1 + std::abs(want[i])));
      }
    }
  }
  set_num_threads(old);
}

TEST_CASE("argmax finds the first maximum on every plan", "[reductions][driver]") {
  const int old = get_num_threads();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    Tensor t = zeros({200000});
    t.data<float>()[123457] = 5.0f;
    t.data<float>()[199999] = 5.0f;
    CHECK(argmax(t).data<int64_t>()[0] == 123457);
    Tensor m = zeros({40000, 3});
    m.data<float>()[3 * 777 + 2] = 1.0f;
    m.data<float>()[3 * 30000 + 2] = 1.0f;
    Tensor idx = argmax(m, 0);
    CHECK(idx.data<int64_t>()[2] == 777);
    CHECK(idx.data<int64_t>()[0] == 0);
  }
  set_num_threads(old);
}

TEST_CASE("branch-free float16 conversion is exact for every value", "[reductions][vec_math]") {
  std::vector<uint16_t> all(65536);
  for (uint32_t b = 0; b < 65536; ++b) all[b] = static_cast<uint16_t>(b);
  std::vector<float> block(65536);
  half_bits_to_float_block(all.data(), block.data(), 65536);
  int mismatches = 0;
  for (uint32_t b = 0; b < 65536; ++b) {
    const float want = static_cast<float>(Half::from_bits(static_cast<uint16_t>(b)));
    const float got = half_bits_to_float_fast(static_cast<uint16_t>(b));
    const bool same = (std::isnan(want) && std::isnan(got) && std::isnan(block[b])) ||
                      (std::memcmp(&want, &got, 4) == 0 && std::memcmp(&want, &block[b], 4) == 0);
    mismatches += same ? 0 : 1;
  }
  CHECK(mismatches == 0);
}
