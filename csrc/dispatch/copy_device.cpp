// Copies where either side is on a device other than the CPU (Note [Copies across devices]).
#include "dispatch/copy_device.h"

#include "core/device_backend.h"
#include "core/factory.h"
#include "core/shape.h"
#include "dispatch/copy.h"

namespace ember {

// Note [Copies across devices]
// A device backend moves bytes; the element work (dtype conversion, strides, broadcasting) is
// the CPU copy's. A copy with a device side therefore stages through the host: the device side
// is brought over as the block of memory its view reaches, and the CPU copy writes between host
// views with the original strides. A strided device destination is read back first, so that
// elements of its block outside the view keep their values when the block is written back.
// Copies of whole contiguous tensors of one dtype skip the staging and move bytes directly.
// This is the fallback every device has; a device's own copy kernel would be faster for
// strided or converting copies on the device.
namespace {

const DeviceBackend& backend_for(const Tensor& dst, const Tensor& src) {
  const DeviceType type = dst.device().is_cpu() ? src.device().type : dst.device().type;
  const DeviceBackend* backend = device_backend(type);
  EMBER_CHECK(backend != nullptr, "[copy] no backend is loaded for device ",
              device_type_name(type));
  return *backend;
}

// The number of elements from t's first element to its last in memory, plus one.
int64_t element_span(const Tensor& t, const char* op) {
  if (t.numel() == 0) return 0;
  int64_t last = 0;
  for (int64_t d = 0; d < t.dim(); ++d) {
    EMBER_CHECK(t.stride(d) >= 0, "[", op,
                "] cannot copy a view with negative strides across "
                "devices");
    last += (t.size(d) - 1) * t.stride(d);
  }
  return last + 1;
}

// src's strides seen from dst's shape: broadcast dims get stride 0.
Tensor broadcast_to_shape(const Tensor& src, IntArrayRef shape, const char* op) {
  if (src.sizes().equals(shape)) return src;
  const int64_t nd = static_cast<int64_t>(shape.size());
  EMBER_CHECK(src.dim() <= nd, "[", op, "] cannot copy a tensor of shape ", shape_str(src.sizes()),
              " into one of shape ", shape_str(shape));
  DimVector strides(static_cast<size_t>(nd), 0);
  for (int64_t d = 0; d < src.dim(); ++d) {
    const int64_t out_d = nd - src.dim() + d;
    if (src.size(d) == shape[out_d]) {
      strides[out_d] = src.stride(d);
    } else {
      EMBER_CHECK(src.size(d) == 1, "[", op, "] the shape of the source ", shape_str(src.sizes()),
                  " cannot be broadcast to the destination's ", shape_str(shape));
    }
  }
  return Tensor(
      make_intrusive<TensorImpl>(src.storage(), src.dtype(), shape, strides, src.storage_offset()));
}

// A host tensor with t's sizes and strides over a fresh host copy of the block t reaches.
Tensor host_copy_of_block(const DeviceBackend& backend, const Tensor& t, const char* op) {
  const int64_t span = element_span(t, op);
  Tensor block = empty_tensor({span}, t.dtype(), Device(), op);
  backend.copy_bytes(block.data_ptr(), Device(), t.impl()->device_data(), t.device(),
                     checked_nbytes(span, t.itemsize(), op), op);
  return Tensor(make_intrusive<TensorImpl>(block.storage(), t.dtype(), t.sizes(), t.strides(), 0));
}

}  // namespace

void copy_across_devices(const Tensor& dst, const Tensor& src_in, const char* op) {
  if (dst.numel() == 0) return;
  const DeviceBackend& backend = backend_for(dst, src_in);
  const Tensor src = broadcast_to_shape(src_in, dst.sizes(), op);
  const size_t nbytes = checked_nbytes(dst.numel(), dst.itemsize(), op);
  if (src.dtype() == dst.dtype() && src.is_contiguous() && dst.is_contiguous()) {
    backend.copy_bytes(dst.impl()->device_data(), dst.device(), src.impl()->device_data(),
                       src.device(), nbytes, op);
    return;
  }
  // Read the source first: dst may overlap it.
  const Tensor host_src = src.device().is_cpu() ? src : host_copy_of_block(backend, src, op);
  if (dst.device().is_cpu()) {
    copy_into(dst, host_src, op, /*bump_version=*/false);
    return;
  }
  if (dst.is_contiguous()) {
    Tensor staging = empty_tensor(dst.sizes(), dst.dtype(), Device(), op);
    copy_into(staging, host_src, op, /*bump_version=*/false);
    backend.copy_bytes(dst.impl()->device_data(), dst.device(), staging.data_ptr(), Device(),
                       nbytes, op);
    return;
  }
  Tensor host_dst = host_copy_of_block(backend, dst, op);
  copy_into(host_dst, host_src, op, /*bump_version=*/false);
  backend.copy_bytes(dst.impl()->device_data(), dst.device(), host_dst.storage()->data(), Device(),
                     checked_nbytes(element_span(dst, op), dst.itemsize(), op), op);
}

}  // namespace ember
