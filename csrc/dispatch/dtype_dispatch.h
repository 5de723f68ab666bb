// The one dtype dispatch helper (CONTRIBUTING.md, "Style"). A kernel names the set of dtypes it
// supports; only those instantiate the lambda, and any other dtype raises a RuntimeError naming the
// op:
//
//   dispatch_dtype<kFloatingTypes>(t.dtype(), "exp", [&](auto tag) {
//     using T = typename decltype(tag)::type;
//     ...
//   });
#pragma once
#include <cstdint>

#include "core/dtype.h"
#include "core/error.h"

namespace ember {

template <typename T>
struct TypeTag {
  using type = T;
};

enum DTypeSet : uint32_t {
  kBool = 1u << 0,
  kUInt8 = 1u << 1,
  kInt8 = 1u << 2,
  kInt16 = 1u << 3,
  kInt32 = 1u << 4,
  kInt64 = 1u << 5,
  kFloat16 = 1u << 6,
  kBFloat16 = 1u << 7,
  kFloat32 = 1u << 8,
  kFloat64 = 1u << 9,
  kComplex64 = 1u << 10,
  kComplex128 = 1u << 11,

  kIntegralTypes = kUInt8 | kInt8 | kInt16 | kInt32 | kInt64,
  kIntegralAndBool = kIntegralTypes | kBool,
  kFloatingTypes = kFloat16 | kBFloat16 | kFloat32 | kFloat64,
  kComplexTypes = kComplex64 | kComplex128,
  kFloatingAndComplex = kFloatingTypes | kComplexTypes,
  kRealTypes = kIntegralTypes | kFloatingTypes,  // no bool, no complex
  kRealAndBool = kRealTypes | kBool,
  kNumericTypes = kRealTypes | kComplexTypes,  // no bool
  kAllTypes = kNumericTypes | kBool,
};

[[noreturn]] void throw_unsupported_dtype(const char* op, ScalarType t);

template <uint32_t Set, typename F>
decltype(auto) dispatch_dtype(ScalarType t, const char* op, F&& f) {
#define EMBER_DISPATCH_CASE(ST, CPP, BIT)                     \
  case ScalarType::ST:                                        \
    if constexpr ((Set & BIT) != 0) return f(TypeTag<CPP>{}); \
    break;
  switch (t) {
    EMBER_DISPATCH_CASE(Bool, bool, kBool)
    EMBER_DISPATCH_CASE(UInt8, uint8_t, kUInt8)
    EMBER_DISPATCH_CASE(Int8, int8_t, kInt8)
    EMBER_DISPATCH_CASE(Int16, int16_t, kInt16)
    EMBER_DISPATCH_CASE(Int32, int32_t, kInt32)
    EMBER_DISPATCH_CASE(Int64, int64_t, kInt64)
    EMBER_DISPATCH_CASE(Float16, Half, kFloat16)
    EMBER_DISPATCH_CASE(BFloat16, BFloat16, kBFloat16)
    EMBER_DISPATCH_CASE(Float32, float, kFloat32)
    EMBER_DISPATCH_CASE(Float64, double, kFloat64)
    EMBER_DISPATCH_CASE(Complex64, complex64, kComplex64)
    EMBER_DISPATCH_CASE(Complex128, complex128, kComplex128)
    default:
      break;
  }
#undef EMBER_DISPATCH_CASE
  throw_unsupported_dtype(op, t);
}

}  // namespace ember
