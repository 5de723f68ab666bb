// The kernel registry (DispatchStub) and the dtype dispatch helper.
#include <catch2/catch.hpp>
#include <type_traits>

#include "api/elementwise.h"
#include "dispatch/copy.h"
#include "dispatch/dtype_dispatch.h"
#include "dispatch/stub.h"

using namespace ember;
using namespace ember::native;  // the kernels and stubs under test

namespace {
using ScaleFn = int (*)(int value, int factor);
int scale_cpu(int value, int factor) {
  return value * factor;
}
}  // namespace

// A stub of this test's own, registered for the CPU only, exactly as a kernel file does it.
EMBER_DEFINE_STUB(test_scale_stub, ScaleFn);
EMBER_REGISTER_KERNEL(test_scale_stub, CPU, scale_cpu);

TEST_CASE("a registered kernel is called with the arguments", "[dispatch]") {
  CHECK(test_scale_stub(Device(), 6, 7) == 42);
  CHECK(test_scale_stub(Device(DeviceType::CPU, 0), -2, 3) == -6);
  CHECK(std::string(test_scale_stub.name) == "test_scale_stub");
}

TEST_CASE("a device without a kernel raises NotImplementedError", "[dispatch]") {
  CHECK_THROWS_AS(test_scale_stub(Device(DeviceType::CUDA, 0), 1, 1), NotImplementedError);
  CHECK_THROWS_WITH(test_scale_stub(Device(DeviceType::CUDA, 0), 1, 1),
                    Catch::Matchers::StartsWith(
                        "[test_scale_stub] not implemented for device cuda: this backend has no "
                        "kernel for it yet; move the tensors with .cpu()"));
}

TEST_CASE("the core ops have CPU kernels at every level and none for CUDA", "[dispatch]") {
  const int cuda = static_cast<int>(DeviceType::CUDA);
  for (int l = 0; l < kNumCpuCapabilities; ++l) {
    const auto level = static_cast<CpuCapability>(l);
    CHECK(copy_stub.cpu_kernel_at(level) != nullptr);
    CHECK(add_stub.cpu_kernel_at(level) != nullptr);
    CHECK(mul_stub.cpu_kernel_at(level) != nullptr);
  }
  // The baseline registers every kernel; the SIMD files register more at higher levels.
  CHECK(add_stub.cpu_levels[0] != nullptr);
#if defined(EMBER_TEST_HAS_AVX2_KERNELS)
  CHECK(add_stub.cpu_levels[static_cast<int>(CpuCapability::Avx2)] != nullptr);
#else
  // A baseline-only build (EMBER_CPU_LEVELS empty): nothing registers above the baseline, and
  // every level resolves to the baseline's kernel (checked above).
  CHECK(add_stub.cpu_levels[static_cast<int>(CpuCapability::Avx2)] == nullptr);
  CHECK(add_stub.cpu_kernel_at(CpuCapability::Avx2) == add_stub.cpu_levels[0]);
#endif
  // No CUDA library is loaded into this test binary.
  CHECK(add_stub.table[cuda] == nullptr);
}

TEST_CASE("dispatch_dtype passes the C++ type of the dtype", "[dispatch][dtype]") {
  // Every plain dtype reaches the lambda with the C++ type that maps back to it.
  for (int i = 0; i < kNumPromotableScalarTypes; ++i) {
    auto t = static_cast<ScalarType>(i);
    ScalarType seen = dispatch_dtype<kAllTypes>(
        t, "test", [](auto tag) { return scalar_type_of<typename decltype(tag)::type>; });
    CHECK(seen == t);
  }
  // Quantized dtypes reach no kernel: the error names the op and says what to do instead.
  for (ScalarType q : {ScalarType::QInt8, ScalarType::QUInt8, ScalarType::QInt32}) {
    CHECK_THROWS_WITH(dispatch_dtype<kAllTypes>(q, "test", [](auto) { return 0; }),
                      Catch::Contains("[test] does not take quantized tensors") &&
                          Catch::Contains("dequantize()"));
  }
  CHECK(dispatch_dtype<kAllTypes>(ScalarType::Float16, "test", [](auto tag) {
    return std::is_same_v<typename decltype(tag)::type, Half>;
  }));
  CHECK(dispatch_dtype<kAllTypes>(ScalarType::Complex64, "test", [](auto tag) {
    return std::is_same_v<typename decltype(tag)::type, std::complex<float>>;
  }));
}

TEST_CASE("dispatch_dtype returns the lambda's value", "[dispatch][dtype]") {
  size_t size = dispatch_dtype<kFloatingTypes>(
      ScalarType::BFloat16, "test", [](auto tag) { return sizeof(typename decltype(tag)::type); });
  CHECK(size == 2);
  CHECK(dispatch_dtype<kNumericTypes>(ScalarType::Complex128, "test", [](auto tag) {
          return sizeof(typename decltype(tag)::type);
        }) == 16);
}

TEST_CASE("dispatch_dtype rejects a dtype outside its set, naming op and dtype",
          "[dispatch][dtype]") {
  int calls = 0;
  auto floating_only = [&](ScalarType t) {
    dispatch_dtype<kFloatingTypes>(t, "erfinv", [&](auto) { ++calls; });
  };
  CHECK_NOTHROW(floating_only(ScalarType::Float32));
  CHECK_THROWS_AS(floating_only(ScalarType::Int32), Error);
  CHECK_THROWS_WITH(floating_only(ScalarType::Int32), "[erfinv] not implemented for dtype int32");
  CHECK_THROWS_WITH(floating_only(ScalarType::Complex64),
                    "[erfinv] not implemented for dtype complex64");
  CHECK_THROWS_WITH(floating_only(ScalarType::Undefined),
                    "[erfinv] not implemented for dtype undefined");
  CHECK(calls == 1);  // the lambda never ran for a rejected dtype
  // Sets are bit masks: kNumericTypes leaves bool out, kRealTypes leaves complex out.
  CHECK_THROWS_WITH(dispatch_dtype<kNumericTypes>(ScalarType::Bool, "neg", [](auto) {}),
                    "[neg] not implemented for dtype bool");
  CHECK_THROWS_WITH(dispatch_dtype<kRealTypes>(ScalarType::Complex128, "max", [](auto) {}),
                    "[max] not implemented for dtype complex128");
  CHECK_NOTHROW(dispatch_dtype<kIntegralAndBool>(ScalarType::Bool, "and", [](auto) {}));
}
