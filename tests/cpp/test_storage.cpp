// Storage: borrowed external memory and its deleter, the allocator's counters and alignment, and
// the read-only flag (set for read-only NumPy arrays) that must block every write path.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "api/creation.h"
#include "api/views.h"
#include "core/allocator.h"
#include "core/factory.h"
#include "core/shape.h"
#include "core/storage.h"
#include "dispatch/copy.h"
#include "dispatch/tensor_iterator.h"

using namespace ember;

namespace {

struct Owner {
  std::vector<float> buffer;
  int deleter_calls = 0;
  void* deleted_data = nullptr;
};

void count_delete(void* ctx, void* data) noexcept {
  auto* owner = static_cast<Owner*>(ctx);
  ++owner->deleter_calls;
  owner->deleted_data = data;
}

// A float32 tensor of `sizes` viewing owner's buffer through a borrowing storage.
Tensor borrow(Owner& owner, IntArrayRef sizes) {
  auto storage = make_intrusive<StorageImpl>(
      owner.buffer.data(), owner.buffer.size() * sizeof(float), Device(), &count_delete, &owner);
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), ScalarType::Float32, sizes,
                                           contiguous_strides(sizes), 0));
}

}  // namespace

TEST_CASE("external memory is released exactly once, after the last view", "[storage]") {
  Owner owner;
  owner.buffer = {1, 2, 3, 4, 5, 6};
  int64_t allocs_before = cpu_allocator_stats().num_allocs;
  {
    Tensor t = borrow(owner, {2, 3});
    CHECK_FALSE(t.storage()->owns_memory());
    CHECK(t.data_ptr() == owner.buffer.data());
    Tensor v = transpose(t, 0, 1);
    {
      Tensor row = select(t, 0, 1);
      t = Tensor();  // the original handle goes first
      CHECK(row.data<float>()[2] == 6.0f);
    }
    CHECK(owner.deleter_calls == 0);                  // v still holds the storage
    CHECK(v.data<float>()[1 * v.stride(1)] == 4.0f);  // v[0][1] is t[1][0]
  }
  CHECK(owner.deleter_calls == 1);
  CHECK(owner.deleted_data == owner.buffer.data());
  // Borrowing never touches Ember's allocator.
  CHECK(cpu_allocator_stats().num_allocs == allocs_before);
}

TEST_CASE("writes through a borrowed storage reach the owner's memory", "[storage]") {
  Owner owner;
  owner.buffer.assign(4, 0.0f);
  {
    Tensor t = borrow(owner, {4});
    Tensor tail = slice(t, 0, 2, std::nullopt);
    fill_(tail, Scalar(7.0));
  }
  CHECK(owner.buffer == std::vector<float>{0, 0, 7, 7});
  CHECK(owner.deleter_calls == 1);
}

TEST_CASE("allocator counters follow allocations and frees", "[storage][allocator]") {
  AllocatorStats before = cpu_allocator_stats();
  {
    Tensor a = empty({250}, ScalarType::Float32);  // 1000 bytes
    AllocatorStats mid = cpu_allocator_stats();
    CHECK(mid.current_bytes == before.current_bytes + 1000);
    CHECK(mid.num_allocs == before.num_allocs + 1);
    CHECK(mid.peak_bytes >= mid.current_bytes);
    // 64-byte alignment: one cache line, the widest SIMD load.
    CHECK(reinterpret_cast<uintptr_t>(a.data_ptr()) % 64 == 0);
    Tensor v = view(a, {25, 10});  // views share the block
    CHECK(cpu_allocator_stats().num_allocs == mid.num_allocs);
  }
  AllocatorStats after = cpu_allocator_stats();
  CHECK(after.current_bytes == before.current_bytes);
  CHECK(after.num_allocs == before.num_allocs + 1);  // cumulative
}

TEST_CASE("the peak counter records the high-water mark until reset", "[storage][allocator]") {
  reset_cpu_allocator_peak();
  int64_t base = cpu_allocator_stats().current_bytes;
  CHECK(cpu_allocator_stats().peak_bytes == base);
  { Tensor big = empty({1 << 16}, ScalarType::Float64); }  // 512 KiB, then freed
  CHECK(cpu_allocator_stats().peak_bytes >= base + (8 << 16));
  CHECK(cpu_allocator_stats().current_bytes == base);
  reset_cpu_allocator_peak();
  CHECK(cpu_allocator_stats().peak_bytes == base);
}

TEST_CASE("empty tensors allocate nothing", "[storage][allocator]") {
  AllocatorStats before = cpu_allocator_stats();
  Tensor e = empty({0, 5}, ScalarType::Float32);
  CHECK(e.storage()->nbytes() == 0);
  CHECK(cpu_allocator_stats().num_allocs == before.num_allocs);
  CHECK(cpu_alloc(0, "test") == nullptr);
}

TEST_CASE("an impossible allocation raises OutOfMemoryError naming the op",
          "[storage][allocator]") {
  // Rounding SIZE_MAX up to the alignment overflows: refused before any allocation.
  CHECK_THROWS_AS(cpu_alloc(SIZE_MAX - 3, "test_alloc"), OutOfMemoryError);
  CHECK_THROWS_WITH(cpu_alloc(SIZE_MAX - 3, "test_alloc"),
                    Catch::Matchers::StartsWith("[test_alloc] cannot allocate"));
}

TEST_CASE("a read-only storage refuses every write", "[storage][read_only]") {
  Owner owner;
  owner.buffer = {1, 2, 3, 4};
  Tensor t = borrow(owner, {4});
  t.storage()->set_read_only(true);
  Tensor src = full({4}, Scalar(9.0), ScalarType::Float32);
  uint32_t version = t.impl()->version();

  CHECK_THROWS_WITH(copy_into(t, src, "copy_"),
                    Catch::Matchers::Contains("[copy_]") && Catch::Matchers::Contains("read-only"));
  CHECK_THROWS_WITH(fill_(t, Scalar(0.0)),
                    Catch::Matchers::Contains("[fill_]") && Catch::Matchers::Contains("read-only"));
  CHECK_THROWS_AS(copy_(t, src), Error);
  // Views share the storage, so they are read-only too.
  Tensor v = slice(t, 0, 1, 3);
  CHECK_THROWS_WITH(fill_(v, Scalar(0.0)), Catch::Matchers::Contains("read-only"));
  // Any iterator with it as an output refuses to build.
  CHECK_THROWS_WITH(TensorIteratorConfig().name("add_").add_output(t).add_input(src).build(),
                    Catch::Matchers::Contains("[add_]") && Catch::Matchers::Contains("read-only"));

  CHECK(owner.buffer == std::vector<float>{1, 2, 3, 4});  // nothing was written
  CHECK(t.impl()->version() == version);                  // and no version bump

  // Reading is fine.
  Tensor dst = zeros({4}, ScalarType::Float64);
  copy_into(dst, t, "copy_");
  CHECK(dst.data<double>()[3] == 4.0);
  Tensor c = clone(t);
  CHECK_FALSE(c.storage()->read_only());
  fill_(c, Scalar(0.0));
  CHECK(owner.buffer[0] == 1.0f);
}
