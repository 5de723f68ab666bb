#include "core/factory.h"

#include "core/shape.h"

namespace ember {

Tensor empty_tensor(IntArrayRef sizes, ScalarType dtype, Device device, const char* op) {
  int64_t n = checked_numel(sizes, op);
  size_t nbytes = checked_nbytes(n, element_size(dtype), op);
  auto storage = make_intrusive<StorageImpl>(nbytes, device, op);
  return Tensor(
      make_intrusive<TensorImpl>(std::move(storage), dtype, sizes, contiguous_strides(sizes), 0));
}

Tensor empty_strided_tensor(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype, Device device,
                            const char* op) {
  EMBER_CHECK(sizes.size() == strides.size(), "[", op, "] mismatch in length of strides (",
              strides.size(), ") and shape (", sizes.size(), ")");
  checked_numel(sizes, op);
  // Storage must reach the farthest element: 1 + sum((size - 1) * stride).
  int64_t extent = 1;
  bool empty = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) empty = true;
    EMBER_CHECK(strides[i] >= 0, "[", op, "] negative strides are not supported, got stride ",
                strides[i], " at dim ", i);
    int64_t span;
    EMBER_CHECK(!__builtin_mul_overflow(sizes[i] > 0 ? sizes[i] - 1 : 0, strides[i], &span) &&
                    !__builtin_add_overflow(extent, span, &extent),
                "[", op, "] storage size for shape ", shape_str(sizes), " overflows");
  }
  if (empty) extent = 0;
  size_t nbytes = checked_nbytes(extent, element_size(dtype), op);
  auto storage = make_intrusive<StorageImpl>(nbytes, device, op);
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), dtype, sizes, strides, 0));
}

Tensor make_view(const Tensor& t, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) {
  auto impl = make_intrusive<TensorImpl>(t.storage(), t.dtype(), sizes, strides, storage_offset,
                                         t.impl()->version_counter());
  const auto& base = t.impl()->view_base();
  impl->set_view_base(base ? base : t.impl_ptr());
  if (const auto& q = t.impl()->quantizer()) {
    // Per-tensor parameters hold for any view. Per-channel ones hold while the channel axis
    // keeps its place, length and stride (views of the other dims: slices, selects of later
    // dims, transposes among them); other views go through the quantized view ops.
    EMBER_CHECK(!q->per_channel() || (q->axis() < static_cast<int64_t>(sizes.size()) &&
                                      sizes[q->axis()] == t.size(q->axis()) &&
                                      strides[q->axis()] == t.stride(q->axis())),
                "[view] this view of a per-channel quantized tensor (axis ", q->axis(), ", shape ",
                shape_str(t.sizes()), " -> ", shape_str(sizes),
                ") would move its channel axis: call dequantize() first, or index the channels "
                "with the axis in place");
    impl->set_quantizer(q);
  }
  return Tensor(std::move(impl));
}

}  // namespace ember
