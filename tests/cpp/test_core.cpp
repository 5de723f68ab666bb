// Storage, TensorImpl geometry and flags, dtype promotion, shape arithmetic.
#include <catch2/catch.hpp>

#include "api/creation.h"
#include "api/views.h"
#include "core/allocator.h"
#include "core/factory.h"
#include "core/half.h"
#include "core/shape.h"

using namespace ember;

TEST_CASE("contiguous strides and flags", "[tensor_impl]") {
  Tensor t = empty_tensor({2, 3, 4}, ScalarType::Float32, Device(), "test");
  CHECK(t.strides().equals({12, 4, 1}));
  CHECK(t.is_contiguous());
  CHECK(t.numel() == 24);
  Tensor tt = transpose(t, 0, 2);
  CHECK(tt.sizes().equals({4, 3, 2}));
  CHECK(tt.strides().equals({1, 4, 12}));
  CHECK_FALSE(tt.is_contiguous());
  CHECK(tt.storage() == t.storage());
  // size-1 dims never break contiguity
  CHECK(compute_is_contiguous({1, 3}, {99, 1}));
}

TEST_CASE("views share the version counter", "[tensor_impl]") {
  Tensor t = zeros({4});
  Tensor v = slice(t, 0, 1, 3);
  uint32_t before = t.impl()->version();
  fill_(v, Scalar(1.0));
  CHECK(t.impl()->version() == before + 1);
  CHECK(v.impl()->version() == t.impl()->version());
  CHECK(t.data<float>()[1] == 1.0f);
  CHECK(t.data<float>()[0] == 0.0f);
}

TEST_CASE("size arithmetic is overflow-checked", "[shape]") {
  int64_t big = int64_t(1) << 62;
  CHECK_THROWS_AS(checked_numel({big, big}, "test"), Error);
  CHECK_THROWS_AS(empty({big, big}), Error);
  CHECK_THROWS_AS(checked_numel({-1, 2}, "test"), Error);
  CHECK_THROWS_AS(empty({big}, ScalarType::Float64), Error);  // 2^62 * 8 bytes overflows
}

TEST_CASE("dense strides follow a layout's dim order", "[shape]") {
  const auto dense = [](DimVector sizes, DimVector strides) {
    return dense_strides_like(sizes, strides);
  };
  // A transposed slice stays transposed; a head-split slice of a projection keeps its order.
  CHECK(dense({3, 4}, {1, 6}) == DimVector{1, 3});
  CHECK(dense({2, 3, 5, 4}, {180, 4, 36, 1}) == DimVector{60, 4, 12, 1});
  // A broadcast dim keeps its place; equal strides put the larger size outside (as PyTorch's
  // empty_like of these overlapping layouts).
  CHECK(dense({2, 3, 5, 4}, {0, 20, 4, 1}) == DimVector{60, 20, 4, 1});
  CHECK(dense({2, 3}, {1, 1}) == DimVector{1, 2});
  CHECK(dense({3, 2}, {1, 1}) == DimVector{2, 1});
  // Size-1 dims take the stride of the extent inside them; 0-d and empty shapes work.
  CHECK(dense({4, 1, 3}, {6, 6, 2}) == DimVector{3, 3, 1});
  CHECK(dense({}, {}).empty());
  CHECK(dense({0, 3}, {3, 1}) == DimVector{3, 1});
}

TEST_CASE("type promotion matches torch.promote_types", "[dtype]") {
  using S = ScalarType;
  CHECK(promote_types(S::UInt8, S::Int8) == S::Int16);
  CHECK(promote_types(S::Bool, S::Int32) == S::Int32);
  CHECK(promote_types(S::Float16, S::BFloat16) == S::Float32);
  CHECK(promote_types(S::Int64, S::Float16) == S::Float16);
  CHECK(promote_types(S::Float64, S::Complex64) == S::Complex128);
  CHECK(can_cast(S::Int32, S::Float32));
  CHECK_FALSE(can_cast(S::Float32, S::Int32));
  CHECK_FALSE(can_cast(S::Complex64, S::Float64));
}

TEST_CASE("half and bfloat16 round-trip", "[dtype]") {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f}) {
    CHECK(static_cast<float>(Half(f)) == f);
  }
  CHECK(std::isinf(static_cast<float>(Half(1e6f))));
  CHECK(std::isnan(static_cast<float>(Half(NAN))));
  CHECK(static_cast<float>(Half(1.0f + 1.0f / 4096)) == 1.0f);  // ties to even
  CHECK(static_cast<float>(BFloat16(1.0f)) == 1.0f);
  CHECK(static_cast<float>(BFloat16(3.0f)) == 3.0f);
  CHECK(std::isnan(static_cast<float>(BFloat16(NAN))));
}

TEST_CASE("allocator counts bytes", "[storage]") {
  int64_t before = cpu_allocator_stats().current_bytes;
  {
    Tensor t = empty({1000}, ScalarType::Float64);
    CHECK(cpu_allocator_stats().current_bytes == before + 8000);
  }
  CHECK(cpu_allocator_stats().current_bytes == before);
}

TEST_CASE("view strides follow contiguity chunks", "[views]") {
  auto s = compute_view_strides({2, 3, 4}, {12, 4, 1}, {6, 4});
  REQUIRE(s);
  CHECK(s->ref().equals({4, 1}));
  // transposed (non-contiguous) input cannot be flattened as a view
  CHECK_FALSE(compute_view_strides({3, 2}, {1, 3}, {6}));
  Tensor t = zeros({2, 3});
  Tensor tt = transpose(t, 0, 1);
  CHECK_THROWS_AS(view(tt, {6}), Error);
  Tensor r = reshape(tt, {6});
  CHECK(r.storage() != t.storage());
}
