// copy_stub on CPU: same-dtype copies move bytes; others convert element by element.
#include <cstring>

#include "dispatch/copy.h"
#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/loops.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

template <size_t kSize>
struct Bytes {
  unsigned char b[kSize];
};

template <size_t kSize>
void copy_bytes(const TensorIterator& iter) {
  iter.for_each([](char** data, const int64_t* strides, int64_t n) {
    if (strides[0] == kSize && strides[1] == kSize) {
      std::memmove(data[0], data[1], n * kSize);
      return;
    }
    for (int64_t k = 0; k < n; ++k) {
      *reinterpret_cast<Bytes<kSize>*>(data[0] + k * strides[0]) =
          *reinterpret_cast<const Bytes<kSize>*>(data[1] + k * strides[1]);
    }
  });
}

void copy_kernel(TensorIterator& iter) {
  const ScalarType dst = iter.dtype(0);
  const ScalarType src = iter.dtype(1);
  if (dst == src) {
    switch (element_size(dst)) {
      case 1:
        return copy_bytes<1>(iter);
      case 2:
        return copy_bytes<2>(iter);
      case 4:
        return copy_bytes<4>(iter);
      case 8:
        return copy_bytes<8>(iter);
      default:
        return copy_bytes<16>(iter);
    }
  }
  dispatch_dtype<kAllTypes>(dst, "copy_", [&](auto dst_tag) {
    using D = typename decltype(dst_tag)::type;
    dispatch_dtype<kAllTypes>(src, "copy_", [&](auto src_tag) {
      using S = typename decltype(src_tag)::type;
      cpu_kernel(iter, [](S v) -> D { return convert<D>(v); });
    });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(copy_stub, CPU, copy_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
