// TensorImpl: a strided view of a Storage. See docs/design/tensor-model.md.
#pragma once
#include <atomic>
#include <memory>

#include "core/dtype.h"
#include "core/grad_state.h"
#include "core/intrusive_ptr.h"
#include "core/quantizer.h"
#include "core/small_vector.h"
#include "core/storage.h"

namespace ember {

// Note [Version Counter Sharing]: every in-place write bumps the counter, and all views of one
// storage share a single counter, so autograd can tell that a tensor it saved was modified through
// any alias. detach() shares it too; a fresh allocation gets a new one.
class VersionCounter : public RefCounted {
 public:
  uint32_t current() const { return version_.load(std::memory_order_relaxed); }
  void bump() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  std::atomic<uint32_t> version_{0};
};

// Autograd state lives behind this interface so that tensors that never require grad pay one
// null pointer. The autograd layer defines the implementation.
struct AutogradMetaInterface {
  virtual ~AutogradMetaInterface() = default;
};

class TensorImpl : public RefCounted {
 public:
  // A tensor over `storage` with explicit geometry. `version` null means a new counter.
  TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides,
             int64_t storage_offset, intrusive_ptr<VersionCounter> version = {});

  const Storage& storage() const { return storage_; }
  ScalarType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  IntArrayRef sizes() const { return sizes_; }
  IntArrayRef strides() const { return strides_; }
  // size(d) / stride(d) take a wrapped dim in [0, dim()). wrap_dim accepts 0 and -1 on a 0-d
  // tensor (as PyTorch), so an op that forgets that case would read past the sizes: the bound is
  // checked here, at one compare, and raises IndexError instead.
  int64_t size(int64_t d) const {
    if (__builtin_expect(static_cast<uint64_t>(d) >= sizes_.size(), 0)) throw_bad_dim(d);
    return sizes_[d];
  }
  int64_t stride(int64_t d) const {
    if (__builtin_expect(static_cast<uint64_t>(d) >= strides_.size(), 0)) throw_bad_dim(d);
    return strides_[d];
  }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t numel() const { return numel_; }
  int64_t storage_offset() const { return storage_offset_; }
  size_t itemsize() const { return element_size(dtype_); }
  bool is_contiguous() const { return is_contiguous_; }

  // Address of element 0 (storage data + offset * itemsize), for code that reads or writes the
  // elements on the host: only a CPU tensor has one (Note [Host data only on the CPU]).
  void* data() const {
    if (__builtin_expect(!storage_->device().is_cpu(), 0)) throw_not_on_cpu();
    return device_data();
  }
  // The same address on whatever device holds the storage: for device kernels, copies between
  // devices and identity checks, never for a host access.
  void* device_data() const {
    return static_cast<char*>(storage_->data()) +
           storage_offset_ * static_cast<int64_t>(itemsize());
  }

  [[noreturn]] [[gnu::cold]] void throw_bad_dim(int64_t d) const;
  [[noreturn]] [[gnu::cold]] void throw_not_on_cpu() const;

  // Replaces the storage (resize_ when the old one is too small, set_).
  void set_storage(Storage s) { storage_ = std::move(s); }
  // Changes geometry in place (as_strided_, squeeze_, ...); recomputes the cached fields.
  void set_geometry(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);
  // `tensor.data = src` (PyTorch's set_data): takes src's storage, dtype and geometry, keeping
  // this tensor's identity, autograd state and version counter (Module.to(dtype) relies on it).
  void set_data_from(const TensorImpl& src);

  const intrusive_ptr<VersionCounter>& version_counter() const { return version_; }
  uint32_t version() const { return version_->current(); }
  void bump_version() { version_->bump(); }

  // A Python int/float/bool/complex turned into a 0-d tensor for an op: it takes part in type
  // promotion only by category (see result_type in dispatch/tensor_iterator.h).
  bool is_wrapped_number() const { return wrapped_number_; }
  void set_wrapped_number(bool v) { wrapped_number_ = v; }

  AutogradMetaInterface* autograd_meta() const { return autograd_meta_.get(); }
  void set_autograd_meta(std::unique_ptr<AutogradMetaInterface> m) {
    autograd_meta_ = std::move(m);
  }

  // The tensor this one is a view of (the root: never itself a view), or null. Autograd uses it
  // to route gradients of in-place writes through views (CopySlices); Python shows it as _base.
  const intrusive_ptr<TensorImpl>& view_base() const { return view_base_; }
  void set_view_base(intrusive_ptr<TensorImpl> base) { view_base_ = std::move(base); }

  // Made while inference mode was on: such a tensor can never join an autograd graph.
  bool is_inference() const { return inference_; }

  // The quantization parameters; set exactly when dtype_ is quantized (once the tensor is
  // complete: ops that allocate a quantized output set it before returning it).
  const intrusive_ptr<Quantizer>& quantizer() const { return quantizer_; }
  void set_quantizer(intrusive_ptr<Quantizer> q) { quantizer_ = std::move(q); }

 private:
  void refresh_cached_fields();

  Storage storage_;
  DimVector sizes_;
  DimVector strides_;  // in elements
  int64_t storage_offset_ = 0;
  // Invariant: numel_ == product of sizes_.
  int64_t numel_ = 0;
  intrusive_ptr<VersionCounter> version_;
  std::unique_ptr<AutogradMetaInterface> autograd_meta_;
  intrusive_ptr<TensorImpl> view_base_;
  intrusive_ptr<Quantizer> quantizer_;
  ScalarType dtype_;
  // Invariant: is_contiguous_ == compute_is_contiguous(sizes_, strides_), i.e. for every dim i
  // with sizes_[i] > 1, strides_[i] == product of sizes_[i+1:] (or the tensor is empty).
  bool is_contiguous_ = true;
  bool wrapped_number_ = false;
  bool inference_ = grad_state::flags().inference;
};

}  // namespace ember
