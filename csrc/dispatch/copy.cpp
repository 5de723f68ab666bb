#include "dispatch/copy.h"

#include "core/factory.h"
#include "dispatch/copy_device.h"
#include "dispatch/tensor_iterator.h"

namespace ember {

EMBER_DEFINE_STUB(copy_stub, CopyFn);

namespace {

// The integers under a quantized tensor, as a plain tensor over the same memory.
Tensor storage_view(const Tensor& q) {
  return Tensor(make_intrusive<TensorImpl>(q.storage(), quantized_storage_type(q.dtype()),
                                           q.sizes(), q.strides(), q.storage_offset(),
                                           q.impl()->version_counter()));
}

}  // namespace

void copy_into(const Tensor& dst, const Tensor& src, const char* op, bool bump_version) {
  EMBER_CHECK(!dst.storage()->read_only(), "[", op,
              "] cannot write to a tensor backed by a read-only NumPy array");
  if (is_quantized(src.dtype()) || is_quantized(dst.dtype())) {
    // As PyTorch: quantized to quantized copies the integers and takes src's parameters; a float
    // source needs quantize_per_tensor; a float destination needs dequantize().
    EMBER_CHECK(src.dtype() == dst.dtype(), "[", op, "] copying a ", dtype_name(src.dtype()),
                " tensor into a ", dtype_name(dst.dtype()),
                " one is not supported: use dequantize() for a float tensor, or "
                "quantize_per_tensor / quantize_per_channel for a quantized one");
    copy_into(storage_view(dst), storage_view(src), op, false);
    dst.impl()->set_quantizer(src.impl()->quantizer());
    if (bump_version) dst.bump_version();
    return;
  }
  if (__builtin_expect(!dst.device().is_cpu() || !src.device().is_cpu(), 0)) {
    copy_across_devices(dst, src, op);
    if (bump_version) dst.bump_version();
    return;
  }
  auto iter = TensorIteratorConfig()
                  .name(op)
                  .add_output(dst)
                  .add_input(src)
                  .check_all_same_dtype(false)
                  .build();
  if (iter.numel() > 0) copy_stub(dst.device(), iter);
  if (bump_version) dst.bump_version();
}

Tensor converted_copy(const Tensor& src, ScalarType dtype, const char* op) {
  Tensor out = empty_tensor(src.sizes(), dtype, src.device(), op);
  if (!src.device().is_cpu()) {
    copy_across_devices(out, src, op);
    return out;
  }
  auto iter = TensorIteratorConfig()
                  .name(op)
                  .add_output(out)
                  .add_input(src)
                  .check_all_same_dtype(false)
                  .build();
  if (iter.numel() > 0) copy_stub(src.device(), iter);
  if (src.impl()->is_wrapped_number()) out.impl()->set_wrapped_number(true);
  return out;
}

}  // namespace ember
