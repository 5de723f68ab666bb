// The transformer fastpath's cost model (ops/nn/transformer.h): when packing the real tokens of
// a padded batch pays. The fastpath itself is tested from Python against the regular path.
#include <catch2/catch.hpp>

#include <vector>

#include "ops/nn/transformer.h"

using ember::native::packing_pays;

TEST_CASE("packing pays for real padding, not for a sliver or none", "[transformer]") {
  const int64_t E = 768, F = 3072, S = 128;
  REQUIRE_FALSE(packing_pays(std::vector<int64_t>(8, S), S, E, F));  // no padding
  std::vector<int64_t> sliver(8, S);
  sliver[3] = S - 1;  // one padded token in 1024: the copies cost more than it saves
  REQUIRE_FALSE(packing_pays(sliver, S, E, F));
  REQUIRE(packing_pays(std::vector<int64_t>(8, S * 3 / 4), S, E, F));  // 25%
  std::vector<int64_t> one_long(8, 1);
  one_long[0] = S;  // every sequence but one almost empty
  REQUIRE(packing_pays(one_long, S, E, F));
  REQUIRE(packing_pays(std::vector<int64_t>(4, 0), S, E, F));  // everything padded
}
