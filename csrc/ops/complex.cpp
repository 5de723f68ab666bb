#include "ops/complex.h"

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

}  // namespace native
}  // namespace ember
