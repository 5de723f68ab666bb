// conj_copy_stub on CPU: out = conj(in) for complex64 / complex128.
#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/loops.h"
#include "kernels/views_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

void conj_copy_kernel(TensorIterator& iter) {
  dispatch_dtype<kComplexTypes>(iter.dtype(0), "conj", [&](auto tag) {
    using T = typename decltype(tag)::type;
    cpu_kernel(iter, [](T v) -> T { return std::conj(v); });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(conj_copy_stub, CPU, conj_copy_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
