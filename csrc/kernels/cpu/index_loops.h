// Loop templates for the CPU indexing kernels (see Note [Indexing through restrided views] in
// ops/indexing_engine.h). Operand layout: [out-or-dst, src, idx_0, ..., idx_{n-1}].
#pragma once
#include <cstdint>
#include <cstring>

#include "dispatch/tensor_iterator.h"

namespace ember {
namespace native {

// A 16-byte element (complex128) moved as two words.
struct alignas(8) Bytes16 {
  uint64_t lo, hi;
};

// Calls f(TypeTag<E>) with the unsigned word type of `itemsize` bytes, so data-movement kernels
// are instantiated once per element size instead of once per dtype.
template <typename T>
struct WordTag {
  using type = T;
};
template <typename F>
decltype(auto) dispatch_word(size_t itemsize, F&& f) {
  switch (itemsize) {
    case 1:
      return f(WordTag<uint8_t>{});
    case 2:
      return f(WordTag<uint16_t>{});
    case 4:
      return f(WordTag<uint32_t>{});
    case 8:
      return f(WordTag<uint64_t>{});
    default:
      return f(WordTag<Bytes16>{});
  }
}

template <typename E>
inline void copy_word(char* dst, const char* src) {
  std::memcpy(dst, src, sizeof(E));
}

// Byte offset of iteration element k: sum over index operands of wrap(idx) * stride.
// Indices were validated by the op, so wrapping is the only adjustment.
struct IndexOffsets {
  int n;
  const int64_t* sizes;
  const int64_t* strides;  // bytes

  inline int64_t at(char* const* idx_data, const int64_t* idx_strides, int64_t k) const {
    int64_t off = 0;
    for (int j = 0; j < n; ++j) {
      int64_t i = *reinterpret_cast<const int64_t*>(idx_data[j] + k * idx_strides[j]);
      if (i < 0) i += sizes[j];
      off += i * strides[j];
    }
    return off;
  }
  // All index operands are constant along the inner loop (stride 0).
  inline bool constant(const int64_t* idx_strides) const {
    for (int j = 0; j < n; ++j) {
      if (idx_strides[j] != 0) return false;
    }
    return true;
  }
};

// dst[k + off(k)] = op(dst[k + off(k)], src[k]) for elements of type T, run serially or split
// only along dims in which dst moves (no two threads touch one element).
template <typename T, typename Op>
void put_loop(TensorIterator& iter, const IndexOffsets& offs, bool serial, const Op& op) {
  auto body = [&](char** data, const int64_t* st, int64_t len) {
    char* dst = data[0];
    const char* src = data[1];
    const int64_t sd = st[0], ss = st[1];
    if (offs.constant(st + 2)) {
      char* base = dst + offs.at(data + 2, st + 2, 0);
      for (int64_t k = 0; k < len; ++k) {
        T* d = reinterpret_cast<T*>(base + k * sd);
        *d = op(*d, *reinterpret_cast<const T*>(src + k * ss));
      }
      return;
    }
    if (offs.n == 1 && sd == 0 && ss == sizeof(T) && st[2] == sizeof(int64_t)) {
      // scatter along the inner dim, index_put_ on a 1-d tensor: dense src and index.
      const int64_t* idx = reinterpret_cast<const int64_t*>(data[2]);
      const T* s = reinterpret_cast<const T*>(src);
      const int64_t size = offs.sizes[0], stride = offs.strides[0];
      for (int64_t k = 0; k < len; ++k) {
        int64_t i = idx[k];
        i += (i >> 63) & size;
        T* d = reinterpret_cast<T*>(dst + i * stride);
        *d = op(*d, s[k]);
      }
      return;
    }
    for (int64_t k = 0; k < len; ++k) {
      T* d = reinterpret_cast<T*>(dst + k * sd + offs.at(data + 2, st + 2, k));
      *d = op(*d, *reinterpret_cast<const T*>(src + k * ss));
    }
  };
  if (serial) {
    iter.serial_for_each(body, 0, iter.numel());
  } else {
    iter.for_each_reduction_safe(body);
  }
}

}  // namespace native
}  // namespace ember
