// linalg_common: the column-major work layout and LinAlgError reporting the linalg ops share.
#include <catch2/catch.hpp>

#include "api/linalg/common.h"
#include "core/factory.h"

using namespace ember;

TEST_CASE("column_major_copy lays every matrix out column by column", "[linalg]") {
  Tensor a = empty_tensor({2, 2, 3}, ScalarType::Float64, Device(), "test");
  double* p = a.data<double>();
  for (int i = 0; i < 12; ++i) p[i] = i;
  Tensor c = linalg::column_major_copy(a, "test");
  REQUIRE(linalg::is_column_major_batch(c));
  REQUIRE_FALSE(linalg::is_column_major_batch(a));
  CHECK(c.strides()[0] == 6);
  CHECK(c.strides()[1] == 1);
  CHECK(c.strides()[2] == 2);
  const double* q = c.data<double>();
  // matrix 1 is [[6, 7, 8], [9, 10, 11]]: columns (6, 9), (7, 10), (8, 11)
  CHECK(q[6] == 6);
  CHECK(q[7] == 9);
  CHECK(q[8] == 7);
  CHECK(linalg::batch_count(c) == 2);
}

TEST_CASE("raise_for_infos names the first failing batch element", "[linalg]") {
  Tensor a = empty_tensor({3, 2, 2}, ScalarType::Float64, Device(), "test");
  Tensor infos = empty_tensor({3}, ScalarType::Int32, Device(), "test");
  int32_t* info = infos.data<int32_t>();
  info[0] = 0;
  info[1] = 2;
  info[2] = 1;
  auto describe = [](int32_t i) { return str_cat("The diagonal element ", i, " is zero"); };
  try {
    linalg::raise_for_infos(infos, a, "linalg.inv", describe);
    FAIL("no error raised");
  } catch (const LinAlgError& e) {
    CHECK(std::string(e.what()) ==
          "[linalg.inv] (Batch element 1): The diagonal element 2 is zero");
  }
  info[1] = info[2] = 0;
  CHECK_NOTHROW(linalg::raise_for_infos(infos, a, "linalg.inv", describe));
}

TEST_CASE("linalg argument checks use PyTorch's error classes", "[linalg]") {
  Tensor rect = empty_tensor({3, 4}, ScalarType::Float64, Device(), "test");
  CHECK_THROWS_WITH(linalg::check_square(rect, "linalg.inv"),
                    "[linalg.inv] A must be batches of square matrices, but they are 3 by 4 "
                    "matrices");
  Tensor ints = empty_tensor({3, 3}, ScalarType::Int64, Device(), "test");
  CHECK_THROWS_AS(linalg::check_float_or_complex(ints, "linalg.inv"), NotImplementedError);
  Tensor vec = empty_tensor({3}, ScalarType::Float64, Device(), "test");
  CHECK_THROWS_AS(linalg::check_at_least_2d(vec, "linalg.inv"), Error);
}
