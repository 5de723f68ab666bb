// The type products and sums are computed in: integers use the unsigned type of their width, so
// overflow wraps (defined behaviour, and exactly PyTorch's modular result); 16-bit floats use
// float; everything else itself.
#pragma once
#include <type_traits>
#include "kernels/cpu/cpu_level.h"

#include "core/dtype.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {

template <typename T, bool = std::is_integral_v<T> && !std::is_same_v<T, bool>>
struct WrapAcc {
  using type = acc_type<T>;
};
template <typename T>
struct WrapAcc<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <typename T>
using wrap_acc_t = typename WrapAcc<T>::type;

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
