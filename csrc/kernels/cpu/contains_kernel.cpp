// `x in tensor`: a short-circuiting scan for an equal pair.
#include <atomic>

#include "dispatch/dtype_dispatch.h"
#include "dispatch/tensor_iterator.h"
#include "kernels/conversion_stubs.h"

namespace ember {
namespace native {
namespace {

bool contains_kernel(TensorIterator& iter) {
  std::atomic<bool> found{false};
  dispatch_dtype<kAllTypes>(iter.dtype(0), "__contains__", [&](auto tag) {
    using T = typename decltype(tag)::type;
    iter.for_each([&](char** data, const int64_t* strides, int64_t n) {
      if (found.load(std::memory_order_relaxed)) return;
      for (int64_t k = 0; k < n; ++k) {
        const T a = *reinterpret_cast<const T*>(data[0] + k * strides[0]);
        const T b = *reinterpret_cast<const T*>(data[1] + k * strides[1]);
        if (a == b) {
          found.store(true, std::memory_order_relaxed);
          return;
        }
      }
    });
  });
  return found.load();
}

}  // namespace

EMBER_REGISTER_KERNEL(contains_stub, CPU, contains_kernel);

}  // namespace native
}  // namespace ember
