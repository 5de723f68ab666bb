// all / any. (count_nonzero shares the counting kernel in reduce_kernels.cpp.)
#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/reduce_ops.h"
#include "kernels/reduce_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

// Folds "x != 0" with and/or in a uint8 accumulator, which vectorises where bool may not.
template <typename T, typename Out, bool IsAll>
struct LogicalOps : ReduceOpsBase<LogicalOps<T, Out, IsAll>, T, uint8_t, Out> {
  uint8_t identity() const { return IsAll ? 1 : 0; }
  uint8_t fold(uint8_t a, T x) const {
    const uint8_t v = nonzero(x) ? 1 : 0;
    return IsAll ? (a & v) : (a | v);
  }
  uint8_t combine(uint8_t a, uint8_t b) const { return IsAll ? (a & b) : (a | b); }
  Out project(uint8_t a) const { return static_cast<Out>(a); }
};

template <typename T, bool IsAll>
void logical_impl(TensorIterator& iter) {
  if (iter.dtype(0) == ScalarType::UInt8) {
    run_reduction(iter, LogicalOps<T, uint8_t, IsAll>{});
  } else {
    run_reduction(iter, LogicalOps<T, bool, IsAll>{});
  }
}

void logical_kernel(TensorIterator& iter, bool is_all) {
  dispatch_dtype<kAllTypes>(iter.dtype(1), is_all ? "all" : "any", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (is_all) {
      logical_impl<T, true>(iter);
    } else {
      logical_impl<T, false>(iter);
    }
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(logical_stub, CPU, logical_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
