// Philox4x32-10 against the Random123 known-answer vectors, counter reservation, and sampling
// kernels that give identical results for any thread count.
#include <catch2/catch.hpp>

#include <cstring>

#include "api/random.h"
#include "api/views.h"
#include "core/generator.h"
#include "core/parallel.h"

using namespace ember;
using namespace ember::native;  // the kernels and stubs under test

TEST_CASE("Philox4x32-10 matches the Random123 known-answer tests", "[random]") {
  CHECK(philox4x32_10({0, 0, 0, 0}, 0, 0) ==
        PhiloxBlock{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u});
  CHECK(philox4x32_10({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, 0xffffffffu,
                      0xffffffffu) ==
        PhiloxBlock{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu});
  CHECK(philox4x32_10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, 0xa4093822u,
                      0x299f31d0u) ==
        PhiloxBlock{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u});
}

TEST_CASE("generators reserve disjoint counter ranges", "[random]") {
  Generator g(42);
  PhiloxState a = g.reserve(10);
  PhiloxState b = g.reserve(5);
  CHECK(a.seed == 42);
  CHECK(a.offset == 0);
  CHECK(b.offset == 10);
  auto state = g.get_state();
  g.manual_seed(42);
  CHECK(g.reserve(1).offset == 0);  // manual_seed restarts the stream
  g.set_state(state.data(), state.size());
  CHECK(g.reserve(1).offset == 15);
  CHECK_THROWS_AS(g.set_state(state.data(), 3), Error);
}

TEST_CASE("sampling does not depend on the thread count", "[random]") {
  const int saved = get_num_threads();
  auto sample = [](int threads) {
    set_num_threads(threads);
    Generator g(7);
    Tensor u = rand({100000}, TensorOptions(ScalarType::Float32), &g);
    Tensor n = randn({100000}, TensorOptions(ScalarType::Float64), &g);
    Tensor r = randint(-3, 1 << 20, {100000}, TensorOptions(ScalarType::Int64), &g);
    return std::vector<Tensor>{u, n, r};
  };
  auto one = sample(1);
  auto two = sample(2);
  set_num_threads(saved);
  for (size_t i = 0; i < one.size(); ++i) {
    const size_t bytes = static_cast<size_t>(one[i].numel()) * one[i].itemsize();
    CHECK(std::memcmp(one[i].data_ptr(), two[i].data_ptr(), bytes) == 0);
  }
}

TEST_CASE("uniform values stay in the half-open range from..to", "[random]") {
  Generator g(1);
  for (ScalarType t :
       {ScalarType::Float16, ScalarType::BFloat16, ScalarType::Float32, ScalarType::Float64}) {
    Tensor x = rand({20000}, TensorOptions(t), &g);
    Tensor f = empty({20000}, TensorOptions(ScalarType::Float64));
    ember::copy_(f, x);
    const double* d = f.data<double>();
    for (int64_t i = 0; i < 20000; ++i) {
      REQUIRE(d[i] >= 0.0);
      REQUIRE(d[i] < 1.0);
    }
  }
}
