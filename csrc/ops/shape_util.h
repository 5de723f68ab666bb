// Helpers shared by the joining/ordering and matmul op families: PyTorch's spellings of dtype
// names (its error messages use them), the out= convention for ops that compute into a fresh
// tensor, a diagonal view, and a dtype-agnostic gather of slices along a dim.
#pragma once
#include <string>
#include <vector>

#include "core/tensor.h"
#include "dispatch/stub.h"
#include "kernels/shape_util_stubs.h"

namespace ember {
namespace native {

// "Float", "Double", "Long", "ComplexFloat": PyTorch's ScalarType names.
const char* torch_type_name(ScalarType t);
// "float", "double", "long int", "c10::Half": the C++ names PyTorch prints in some messages.
const char* torch_cpp_type_name(ScalarType t);

// The out= convention for an op whose result was computed into `result`: with `out` undefined
// returns result; otherwise checks out's dtype (RuntimeError naming both), resizes out, copies
// and returns out.
Tensor finish_out(const Tensor& result, const Tensor& out, const char* op);
// Checks out= of `dtype` before computing (same message as finish_out).
void check_out_dtype(const Tensor& out, ScalarType dtype, const char* op);

// The view of t's diagonal `offset` over dims (dim1, dim2) (both already wrapped and distinct),
// appended as the last dim, as torch.diagonal.
Tensor diagonal_view(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2);

// A contiguous tensor r with r.select(dim, i) == src.select(dim, index[i]); index values must be
// in range (checked by the caller). Works on raw bytes, so every dtype shares one kernel.
Tensor gather_slices(const Tensor& src, int64_t dim, const std::vector<int64_t>& index,
                     const char* op);
// Its kernel stub, gather_slices_stub, is in kernels/shape_util_stubs.h.

// A 1-D int64 tensor holding v.
Tensor int64_tensor(const std::vector<int64_t>& v);
// "[2, 3]": PyTorch's spelling of a shape in messages.
std::string torch_shape_str(IntArrayRef sizes);

}  // namespace native
}  // namespace ember
