// TensorIterator: broadcasting, dim ordering and coalescing, output allocation, zero-stride
// reduction outputs, parallel chunking and casts into differently typed outputs. The loop bodies
// are written by hand here so that the iterator is tested without any kernel.
#include <atomic>
#include <catch2/catch.hpp>
#include <numeric>
#include <vector>

#include "api/creation.h"
#include "api/views.h"
#include "core/factory.h"
#include "core/parallel.h"
#include "dispatch/tensor_iterator.h"

using namespace ember;

namespace {

// A tensor of `sizes` holding 0, 1, 2, ... in row-major order (float32, int32 or int64).
Tensor iota(IntArrayRef sizes, ScalarType dtype = ScalarType::Float32) {
  Tensor t = empty(sizes, dtype);
  if (dtype == ScalarType::Float32) {
    std::iota(t.data<float>(), t.data<float>() + t.numel(), 0.0f);
  } else if (dtype == ScalarType::Int32) {
    std::iota(t.data<int32_t>(), t.data<int32_t>() + t.numel(), 0);
  } else {
    std::iota(t.data<int64_t>(), t.data<int64_t>() + t.numel(), int64_t(0));
  }
  return t;
}

// Loop bodies are lambdas: LoopFn (a function_ref) binds to callable objects.
// out = a + b for float32 operands (operand 0 is the output).
const auto add_loop = [](char** data, const int64_t* strides, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    *reinterpret_cast<float*>(data[0] + k * strides[0]) =
        *reinterpret_cast<const float*>(data[1] + k * strides[1]) +
        *reinterpret_cast<const float*>(data[2] + k * strides[2]);
  }
};

// out += in for float32, with whatever output stride (0 inside a reduced run).
const auto accumulate_loop = [](char** data, const int64_t* strides, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    *reinterpret_cast<float*>(data[0] + k * strides[0]) +=
        *reinterpret_cast<const float*>(data[1] + k * strides[1]);
  }
};

// Restores the thread count a test changed.
struct ThreadGuard {
  int saved = get_num_threads();
  explicit ThreadGuard(int n) { set_num_threads(n); }
  ~ThreadGuard() { set_num_threads(saved); }
};

}  // namespace

TEST_CASE("broadcasting gives zero strides and allocates the broadcast shape", "[iterator]") {
  Tensor a = iota({3, 1});  // column
  Tensor b = iota({1, 4});  // row
  auto iter =
      TensorIteratorConfig().name("test").add_output(Tensor()).add_input(a).add_input(b).build();
  // Dims are listed innermost first: the row (size 4) runs inside, the column (3) outside.
  REQUIRE(iter.ndim() == 2);
  CHECK(iter.shape().equals({4, 3}));
  CHECK(iter.numel() == 12);
  CHECK(iter.stride(0, 0) == 4);  // output: contiguous float32
  CHECK(iter.stride(0, 1) == 16);
  CHECK(iter.stride(1, 0) == 0);  // the column does not move along the row
  CHECK(iter.stride(1, 1) == 4);
  CHECK(iter.stride(2, 0) == 4);
  CHECK(iter.stride(2, 1) == 0);  // the row does not move down the column
  CHECK_FALSE(iter.is_scalar(1));
  iter.for_each(add_loop);
  Tensor out = iter.output(0);
  CHECK(out.sizes().equals({3, 4}));
  CHECK(out.is_contiguous());
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) CHECK(out.data<float>()[i * 4 + j] == float(i + j));
  }
}

TEST_CASE("a 0-d operand is a scalar to the iterator", "[iterator]") {
  Tensor a = iota({5});
  Tensor s = full({}, Scalar(10.0), ScalarType::Float32);
  auto iter = TensorIteratorConfig().add_output(Tensor()).add_input(a).add_input(s).build();
  CHECK(iter.is_scalar(2));
  CHECK_FALSE(iter.is_scalar(1));
  iter.for_each(add_loop);
  for (int i = 0; i < 5; ++i) CHECK(iter.output(0).data<float>()[i] == 10.0f + i);
}

TEST_CASE("incompatible shapes name both shapes", "[iterator]") {
  Tensor a = iota({2, 3}), b = iota({4});
  CHECK_THROWS_WITH(
      TensorIteratorConfig().name("add").add_output(Tensor()).add_input(a).add_input(b).build(),
      Catch::Matchers::Contains("[add]") && Catch::Matchers::Contains("(2, 3)") &&
          Catch::Matchers::Contains("(4,)"));
}

TEST_CASE("contiguous operands coalesce to one dim", "[iterator]") {
  Tensor a = iota({2, 3, 4}), b = iota({2, 3, 4});
  auto iter = TensorIteratorConfig().add_output(Tensor()).add_input(a).add_input(b).build();
  CHECK(iter.ndim() == 1);
  CHECK(iter.shape().equals({24}));
  CHECK(iter.is_contiguous());
}

TEST_CASE("size-1 dims are dropped before coalescing", "[iterator]") {
  Tensor a = iota({4, 1, 5});
  Tensor b = iota({4, 1, 5});
  auto iter = TensorIteratorConfig().add_output(Tensor()).add_input(a).add_input(b).build();
  CHECK(iter.shape().equals({20}));
}

TEST_CASE("a sliced operand blocks coalescing across its gap", "[iterator]") {
  Tensor base = iota({4, 6});
  Tensor a = narrow(base, 1, 0, 3);  // sizes (4, 3), strides (6, 1)
  auto iter = TensorIteratorConfig().add_output(Tensor()).add_input(a).add_input(a).build();
  REQUIRE(iter.ndim() == 2);
  CHECK(iter.shape().equals({3, 4}));
  CHECK(iter.stride(1, 0) == 4);
  CHECK(iter.stride(1, 1) == 24);  // one row of the base: 6 floats
  CHECK(iter.stride(0, 1) == 12);  // the fresh output is dense: 3 floats per row
  iter.for_each(add_loop);
  Tensor out = iter.output(0);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 3; ++j) CHECK(out.data<float>()[i * 3 + j] == 2.0f * (i * 6 + j));
  }
}

TEST_CASE("outputs are allocated in the inputs' memory layout", "[iterator]") {
  Tensor t = transpose(iota({3, 5}), 0, 1);  // sizes (5, 3), strides (1, 5)
  auto iter = TensorIteratorConfig().add_output(Tensor()).add_input(t).add_input(t).build();
  Tensor out = iter.output(0);
  CHECK(out.sizes().equals({5, 3}));
  CHECK(out.strides().equals({1, 5}));  // transposed like the input, not row-major
  // Same layout everywhere, so the iteration is one contiguous run.
  CHECK(iter.shape().equals({15}));
  CHECK(iter.is_contiguous());
  iter.for_each(add_loop);
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 3; ++j) CHECK(out.data<float>()[i + 5 * j] == 2.0f * (i + 5 * j));
  }
}

TEST_CASE("a defined output fixes the iteration order", "[iterator]") {
  Tensor t = transpose(iota({3, 5}), 0, 1);         // (5, 3) column-major
  Tensor out = empty({5, 3}, ScalarType::Float32);  // row-major
  auto iter = TensorIteratorConfig().add_output(out).add_input(t).add_input(t).build();
  // The output decides first: its stride-1 dim (size 3) is innermost.
  REQUIRE(iter.ndim() == 2);
  CHECK(iter.shape().equals({3, 5}));
  CHECK(iter.stride(0, 0) == 4);
  CHECK(iter.stride(1, 0) == 20);
  iter.for_each(add_loop);
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 3; ++j) CHECK(out.data<float>()[i * 3 + j] == 2.0f * (i + 5 * j));
  }
}

TEST_CASE("a zero-stride output is refused outside reductions", "[iterator]") {
  Tensor out = expand(zeros({1, 4}), {3, 4});
  Tensor a = iota({3, 4});
  CHECK_THROWS_WITH(
      TensorIteratorConfig().name("add_").add_output(out).add_input(a).add_input(a).build(),
      Catch::Matchers::Contains("[add_]") && Catch::Matchers::Contains("single memory location"));
}

TEST_CASE("reductions write through zero-stride outputs", "[iterator][reduction]") {
  ThreadGuard threads(2);
  const int64_t rows = 300, cols = 257;
  // Small integers, so every float32 sum is exact whatever the summation order.
  Tensor in = empty({rows, cols}, ScalarType::Float32);
  for (int64_t k = 0; k < rows * cols; ++k) in.data<float>()[k] = float(k % 7);
  auto at = [&](int64_t i, int64_t j) { return double(in.data<float>()[i * cols + j]); };
  auto reduce = [&](int64_t dim, int64_t grain) {
    DimVector keep{rows, cols};
    keep[dim] = 1;
    Tensor result = zeros(keep, ScalarType::Float32);
    DimVector strides(result.strides());
    strides[dim] = 0;
    Tensor out_view = make_view(result, in.sizes(), strides, 0);
    auto iter = TensorIteratorConfig()
                    .name("test_sum")
                    .add_output(out_view)
                    .add_input(in)
                    .static_shape(in.sizes())
                    .is_reduction(true)
                    .build();
    // The output does not move along the reduced dim.
    bool has_zero = false;
    for (int d = 0; d < iter.ndim(); ++d) has_zero = has_zero || iter.stride(0, d) == 0;
    CHECK(has_zero);
    iter.for_each_reduction_safe(accumulate_loop, grain);
    return result;
  };
  for (int64_t grain : {int64_t(1), int64_t(64), kGrainSize}) {
    Tensor row_sums = reduce(1, grain);  // (rows, 1)
    for (int64_t i = 0; i < rows; ++i) {
      double want = 0;
      for (int64_t j = 0; j < cols; ++j) want += at(i, j);
      REQUIRE(row_sums.data<float>()[i] == want);
    }
    Tensor col_sums = reduce(0, grain);  // (1, cols)
    for (int64_t j = 0; j < cols; ++j) {
      double want = 0;
      for (int64_t i = 0; i < rows; ++i) want += at(i, j);
      REQUIRE(col_sums.data<float>()[j] == want);
    }
  }
}

TEST_CASE("a full reduction runs serially into one element", "[iterator][reduction]") {
  ThreadGuard threads(2);
  Tensor in = ones({100, 100});
  Tensor result = zeros({1, 1}, ScalarType::Float32);
  Tensor out_view = make_view(result, in.sizes(), {0, 0}, 0);
  auto iter = TensorIteratorConfig()
                  .add_output(out_view)
                  .add_input(in)
                  .static_shape(in.sizes())
                  .is_reduction(true)
                  .build();
  CHECK(iter.is_scalar(0));
  iter.for_each_reduction_safe(accumulate_loop, 16);
  CHECK(result.data<float>()[0] == 10000.0f);
}

TEST_CASE("parallel for_each visits every element exactly once", "[iterator][parallel]") {
  ThreadGuard threads(2);
  const int64_t n = 100003;  // prime: chunks never divide it evenly
  Tensor counts = zeros({n}, ScalarType::Int64);
  Tensor in = iota({n}, ScalarType::Int64);
  auto iter = TensorIteratorConfig().add_output(counts).add_input(in).build();
  std::atomic<int> calls{0};
  std::atomic<bool> saw_parallel{false};
  iter.for_each(
      [&](char** data, const int64_t* strides, int64_t len) {
        calls.fetch_add(1);
        if (in_parallel_region()) saw_parallel = true;
        for (int64_t k = 0; k < len; ++k) {
          int64_t& c = *reinterpret_cast<int64_t*>(data[0] + k * strides[0]);
          c += 1 + 10 * *reinterpret_cast<const int64_t*>(data[1] + k * strides[1]);
        }
      },
      /*grain=*/1000);
  CHECK(saw_parallel);
  CHECK(calls.load() >= 2);
  const int64_t* c = counts.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) REQUIRE(c[i] == 1 + 10 * i);
}

TEST_CASE("parallel for_each over a strided 2-d iteration space", "[iterator][parallel]") {
  ThreadGuard threads(2);
  Tensor base = iota({301, 40});
  Tensor a = narrow(base, 1, 3, 33);  // not coalescible: rows of 33 inside rows of 40
  auto iter = TensorIteratorConfig().add_output(Tensor()).add_input(a).add_input(a).build();
  REQUIRE(iter.ndim() == 2);
  iter.for_each(add_loop, /*grain=*/50);  // chunks start and end in the middle of rows
  Tensor out = iter.output(0);
  for (int64_t i = 0; i < 301; ++i) {
    for (int64_t j = 0; j < 33; ++j) {
      REQUIRE(out.data<float>()[i * 33 + j] == 2.0f * (i * 40 + j + 3));
    }
  }
}

TEST_CASE("an exception in a parallel loop reaches the caller", "[iterator][parallel]") {
  ThreadGuard threads(2);
  Tensor in = iota({10000});
  auto iter = TensorIteratorConfig().add_output(Tensor()).add_input(in).build();
  CHECK_THROWS_WITH(iter.for_each([](char**, const int64_t*,
                                     int64_t) { throw IndexError("[test] index out of range"); },
                                  100),
                    "[test] index out of range");
}

TEST_CASE("result_type follows torch's three priority levels", "[iterator][promotion]") {
  using S = ScalarType;
  auto dim_t = [](S t) { return empty({3}, t); };
  auto zero_d = [](S t) { return empty({}, t); };
  // dim tensors > 0-d tensors > Python numbers; a lower level matters only when its category is
  // higher, and then the two are promoted together.
  CHECK(result_type({dim_t(S::Int32), zero_d(S::Float64)}) == S::Float64);
  CHECK(result_type({dim_t(S::UInt8), zero_d(S::Int64)}) == S::UInt8);
  CHECK(result_type({dim_t(S::Float16), zero_d(S::Float64)}) == S::Float16);
  CHECK(result_type({dim_t(S::Int32), wrap_scalar(Scalar(1.5))}) == S::Float32);
  CHECK(result_type({zero_d(S::Int8), wrap_scalar(Scalar(2.5))}) == S::Float32);
  CHECK(result_type({dim_t(S::Float32), wrap_scalar(Scalar(complex128(0, 1)))}) == S::Complex64);
  CHECK(result_type({dim_t(S::Float64), wrap_scalar(Scalar(complex128(0, 1)))}) == S::Complex128);
  CHECK(result_type({zero_d(S::Bool), wrap_scalar(Scalar(int64_t(3)))}) == S::Int64);
  CHECK(result_type({dim_t(S::Int16), dim_t(S::UInt8)}) == S::Int16);
}

TEST_CASE("promotion converts inputs to the common dtype", "[iterator][promotion]") {
  Tensor i = iota({4}, ScalarType::Int32);
  Tensor f = full({4}, Scalar(0.5), ScalarType::Float32);
  auto iter = TensorIteratorConfig()
                  .add_output(Tensor())
                  .add_input(i)
                  .add_input(f)
                  .promote_inputs_to_common_dtype(true)
                  .build();
  CHECK(iter.common_dtype() == ScalarType::Float32);
  CHECK(iter.dtype(1) == ScalarType::Float32);
  iter.for_each(add_loop);
  for (int k = 0; k < 4; ++k) CHECK(iter.output(0).data<float>()[k] == k + 0.5f);
}

TEST_CASE("cast_outputs copies the common-dtype result into the caller's out", "[iterator]") {
  Tensor a = iota({6});
  Tensor b = full({6}, Scalar(0.25), ScalarType::Float32);
  Tensor out = zeros({6}, ScalarType::Float64);
  auto iter = TensorIteratorConfig()
                  .add_output(out)
                  .add_input(a)
                  .add_input(b)
                  .promote_inputs_to_common_dtype(true)
                  .cast_common_dtype_to_outputs(true)
                  .build();
  // The kernel writes a float32 temporary...
  CHECK(iter.dtype(0) == ScalarType::Float32);
  CHECK_FALSE(iter.operand(0).tensor.is_same(out));
  iter.for_each(add_loop);
  for (int k = 0; k < 6; ++k) CHECK(out.data<double>()[k] == 0.0);
  // ...which cast_outputs converts into the float64 out.
  uint32_t version = out.impl()->version();
  iter.cast_outputs();
  CHECK(iter.output(0).is_same(out));
  CHECK(out.impl()->version() == version + 1);
  for (int k = 0; k < 6; ++k) CHECK(out.data<double>()[k] == k + 0.25);
}

TEST_CASE("a result that cannot be cast to out's dtype is refused", "[iterator]") {
  Tensor a = iota({3});
  Tensor out = zeros({3}, ScalarType::Int32);
  CHECK_THROWS_WITH(TensorIteratorConfig()
                        .name("add")
                        .add_output(out)
                        .add_input(a)
                        .add_input(a)
                        .promote_inputs_to_common_dtype(true)
                        .cast_common_dtype_to_outputs(true)
                        .build(),
                    Catch::Matchers::Contains("[add] result type float32 can't be cast to the "
                                              "desired output type int32"));
}

TEST_CASE("mixed input dtypes are refused unless promotion is on", "[iterator]") {
  Tensor a = iota({3});
  Tensor i = iota({3}, ScalarType::Int64);
  CHECK_THROWS_WITH(
      TensorIteratorConfig().name("op").add_output(Tensor()).add_input(a).add_input(i).build(),
      Catch::Matchers::Contains("expected all inputs to have dtype float32 but got int64"));
}
