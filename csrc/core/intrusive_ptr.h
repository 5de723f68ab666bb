// Intrusive reference counting for TensorImpl and StorageImpl: one allocation per object and a
// handle that is a single pointer. The count is atomic because tensors cross threads (autograd,
// data loading).
#pragma once
#include <atomic>
#include <cstdint>
#include <utility>

namespace ember {

class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;
  virtual ~RefCounted() = default;

  void incref() const noexcept { refcount_.fetch_add(1, std::memory_order_relaxed); }
  void decref() const noexcept {
    if (refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  uint32_t use_count() const noexcept { return refcount_.load(std::memory_order_relaxed); }

 private:
  mutable std::atomic<uint32_t> refcount_{0};
};

template <typename T>
class intrusive_ptr {
 public:
  using element_type = T;
  intrusive_ptr() noexcept = default;
  intrusive_ptr(std::nullptr_t) noexcept {}
  // Takes a (possibly already shared) raw pointer and adds a reference.
  explicit intrusive_ptr(T* p) noexcept : p_(p) {
    if (p_) p_->incref();
  }
  intrusive_ptr(const intrusive_ptr& o) noexcept : p_(o.p_) {
    if (p_) p_->incref();
  }
  intrusive_ptr(intrusive_ptr&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  template <typename U>
  intrusive_ptr(const intrusive_ptr<U>& o) noexcept : p_(o.get()) {  // NOLINT: upcast
    if (p_) p_->incref();
  }
  ~intrusive_ptr() {
    if (p_) p_->decref();
  }
  intrusive_ptr& operator=(intrusive_ptr o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  T* get() const noexcept { return p_; }
  T* operator->() const noexcept { return p_; }
  T& operator*() const noexcept { return *p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  bool operator==(const intrusive_ptr& o) const noexcept { return p_ == o.p_; }
  bool operator!=(const intrusive_ptr& o) const noexcept { return p_ != o.p_; }
  void reset() noexcept { intrusive_ptr().swap(*this); }
  void swap(intrusive_ptr& o) noexcept { std::swap(p_, o.p_); }
  uint32_t use_count() const noexcept { return p_ ? p_->use_count() : 0; }

 private:
  T* p_ = nullptr;
};

template <typename T, typename... Args>
intrusive_ptr<T> make_intrusive(Args&&... args) {
  return intrusive_ptr<T>(new T(std::forward<Args>(args)...));
}

}  // namespace ember
