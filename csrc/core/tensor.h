// Tensor: a cheap handle (one pointer) to a TensorImpl. Ops are free functions in ops/*.h.
#pragma once
#include <utility>

#include "core/error.h"
#include "core/tensor_impl.h"

namespace ember {

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(intrusive_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return static_cast<bool>(impl_); }
  TensorImpl* impl() const { return impl_.get(); }
  const intrusive_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }

  ScalarType dtype() const { return impl_->dtype(); }
  Device device() const { return impl_->device(); }
  IntArrayRef sizes() const { return impl_->sizes(); }
  IntArrayRef strides() const { return impl_->strides(); }
  int64_t size(int64_t d) const { return impl_->size(d); }
  int64_t stride(int64_t d) const { return impl_->stride(d); }
  int64_t dim() const { return impl_->dim(); }
  int64_t numel() const { return impl_->numel(); }
  int64_t storage_offset() const { return impl_->storage_offset(); }
  size_t itemsize() const { return impl_->itemsize(); }
  bool is_contiguous() const { return impl_->is_contiguous(); }
  const Storage& storage() const { return impl_->storage(); }
  void* data_ptr() const { return impl_->data(); }
  template <typename T>
  T* data() const {
    return static_cast<T*>(impl_->data());
  }
  bool is_floating_point() const { return is_floating(dtype()); }
  bool is_complex() const { return ember::is_complex(dtype()); }
  void bump_version() const { impl_->bump_version(); }

 private:
  intrusive_ptr<TensorImpl> impl_;
};

using TensorList = std::vector<Tensor>;

}  // namespace ember
