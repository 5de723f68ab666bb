// Fixed-inline-capacity vector for sizes and strides, so most tensors allocate no extra heap
// blocks. Spills to the heap past kInline elements.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <vector>

namespace ember {

// A non-owning view of int64 values (sizes, strides, dims).
class IntArrayRef {
 public:
  IntArrayRef() = default;
  IntArrayRef(const int64_t* data, size_t size) : data_(data), size_(size) {}
  IntArrayRef(const std::vector<int64_t>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  // Only for arguments: the list must outlive the call that receives it.
  IntArrayRef(std::initializer_list<int64_t> il)  // NOLINT
      : data_(std::data(il)), size_(il.size()) {}
  const int64_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const int64_t* begin() const { return data_; }
  const int64_t* end() const { return data_ + size_; }
  int64_t operator[](size_t i) const { return data_[i]; }
  int64_t back() const { return data_[size_ - 1]; }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }
  bool equals(IntArrayRef o) const {
    return size_ == o.size_ && std::equal(begin(), end(), o.begin());
  }

 private:
  const int64_t* data_ = nullptr;
  size_t size_ = 0;
};

class DimVector {
 public:
  static constexpr size_t kInline = 6;
  DimVector() = default;
  explicit DimVector(size_t n, int64_t value = 0) { resize(n, value); }
  DimVector(IntArrayRef r) { assign(r); }  // NOLINT
  DimVector(std::initializer_list<int64_t> il) { assign(IntArrayRef(il.begin(), il.size())); }
  DimVector(const DimVector& o) { assign(o); }
  DimVector(DimVector&& o) noexcept { *this = std::move(o); }
  DimVector& operator=(const DimVector& o) {
    if (this != &o) assign(o);
    return *this;
  }
  DimVector& operator=(DimVector&& o) noexcept {
    if (this == &o) return *this;
    if (o.heap_) {
      heap_ = std::move(o.heap_);
      capacity_ = o.capacity_;
      size_ = o.size_;
      o.capacity_ = kInline;
      o.size_ = 0;
    } else {
      assign(o);
    }
    return *this;
  }

  operator IntArrayRef() const { return IntArrayRef(data(), size_); }  // NOLINT
  IntArrayRef ref() const { return IntArrayRef(data(), size_); }

  void assign(IntArrayRef r) {
    size_ = 0;
    reserve(r.size());
    if (r.size()) std::memmove(data(), r.data(), r.size() * sizeof(int64_t));
    size_ = r.size();
  }
  int64_t* data() { return heap_ ? heap_.get() : inline_; }
  const int64_t* data() const { return heap_ ? heap_.get() : inline_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t& operator[](size_t i) { return data()[i]; }
  int64_t operator[](size_t i) const { return data()[i]; }
  int64_t* begin() { return data(); }
  int64_t* end() { return data() + size_; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + size_; }
  int64_t& back() { return data()[size_ - 1]; }
  int64_t back() const { return data()[size_ - 1]; }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }

  void reserve(size_t n) {
    if (n <= capacity_) return;
    std::unique_ptr<int64_t[]> h(new int64_t[n]);
    if (size_) std::memcpy(h.get(), data(), size_ * sizeof(int64_t));
    heap_ = std::move(h);
    capacity_ = n;
  }
  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data()[i] = value;
    size_ = n;
  }
  void push_back(int64_t v) {
    if (size_ == capacity_) reserve(capacity_ * 2);
    data()[size_++] = v;
  }
  void pop_back() { --size_; }
  void insert(size_t pos, int64_t v) {
    push_back(0);
    int64_t* d = data();
    std::memmove(d + pos + 1, d + pos, (size_ - 1 - pos) * sizeof(int64_t));
    d[pos] = v;
  }
  void erase(size_t pos) {
    int64_t* d = data();
    std::memmove(d + pos, d + pos + 1, (size_ - pos - 1) * sizeof(int64_t));
    --size_;
  }
  void clear() { size_ = 0; }
  bool operator==(const DimVector& o) const { return ref().equals(o.ref()); }
  bool operator!=(const DimVector& o) const { return !(*this == o); }

 private:
  int64_t inline_[kInline];
  std::unique_ptr<int64_t[]> heap_;
  size_t size_ = 0;
  size_t capacity_ = kInline;
};

}  // namespace ember
