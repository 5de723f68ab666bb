// Kernel stubs of the joining and triangular ops (ops/join.h includes this header; the ops are
// ops/join*.cpp, the kernels kernels/cpu/join_kernels.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {
namespace native {

// Concatenates contiguous same-dtype inputs into a contiguous output: for each of `outer` rows,
// input i contributes chunk_bytes[i] bytes.
using CatContiguousFn = void (*)(char* out, int64_t outer, const std::vector<const char*>& srcs,
                                 const std::vector<int64_t>& chunk_bytes);
EMBER_DECLARE_STUB(cat_contiguous_stub, CatContiguousFn);
// out <- tril/triu(in) over the last two dims; out may be `in` itself (then only zeroes).
using TriFn = void (*)(const Tensor& out, const Tensor& in, int64_t diagonal, bool lower);
EMBER_DECLARE_STUB(tri_stub, TriFn);

}  // namespace native
}  // namespace ember
