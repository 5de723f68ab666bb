// Argument helpers shared by the nn op files (convolution, pooling, sampling).
#pragma once
#include <initializer_list>
#include <string>

#include "core/tensor.h"

namespace ember {
namespace native {

// "[2, 3, 8, 8]": sizes as PyTorch's messages print them.
std::string sizes_list(IntArrayRef sizes);

// One value per spatial dim: `values` itself when it has n entries, its single entry repeated
// otherwise (PyTorch's expand_param_if_needed; `name` and `op` go into the error).
DimVector expand_conv_param(IntArrayRef values, int64_t n, const char* name, const char* op);

}  // namespace native
}  // namespace ember

namespace ember {
namespace native {

// Entries [from, to) of s; negative bounds count from the end.
inline DimVector dims_slice(IntArrayRef s, int64_t from, int64_t to) {
  const int64_t n = static_cast<int64_t>(s.size());
  if (from < 0) from += n;
  if (to < 0) to += n;
  return DimVector(IntArrayRef(s.data() + from, static_cast<size_t>(to - from)));
}
inline DimVector dims_slice(IntArrayRef s, int64_t from) {
  return dims_slice(s, from, static_cast<int64_t>(s.size()));
}
inline void append_dims(DimVector& v, std::initializer_list<int64_t> xs) {
  for (int64_t x : xs) v.push_back(x);
}

}  // namespace native
}  // namespace ember
