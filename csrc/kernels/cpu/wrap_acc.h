// The type products and sums are computed in: integers use the unsigned type of their width, so
// overflow wraps (defined behaviour, and exactly PyTorch's modular result); 16-bit floats use
// float; everything else itself.
#pragma once
#include <type_traits>

#include "core/dtype.h"

namespace ember {
namespace native {

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

}  // namespace native
}  // namespace ember
