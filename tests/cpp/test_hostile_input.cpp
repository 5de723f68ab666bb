// The checks that keep hostile arguments from reaching memory: dims read past a tensor's sizes,
// size arithmetic that overflows, and writes that overlap themselves or their inputs.
#include <catch2/catch.hpp>
#include <cstdint>

#include "api/creation.h"
#include "api/views.h"
#include "core/error.h"
#include "core/shape.h"
#include "dispatch/copy.h"
#include "dispatch/mem_overlap.h"

using namespace ember;
using Catch::Matchers::Contains;

TEST_CASE("size() and stride() refuse a dim past the sizes", "[hostile]") {
  Tensor scalar = zeros({});
  CHECK_THROWS_AS(scalar.size(0), IndexError);
  CHECK_THROWS_WITH(scalar.stride(0), Contains("tensor has no dimensions"));
  Tensor m = zeros({2, 3});
  CHECK(m.size(1) == 3);
  CHECK_THROWS_WITH(m.size(2), Contains("Dimension out of range"));
  CHECK_THROWS_AS(m.size(-1), IndexError);  // callers wrap negative dims first
}

TEST_CASE("geometry that overflows int64 is refused", "[hostile]") {
  const int64_t big = int64_t(1) << 62;
  CHECK_THROWS_AS(expand(zeros({1}), {big, 4}), Error);
  CHECK_THROWS_WITH(contiguous_strides({0, big, big}), Contains("Stride calculation overflowed"));
  CHECK(contiguous_strides({big, 1, 0}).size() == 3);  // the unused last product may overflow
  CHECK_THROWS_WITH(checked_mul(big, 4, "op"), Contains("[op] size arithmetic overflows"));
  CHECK(checked_mul(-3, 4, "op") == -12);
}

TEST_CASE("internal overlap: expanded outputs", "[hostile]") {
  Tensor base = zeros({3});
  CHECK_THROWS_WITH(assert_no_internal_overlap(expand(base, {2, 3}), "op"),
                    Contains("more than one element of the written-to tensor"));
  CHECK_NOTHROW(assert_no_internal_overlap(base, "op"));
  CHECK_NOTHROW(assert_no_internal_overlap(expand(base, {1, 3}), "op"));     // size-1 dim
  CHECK_NOTHROW(assert_no_internal_overlap(expand(zeros({1}), {0}), "op"));  // empty
  // A copy into an expanded tensor would write one location twice.
  CHECK_THROWS_AS(copy_into(expand(base, {2, 3}), ones({2, 3}), "copy_"), Error);
}

TEST_CASE("partial overlap between an output and an input", "[hostile]") {
  Tensor x = zeros({2, 2});
  Tensor flat = view(x, {4});
  CHECK_NOTHROW(assert_no_partial_overlap(x, x, "op"));                   // the same tensor
  CHECK_NOTHROW(assert_no_partial_overlap(x, view(flat, {2, 2}), "op"));  // an exact alias
  CHECK_THROWS_WITH(assert_no_partial_overlap(x, transpose(x, 0, 1), "op"),
                    Contains("refer to a single memory location"));
  CHECK_THROWS_AS(assert_no_partial_overlap(narrow(flat, 0, 0, 3), narrow(flat, 0, 1, 3), "op"),
                  Error);
  CHECK_NOTHROW(assert_no_partial_overlap(narrow(flat, 0, 0, 2), narrow(flat, 0, 2, 2), "op"));
  CHECK_NOTHROW(assert_no_partial_overlap(x, zeros({2, 2}), "op"));  // other storage
}
