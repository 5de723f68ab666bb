// Indexing ops through the C++ API: TensorIndex expressions, gather / scatter kernels, the
// error classes of out-of-range indices, and the overlap test that picks serial puts.
#include <catch2/catch.hpp>

#include <numeric>

#include "api/creation.h"
#include "api/indexing.h"
#include "api/indexing_engine.h"
#include "api/views.h"
#include "core/factory.h"

using namespace ember;

namespace {

Tensor arange_f(int64_t n) {
  Tensor t = empty({n}, ScalarType::Float32);
  std::iota(t.data<float>(), t.data<float>() + n, 0.0f);
  return t;
}

Tensor longs(std::vector<int64_t> v) {
  Tensor t = empty({static_cast<int64_t>(v.size())}, ScalarType::Int64);
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return t;
}

}  // namespace

TEST_CASE("getitem with basic and advanced indices", "[indexing]") {
  Tensor t = reshape(arange_f(24), {2, 3, 4});
  using I = TensorIndex;
  Tensor v = getitem(t, {I::integer_index(1), I::slice(std::nullopt, std::nullopt, 2)});
  CHECK(v.sizes().equals({2, 4}));
  CHECK(v.storage() == t.storage());  // basic indices give a view
  CHECK(v.data<float>()[0] == 12.0f);

  // t[:, [0, 2], [1, 3]] -> (2, 2): elements (b, 0, 1) and (b, 2, 3).
  Tensor a = getitem(t, {I::slice(std::nullopt, std::nullopt), I::tensor_index(longs({0, 2})),
                         I::tensor_index(longs({1, 3}))});
  REQUIRE(a.sizes().equals({2, 2}));
  const float* p = a.data<float>();
  CHECK(p[0] == 1.0f);
  CHECK(p[1] == 11.0f);
  CHECK(p[2] == 13.0f);
  CHECK(p[3] == 23.0f);
  CHECK(a.storage() != t.storage());

  // Advanced indices separated by a slice move the result dims to the front.
  Tensor f = getitem(t, {I::tensor_index(longs({1, 0})), I::slice(std::nullopt, std::nullopt),
                         I::tensor_index(longs({0, 3}))});
  CHECK(f.sizes().equals({2, 3}));
  CHECK(f.data<float>()[0] == 12.0f);
}

TEST_CASE("out-of-range indices raise the op's error class and write nothing", "[indexing]") {
  Tensor t = arange_f(5);
  using I = TensorIndex;
  CHECK_THROWS_AS(getitem(t, {I::integer_index(5)}), IndexError);
  CHECK_THROWS_AS(getitem(t, {I::tensor_index(longs({0, -6}))}), IndexError);
  CHECK_THROWS_AS(getitem(t, {I::slice(0, 3, -1)}), ValueError);
  CHECK_THROWS_AS(gather(t, 0, longs({0, 5})), Error);
  CHECK_THROWS_AS(index_select(t, 0, longs({-1})), IndexError);

  Tensor dst = zeros({5});
  CHECK_THROWS_AS(scatter_add_(dst, 0, longs({0, 1, 7}), ones({3})), Error);
  CHECK_THROWS_AS(setitem(dst, {I::tensor_index(longs({2, 9}))}, Scalar(1.0)), IndexError);
  for (int i = 0; i < 5; ++i) CHECK(dst.data<float>()[i] == 0.0f);
}

TEST_CASE("scatter_add accumulates duplicates; index_put_ last write wins", "[indexing]") {
  Tensor dst = zeros({3});
  scatter_add_(dst, 0, longs({0, 0, 2, 0}), arange_f(4));
  CHECK(dst.data<float>()[0] == 0.0f + 1.0f + 3.0f);
  CHECK(dst.data<float>()[1] == 0.0f);
  CHECK(dst.data<float>()[2] == 2.0f);

  Tensor y = zeros({3});
  index_put_(y, {longs({1, 1})}, arange_f(2), /*accumulate=*/false);
  CHECK(y.data<float>()[1] == 1.0f);
  index_put_(y, {longs({1, 1})}, arange_f(2), /*accumulate=*/true);
  CHECK(y.data<float>()[1] == 2.0f);
}

TEST_CASE("nonzero and masked_select follow C order", "[indexing]") {
  Tensor m = zeros({2, 3}, ScalarType::Bool);
  m.data<bool>()[1] = true;
  m.data<bool>()[5] = true;
  Tensor nz = nonzero(m);
  REQUIRE(nz.sizes().equals({2, 2}));
  const int64_t* c = nz.data<int64_t>();
  CHECK((c[0] == 0 && c[1] == 1 && c[2] == 1 && c[3] == 2));
  Tensor s = masked_select(reshape(arange_f(6), {2, 3}), m);
  REQUIRE(s.numel() == 2);
  CHECK(s.data<float>()[0] == 1.0f);
  CHECK(s.data<float>()[1] == 5.0f);
}

TEST_CASE("overlap detection decides when puts run serially", "[indexing]") {
  Tensor t = zeros({4, 5});
  CHECK(is_non_overlapping(t));
  CHECK(is_non_overlapping(transpose(t, 0, 1)));
  CHECK(is_non_overlapping(slice(t, 1, 0, 5, 2)));
  CHECK_FALSE(is_non_overlapping(expand(zeros({1, 5}), {4, 5})));
  CHECK_FALSE(is_non_overlapping(unfold(zeros({6}), 0, 3, 1)));
  CHECK(is_non_overlapping(unfold(zeros({6}), 0, 3, 3)));
}
