// Shared pieces of the reduction derivatives (reductions*.cpp): restoring reduced dims, the
// masks PyTorch's formulas use to route a gradient to the selected elements, and recording of
// two-output ops. Everything here is tensor code over public ops, so formulas built from it
// stay differentiable (create_graph=True).
#pragma once
#include <utility>
#include <vector>
#include "autograd/derivatives/formula.h"

#include "api/reduce.h"
#include "autograd/grad_mode.h"
#include "autograd/record.h"
#include "core/tensor.h"

namespace ember {
namespace derivatives {
namespace reduction {

using autograd::FunctionNode;
using autograd::variable_list;

// The reduced dims of a `sizes`-shaped input, wrapped and sorted (all dims when `dims` is
// nullopt or empty; dim 0 of a 0-d input).
std::vector<int64_t> reduced_dims(IntArrayRef sizes, const DimList& dims);
// The reduced dim of a single-dim reduction, wrapped (0 for an invalid dim: the forward raises
// before the node is ever used).
int64_t single_dim(IntArrayRef sizes, int64_t dim);

// PyTorch's restore_reduced_dims: a reduction result (or its gradient) with the reduced dims
// put back as size 1, so that it broadcasts against the input.
Tensor restore_reduced(const Tensor& g, IntArrayRef in_sizes, const std::vector<int64_t>& rdims,
                       bool keepdim);
// restore_reduced, then expanded to the input's shape.
Tensor expand_reduced(const Tensor& g, IntArrayRef in_sizes, const std::vector<int64_t>& rdims,
                      bool keepdim);
// The number of elements each result element reduces.
int64_t reduced_count(IntArrayRef sizes, const std::vector<int64_t>& rdims);

using formula::num;  // a Python number as a 0-d operand (formula.h)
// `dims` as the DimList of a keepdim reduction over them.
DimList as_dim_list(const std::vector<int64_t>& rdims);

// PyTorch's scale_grad_by_count: the gradient split evenly among the elements `mask` selects in
// each reduced slice (amax / amin ties). `g` already has the reduced dims restored.
Tensor scale_grad_by_count(const Tensor& g, const Tensor& mask, const std::vector<int64_t>& rdims);
// PyTorch's evenly_distribute_backward: the gradient of an all-elements selection (max(),
// median()) split evenly among the elements equal to the result (the NaNs when it is NaN).
Tensor evenly_distribute(const Tensor& g, const Tensor& input, const Tensor& value);
// PyTorch's value_selecting_reduction_backward: the gradient of (values, indices) = f(x, dim)
// lands at the selected index of each slice (a scatter into zeros).
Tensor value_selecting_backward(const Tensor& g, const Tensor& indices, IntArrayRef in_sizes,
                                int64_t dim, bool keepdim);

// Records a two-output op: refuses out= tensors when an input requires grad (as PyTorch), runs
// `forward` with recording off and makes `node` the history of its floating outputs (integer
// outputs such as indices get none).
template <typename Forward>
TensorPair record_pair(const std::shared_ptr<FunctionNode>& node, const std::vector<Tensor>& inputs,
                       const Tensor& out0, const Tensor& out1, const char* op, Forward&& forward) {
  if (out0.defined()) autograd::check_out_arg(out0, inputs, op);
  if (out1.defined()) autograd::check_out_arg(out1, inputs, op);
  TensorPair r;
  {
    autograd::NoGradGuard no_grad;
    r = forward();
  }
  autograd::set_history_all(node, {r.first, r.second});
  return r;
}

}  // namespace reduction
}  // namespace derivatives
}  // namespace ember
