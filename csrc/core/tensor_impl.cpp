#include "core/tensor_impl.h"

#include "core/error.h"
#include "core/shape.h"

namespace ember {

void TensorImpl::throw_bad_dim(int64_t d) const {
  if (dim() == 0) {
    EMBER_THROW(IndexError, "Dimension specified as ", d, " but tensor has no dimensions");
  }
  EMBER_THROW(IndexError, "Dimension out of range (expected to be in range of [", -dim(), ", ",
              dim() - 1, "], but got ", d, ")");
}

// Note [Host data only on the CPU]
// A kernel reaches a tensor's elements through data(), and every CPU kernel assumes it can read
// them. A tensor on another device holds an address the host cannot touch, so data() refuses it
// (one predictable branch per kernel call, not per element): an op without a kernel for that
// device then raises NotImplementedError instead of reading device memory. Device kernels and
// copies between devices use device_data().
void TensorImpl::throw_not_on_cpu() const {
  EMBER_THROW(NotImplementedError, "[", device().str(),
              "] this operation has no kernel for device ", device().str(),
              " yet (Ember's CUDA backend runs copies, fills and collectives): run it on CPU "
              "tensors (.cpu()) and move the result with .to(device)");
}

TensorImpl::TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides,
                       int64_t storage_offset, intrusive_ptr<VersionCounter> version)
    : storage_(std::move(storage)),
      sizes_(sizes),
      strides_(strides),
      storage_offset_(storage_offset),
      version_(version ? std::move(version) : make_intrusive<VersionCounter>()),
      dtype_(dtype) {
  refresh_cached_fields();
}

void TensorImpl::set_geometry(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) {
  sizes_.assign(sizes);
  strides_.assign(strides);
  storage_offset_ = storage_offset;
  refresh_cached_fields();
}

void TensorImpl::set_data_from(const TensorImpl& src) {
  storage_ = src.storage_;
  dtype_ = src.dtype_;
  quantizer_ = src.quantizer_;
  set_geometry(src.sizes_, src.strides_, src.storage_offset_);
}

void TensorImpl::refresh_cached_fields() {
  // Ops check the shapes they build; this is the backstop that keeps a view's element count
  // (expand(2**62, 4)) from wrapping around.
  numel_ = checked_numel(sizes_, "numel");
  is_contiguous_ = compute_is_contiguous(sizes_, strides_);
}

}  // namespace ember
