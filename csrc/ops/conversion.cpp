#include "ops/conversion.h"

#include "core/shape.h"
#include "dispatch/copy.h"
#include "dispatch/dtype_dispatch.h"
#include "dispatch/tensor_iterator.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(contains_stub, ContainsFn);

bool is_non_overlapping_and_dense(const Tensor& t) {
  return is_non_overlapping_and_dense(t.sizes(), t.strides());
}

Tensor empty_like(const Tensor& t, TensorOptions opts, bool preserve_strides) {
  const ScalarType dtype = opts.dtype_or(t.dtype());
  // A quantized result takes t's parameters (PyTorch's empty_like); without them it cannot be.
  EMBER_CHECK_T(TypeError, !is_quantized(dtype) || dtype == t.dtype(),
                "[empty_like] cannot make a ", dtype_name(dtype), " tensor like a ",
                dtype_name(t.dtype()), " one: there are no quantization parameters to take");
  // A layout that is not dense gets dense strides in the same dim order (a transposed slice
  // stays transposed), as torch.preserve_format gives it.
  Tensor out = !preserve_strides || t.is_contiguous() || t.numel() == 0
                   ? empty_tensor(t.sizes(), dtype, opts.device, "empty_like")
                   : empty_strided_tensor(t.sizes(), preserved_strides(t.sizes(), t.strides()),
                                          dtype, opts.device, "empty_like");
  if (is_quantized(dtype)) out.impl()->set_quantizer(t.impl()->quantizer());
  return out;
}

Tensor to(const Tensor& t, ScalarType dtype, Device device, bool copy, bool preserve_strides) {
  // A device without an index ("cpu") matches the tensor's device of that type.
  const bool same_device =
      device.type == t.device().type && (device.index < 0 || device.index == t.device().index ||
                                         (device.is_cpu() && device.index <= 0));
  if (dtype == t.dtype() && same_device && !copy) return t;
  check_device_available(device, "to");
  Tensor out = empty_like(t, TensorOptions(dtype, device), preserve_strides);
  copy_into(out, t, "to", /*bump_version=*/false);
  return out;
}

Scalar item(const Tensor& t, const char* op) {
  EMBER_CHECK(t.numel() == 1, "[", op, "] a Tensor with ", t.numel(),
              " elements cannot be converted to Scalar");
  return dispatch_dtype<kAllTypes>(t.dtype(), op, [&](auto tag) -> Scalar {
    using T = typename decltype(tag)::type;
    const T v = *t.data<T>();
    if constexpr (std::is_same_v<T, bool>) {
      return Scalar(v);
    } else if constexpr (std::is_integral_v<T>) {
      return Scalar(static_cast<int64_t>(v));
    } else if constexpr (is_complex_v<T>) {
      return Scalar(std::complex<double>(v.real(), v.imag()));
    } else {
      return Scalar(static_cast<double>(static_cast<acc_type<T>>(v)));
    }
  });
}

bool contains(const Tensor& t, const Tensor& element) {
  TensorIterator iter = TensorIteratorConfig()
                            .name("__contains__")
                            .add_input(t)
                            .add_input(element)
                            .promote_inputs_to_common_dtype(true)
                            .build();
  if (iter.numel() == 0) return false;
  return contains_stub(iter.device(), iter);
}

Tensor detach(const Tensor& t) {
  return alias(t);
}

}  // namespace native
}  // namespace ember
