#include "core/dtype.h"

#include <atomic>

#include "core/error.h"

namespace ember {

size_t element_size(ScalarType t) {
  static constexpr size_t sizes[] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16, 1, 1, 4, 1};
  static_assert(sizeof(sizes) / sizeof(sizes[0]) == kNumScalarTypes);
  EMBER_CHECK(t != ScalarType::Undefined, "[dtype] undefined dtype has no element size");
  return sizes[static_cast<int>(t)];
}

const char* dtype_name(ScalarType t) {
  static const char* names[] = {
      "bool",    "uint8",   "int8",      "int16",      "int32", "int64",  "float16", "bfloat16",
      "float32", "float64", "complex64", "complex128", "qint8", "quint8", "qint32",  "quint4x2"};
  static_assert(sizeof(names) / sizeof(names[0]) == kNumScalarTypes);
  if (t == ScalarType::Undefined) return "undefined";
  return names[static_cast<int>(t)];
}

ScalarType to_complex(ScalarType t) {
  switch (t) {
    case ScalarType::Float16:  // PyTorch has complex32 here; Ember promotes to complex64
    case ScalarType::BFloat16:
    case ScalarType::Float32:
      return ScalarType::Complex64;
    case ScalarType::Float64:
      return ScalarType::Complex128;
    case ScalarType::Complex64:
    case ScalarType::Complex128:
      return t;
    default:
      EMBER_THROW(TypeError, "[to_complex] no complex counterpart for dtype ", dtype_name(t));
  }
}

ScalarType to_real(ScalarType t) {
  if (t == ScalarType::Complex64) return ScalarType::Float32;
  if (t == ScalarType::Complex128) return ScalarType::Float64;
  return t;
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (a == ScalarType::Undefined) return b;
  if (b == ScalarType::Undefined) return a;
  if (is_quantized(a) || is_quantized(b)) {
    EMBER_THROW(TypeError, "[promote_types] quantized dtypes take part in no type promotion, got ",
                dtype_name(a), " and ", dtype_name(b), ": call dequantize() first");
  }
  // Table in ScalarType order, as torch.promote_types.
  constexpr auto b1 = ScalarType::Bool, u1 = ScalarType::UInt8, i1 = ScalarType::Int8,
                 i2 = ScalarType::Int16, i4 = ScalarType::Int32, i8 = ScalarType::Int64,
                 f2 = ScalarType::Float16, bf = ScalarType::BFloat16, f4 = ScalarType::Float32,
                 f8 = ScalarType::Float64, c8 = ScalarType::Complex64, c16 = ScalarType::Complex128;
  static constexpr ScalarType table[kNumPromotableScalarTypes][kNumPromotableScalarTypes] = {
      /*        b1   u1   i1   i2   i4   i8   f2   bf   f4   f8   c8   c16 */
      /* b1 */ {b1, u1, i1, i2, i4, i8, f2, bf, f4, f8, c8, c16},
      /* u1 */ {u1, u1, i2, i2, i4, i8, f2, bf, f4, f8, c8, c16},
      /* i1 */ {i1, i2, i1, i2, i4, i8, f2, bf, f4, f8, c8, c16},
      /* i2 */ {i2, i2, i2, i2, i4, i8, f2, bf, f4, f8, c8, c16},
      /* i4 */ {i4, i4, i4, i4, i4, i8, f2, bf, f4, f8, c8, c16},
      /* i8 */ {i8, i8, i8, i8, i8, i8, f2, bf, f4, f8, c8, c16},
      /* f2 */ {f2, f2, f2, f2, f2, f2, f2, f4, f4, f8, c8, c16},
      /* bf */ {bf, bf, bf, bf, bf, bf, f4, bf, f4, f8, c8, c16},
      /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f4, f4, f8, c8, c16},
      /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, c16, c16},
      /* c8 */ {c8, c8, c8, c8, c8, c8, c8, c8, c8, c16, c8, c16},
      /* c16*/ {c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16, c16},
  };
  return table[static_cast<int>(a)][static_cast<int>(b)];
}

bool can_cast(ScalarType from, ScalarType to) {
  if (is_quantized(from) || is_quantized(to)) return from == to;
  if (is_complex(from) && !is_complex(to)) return false;
  if (is_floating(from) && is_integral(to, /*include_bool=*/true)) return false;
  if (from != ScalarType::Bool && to == ScalarType::Bool) return false;
  return true;
}

namespace {
std::atomic<ScalarType> g_default_dtype{ScalarType::Float32};
}

ScalarType default_dtype() {
  return g_default_dtype.load(std::memory_order_relaxed);
}

void set_default_dtype(ScalarType t) {
  EMBER_CHECK_T(TypeError, is_floating(t),
                "[set_default_dtype] only floating-point types are supported as the default type, "
                "got ",
                dtype_name(t));
  g_default_dtype.store(t, std::memory_order_relaxed);
}

}  // namespace ember
