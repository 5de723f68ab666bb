#include "ops/complex.h"

#include "core/shape.h"
#include "ops/unary.h"

namespace ember {
namespace native {

namespace {
// A real view of the real (part = 0) or imaginary (part = 1) components: complex element i sits
// at float offset 2 * i, so every stride and the storage offset double.
Tensor component_view(const Tensor& a, int part) {
  DimVector strides(a.strides());
  for (auto& s : strides) s *= 2;
  return Tensor(make_intrusive<TensorImpl>(a.storage(), to_real(a.dtype()), a.sizes(), strides,
                                           a.storage_offset() * 2 + part,
                                           a.impl()->version_counter()));
}
}  // namespace

Tensor real(const Tensor& a) {
  if (!a.is_complex()) return a;
  return component_view(a, 0);
}

Tensor imag(const Tensor& a) {
  EMBER_CHECK_T(TypeError, a.is_complex(),
                "[imag] imag is not implemented for tensors with non-complex dtypes.");
  return component_view(a, 1);
}

Tensor conj(const Tensor& a) {
  if (!a.is_complex()) return a;
  return conj_physical(a);
}

Tensor view_as_real(const Tensor& a) {
  EMBER_CHECK(a.is_complex(), "[view_as_real] view_as_real is only supported for complex tensors, ",
              "got ", dtype_name(a.dtype()));
  DimVector sizes(a.sizes()), strides;
  for (int64_t s : a.strides()) strides.push_back(s * 2);
  sizes.push_back(2);
  strides.push_back(1);
  return Tensor(make_intrusive<TensorImpl>(a.storage(), to_real(a.dtype()), sizes, strides,
                                           a.storage_offset() * 2, a.impl()->version_counter()));
}

Tensor view_as_complex(const Tensor& a) {
  const ScalarType dt = a.dtype();
  EMBER_CHECK(
      dt == ScalarType::Float32 || dt == ScalarType::Float64,
      "[view_as_complex] view_as_complex is only supported for float32 and float64 tensors, ",
      "got ", dtype_name(dt), (dt == ScalarType::Float16 ? " (Ember has no complex32)" : ""));
  EMBER_CHECK(a.dim() > 0, "[view_as_complex] input tensor must have one or more dimensions");
  const int64_t last = a.dim() - 1;
  EMBER_CHECK(a.size(last) == 2, "[view_as_complex] tensor must have a last dimension of size 2, ",
              "got shape ", shape_str(a.sizes()));
  EMBER_CHECK(a.stride(last) == 1, "[view_as_complex] tensor must have a last dimension with ",
              "stride 1, got stride ", a.stride(last), " (call .contiguous() first)");
  DimVector sizes, strides;
  for (int64_t d = 0; d < last; ++d) {
    EMBER_CHECK(a.stride(d) % 2 == 0 || a.size(d) == 1, "[view_as_complex] tensor must have a ",
                "stride divisible by 2 for all but the last dimension, got strides ",
                shape_str(a.strides()), " (call .contiguous() first)");
    sizes.push_back(a.size(d));
    strides.push_back(a.size(d) == 1 ? 1 : a.stride(d) / 2);
  }
  EMBER_CHECK(a.storage_offset() % 2 == 0, "[view_as_complex] tensor must have a storage_offset ",
              "divisible by 2, got ", a.storage_offset(), " (call .clone() first)");
  return Tensor(make_intrusive<TensorImpl>(a.storage(), to_complex(dt), sizes, strides,
                                           a.storage_offset() / 2, a.impl()->version_counter()));
}

}  // namespace native
}  // namespace ember
