#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/loops.h"
#include "kernels/creation_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

void fill_kernel(TensorIterator& iter, const Scalar& value) {
  dispatch_dtype<kAllTypes>(iter.dtype(0), "fill_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = value.to_checked<T>("fill_");
    iter.for_each([&](char** data, const int64_t* strides, int64_t n) {
      if (strides[0] == sizeof(T)) {
        T* out = reinterpret_cast<T*>(data[0]);
        for (int64_t k = 0; k < n; ++k) out[k] = v;
      } else {
        for (int64_t k = 0; k < n; ++k) *reinterpret_cast<T*>(data[0] + k * strides[0]) = v;
      }
    });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(fill_stub, CPU, fill_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
