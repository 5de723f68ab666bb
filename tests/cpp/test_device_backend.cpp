// The core's side of a device other than the CPU (core/device_backend.h, dispatch/copy_device.h),
// tested without a GPU: a stand-in backend registered as "cuda" hands out host memory and counts
// what it is asked to do. Checked: storage comes from and returns to the backend, host access to
// device data is refused, and copies in every direction (strided, converting, broadcast) give the
// CPU copy's result.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>

#include "api/elementwise.h"
#include "api/views.h"
#include "core/device_backend.h"
#include "core/factory.h"
#include "dispatch/copy.h"
#include "ops/conversion.h"
#include "ops/creation.h"

using namespace ember;

namespace {

struct Counts {
  int allocations = 0, releases = 0, copies = 0;
  int64_t live_bytes = 0;
};
Counts g_counts;

void* fake_allocate(size_t nbytes, int index, const char*) {
  if (nbytes == 0) return nullptr;
  ++g_counts.allocations;
  g_counts.live_bytes += static_cast<int64_t>(nbytes);
  // Garbage, as device memory would be: nothing may rely on fresh memory being zero.
  void* p = std::malloc(nbytes);
  std::memset(p, 0xA5, nbytes);
  return p;
}
void fake_release(void* ptr, size_t nbytes, int) noexcept {
  if (ptr == nullptr) return;
  ++g_counts.releases;
  g_counts.live_bytes -= static_cast<int64_t>(nbytes);
  std::free(ptr);
}
void fake_copy(void* dst, Device, const void* src, Device, size_t nbytes, const char*) {
  ++g_counts.copies;
  std::memcpy(dst, src, nbytes);
}
int fake_count() {
  return 1;
}
int fake_current() {
  return 0;
}

const DeviceBackend kFake = {fake_allocate, fake_release, fake_copy, fake_count, fake_current};

// Registers the stand-in for one test and removes it after.
struct FakeCuda {
  FakeCuda() {
    g_counts = {};
    register_device_backend(DeviceType::CUDA, &kFake);
  }
  ~FakeCuda() { register_device_backend(DeviceType::CUDA, nullptr); }
};

const Device kCuda(DeviceType::CUDA);

// 0, 1, 2, ... as float64 of `sizes`, on the CPU.
Tensor iota(IntArrayRef sizes) {
  Tensor t = empty_tensor(sizes, ScalarType::Float64, Device(), "test");
  for (int64_t i = 0; i < t.numel(); ++i) t.data<double>()[i] = static_cast<double>(i);
  return t;
}

Tensor to_cpu(const Tensor& t) {
  return native::to(t, t.dtype(), Device());
}

}  // namespace

TEST_CASE("device storage comes from the backend and goes back to it", "[device]") {
  FakeCuda fake;
  {
    Tensor t = empty_tensor({2, 3}, ScalarType::Float32, kCuda, "test");
    CHECK(t.device() == Device(DeviceType::CUDA, 0));  // the current device's index is filled in
    CHECK(t.storage()->device_owned());
    CHECK(g_counts.allocations == 1);
    CHECK(g_counts.live_bytes == 24);
    Tensor view = transpose(t, 0, 1);  // views never copy
    t = Tensor();
    CHECK(g_counts.releases == 0);
  }
  CHECK(g_counts.releases == 1);
  CHECK(g_counts.live_bytes == 0);
}

namespace {
int g_other_releases = 0;
void other_release(void* ptr, size_t, int) noexcept {
  ++g_other_releases;
  std::free(ptr);
}
const DeviceBackend kOther = {fake_allocate, other_release, fake_copy, fake_count, fake_current};
}  // namespace

TEST_CASE("device storage goes back to the backend that gave it", "[device]") {
  // The Python tests' host-memory stand-in can be followed by the real CUDA backend in one
  // process: blocks the first handed out must not reach the second's release.
  FakeCuda fake;
  Tensor first = empty_tensor({4}, ScalarType::Float32, kCuda, "test");
  register_device_backend(DeviceType::CUDA, &kOther);
  Tensor second = empty_tensor({4}, ScalarType::Float32, kCuda, "test");
  g_other_releases = 0;
  first = Tensor();
  CHECK(g_counts.releases == 1);
  CHECK(g_other_releases == 0);
  second = Tensor();
  CHECK(g_counts.releases == 1);
  CHECK(g_other_releases == 1);
}

TEST_CASE("a device that does not exist or has no backend is refused", "[device]") {
  CHECK_THROWS_WITH(empty_tensor({2}, ScalarType::Float32, kCuda, "zeros"),
                    Catch::Contains("Ember's CUDA backend is not loaded"));
  FakeCuda fake;
  CHECK_THROWS_WITH(empty_tensor({2}, ScalarType::Float32, Device(DeviceType::CUDA, 3), "zeros"),
                    Catch::Contains("'cuda:3' does not exist: this machine has 1 CUDA device"));
}

TEST_CASE("host code cannot read a device tensor's elements", "[device]") {
  FakeCuda fake;
  Tensor t = empty_tensor({4}, ScalarType::Float32, kCuda, "test");
  CHECK(t.impl()->device_data() != nullptr);
  CHECK_THROWS_AS(t.data_ptr(), NotImplementedError);
  CHECK_THROWS_WITH(t.data_ptr(), Catch::Contains("no kernel for device cuda:0"));
  // An op without a CUDA kernel raises, whatever path it takes to the data.
  Tensor c = empty_tensor({4}, ScalarType::Float32, Device(), "test");
  CHECK_THROWS_AS(add(t, t), NotImplementedError);
  CHECK_THROWS_AS(add(c, t), Error);  // two devices: the iterator's error
}

TEST_CASE("whole contiguous tensors move to and from a device as bytes", "[device]") {
  FakeCuda fake;
  Tensor host = iota({3, 4});
  Tensor dev = native::to(host, ScalarType::Float64, kCuda);
  CHECK(dev.device().type == DeviceType::CUDA);
  CHECK(g_counts.copies == 1);
  Tensor back = to_cpu(dev);
  CHECK(g_counts.copies == 2);
  for (int64_t i = 0; i < 12; ++i) CHECK(back.data<double>()[i] == static_cast<double>(i));
  // Same device, same dtype: a byte copy too.
  Tensor dev2 = native::to(dev, ScalarType::Float64, kCuda, /*copy=*/true);
  CHECK(g_counts.copies == 3);
  CHECK(to_cpu(dev2).data<double>()[11] == 11.0);
}

TEST_CASE("strided and converting copies to a device match the CPU copy", "[device]") {
  FakeCuda fake;
  Tensor host = iota({3, 4});
  // A transposed float64 source into a float32 device tensor.
  Tensor source = transpose(host, 0, 1);  // (4, 3): source[i][j] = 4 j + i
  Tensor dev = empty_tensor({4, 3}, ScalarType::Float32, kCuda, "test");
  copy_into(dev, source, "copy_");
  Tensor back = to_cpu(dev);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 3; ++j)
      CHECK(back.data<float>()[i * 3 + j] == static_cast<float>(4 * j + i));
  // From a strided device view (a transpose of the device tensor) back to the host.
  Tensor host_t = empty_tensor({3, 4}, ScalarType::Float64, Device(), "test");
  copy_into(host_t, transpose(dev, 0, 1), "copy_");
  for (int64_t i = 0; i < 12; ++i) CHECK(host_t.data<double>()[i] == static_cast<double>(i));
}

TEST_CASE("a strided device destination keeps the elements outside its view", "[device]") {
  FakeCuda fake;
  Tensor dev = native::to(iota({3, 4}), ScalarType::Float64, kCuda);
  Tensor column = select(dev, 1, 2);  // dev[:, 2], stride 4
  Tensor values = empty_tensor({3}, ScalarType::Float64, Device(), "test");
  for (int i = 0; i < 3; ++i) values.data<double>()[i] = -1.0 - i;
  copy_into(column, values, "copy_");
  Tensor back = to_cpu(dev);
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 4; ++c) {
      const double want = c == 2 ? -1.0 - r : static_cast<double>(r * 4 + c);
      CHECK(back.data<double>()[r * 4 + c] == want);
    }
}

TEST_CASE("a copy to a device broadcasts its source", "[device]") {
  FakeCuda fake;
  Tensor dev = empty_tensor({3, 4}, ScalarType::Int32, kCuda, "test");
  copy_into(dev, iota({4}), "copy_");
  Tensor back = to_cpu(dev);
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 4; ++c) CHECK(back.data<int32_t>()[r * 4 + c] == c);
  CHECK_THROWS_WITH(copy_into(dev, iota({5}), "copy_"), Catch::Contains("cannot be broadcast"));
  // Empty tensors copy nothing.
  Tensor none = empty_tensor({0, 4}, ScalarType::Int32, kCuda, "test");
  const int copies = g_counts.copies;
  copy_into(none, iota({0, 4}), "copy_");
  CHECK(g_counts.copies == copies);
}
