#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/reduce_loops.h"
#include "ops/reduce.h"

namespace ember {
namespace {

void sum_kernel(TensorIterator& iter) {
  dispatch_dtype<kNumericTypes & ~(kFloat16 | kBFloat16)>(iter.dtype(0), "sum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    reduce_kernel<T>(
        iter,
        [](T acc, const char* in, int64_t stride, int64_t n) {
          return acc + cascade_sum<T>(in, stride, n);
        },
        [](T a, T b) { return a + b; });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(sum_stub, CPU, sum_kernel);

}  // namespace ember
