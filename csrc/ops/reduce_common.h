// Shared plumbing for reductions over a set of dims.
//
// make_reduction() allocates the result in its final shape and returns an iterator whose output
// operand is that result viewed in the input's shape with zero strides over the reduced dims, so
// a kernel sees "out[i] op= in[i]" and no two threads ever write one output element (see Note
// [Reduction Driver] in kernels/cpu/reduce_loops.h). finish_reduction() delivers the result,
// into an out= tensor when one was given.
#pragma once
#include <optional>
#include <vector>

#include "core/tensor.h"
#include "dispatch/tensor_iterator.h"

namespace ember {
namespace native {

// Which dims a reduction covers.
struct ReduceDims {
  std::vector<bool> mask;  // mask[d]: dim d is reduced (size max(ndim, 1))
  bool all = false;        // every dim is reduced
  bool specified = false;  // the caller named the dims (dim=None leaves this false)
  // Number of input elements folded into each output element.
  int64_t reduced_numel(IntArrayRef sizes) const;
};
// Wraps and de-duplicates dims (RuntimeError on a repeat, IndexError out of range). nullopt
// reduces all dims; an empty list reduces all dims too (sum(dim=[]) in PyTorch) unless
// empty_means_all is false (all/any(dim=()) reduce nothing).
ReduceDims make_reduce_dims(const Tensor& t, const std::optional<std::vector<int64_t>>& dims,
                            const char* op, bool empty_means_all = true);
// A single dim (max(dim=...), prod, median, ...).
ReduceDims single_reduce_dim(const Tensor& t, int64_t dim, const char* op);

// Ops with no identity (amax, max, argmax, median, ...) over an empty input: IndexError when a
// named reduced dim is empty, RuntimeError when no dim was named. `what` is how the message
// names the op ("amax()", "aminmax").
void check_reduction_nonempty(const Tensor& t, const ReduceDims& dims, const char* op,
                              const char* what);

struct Reduction {
  TensorIterator iter;
  Tensor result;   // what the kernel writes (final shape)
  Tensor result2;  // second output of two-output reductions (final shape)
  // The caller's out= tensors, and whether the kernel wrote a temporary to copy into them.
  Tensor out, out2;
  bool copy_out = false, copy_out2 = false;
};

// `in` is the (already converted) input; `out_dtype` the dtype the kernel writes; `out` an
// optional out= tensor (resized to the result shape). A differently typed out is an error
// unless cast_out, in which case the kernel writes a temporary that finish_reduction casts.
Reduction make_reduction(const Tensor& in, const ReduceDims& dims, bool keepdim,
                         ScalarType out_dtype, const char* op, const Tensor& out = {},
                         bool cast_out = false);
// Two outputs (values + indices, min + max, var + mean), both shaped like the result.
Reduction make_reduction2(const Tensor& in, const ReduceDims& dims, bool keepdim, ScalarType dtype0,
                          ScalarType dtype1, const char* op, const Tensor& out0 = {},
                          const Tensor& out1 = {}, bool cast_out = false);
// The first output, keepdim-squeezed, or the out= tensor holding it.
Tensor finish_reduction(const Reduction& r, const ReduceDims& dims, bool keepdim,
                        const Tensor& out = {});
std::pair<Tensor, Tensor> finish_reduction2(const Reduction& r, const ReduceDims& dims,
                                            bool keepdim);

// The result shape of reducing `sizes` over dims.
DimVector reduced_shape(IntArrayRef sizes, const ReduceDims& dims, bool keepdim);

// Checks an out= tensor's dtype with PyTorch's wording.
void check_reduction_out_dtype(const Tensor& out, ScalarType expected, const char* op);

}  // namespace native
}  // namespace ember

namespace ember {
namespace native {

struct DimWalk;
// An iterator over every position of `in` except along `dim`, which the kernel walks itself
// (scans, medians, quantiles). Each tensor is viewed with size 1 at dim; `walk` receives the
// dim's length and every operand's byte stride along it (outputs of size 1 there get 0).
TensorIterator make_dim_iterator(std::initializer_list<Tensor> outputs, const Tensor& in,
                                 int64_t dim, const char* op, DimWalk* walk);

}  // namespace native
}  // namespace ember
