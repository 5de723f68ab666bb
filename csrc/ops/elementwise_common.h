// Shared plumbing for elementwise ops: building the iterator for the three calling forms
// (functional, out=, in-place) and finishing it (casting results into a differently typed out).
#pragma once
#include "core/tensor.h"
#include "dispatch/tensor_iterator.h"

namespace ember {
namespace native {

enum class ResultKind {
  Promote,         // result_type(inputs): add, mul, maximum, ...
  PromoteToFloat,  // integers become the default float dtype: true_divide, atan2, ...
  Bool,            // comparisons and predicates: promoted compute, bool output
  SameAsInput,     // no promotion; inputs must share a dtype
};

// Builds the iterator for out = f(inputs); `out` may be undefined (allocated), a separate out=
// tensor (resized as needed) or one of the inputs (in-place).
TensorIterator build_elementwise(const char* op, ResultKind kind, const Tensor& out,
                                 std::initializer_list<Tensor> inputs);

// Builds out = f(inputs) for ops whose operands keep distinct dtypes (where's bool condition)
// or whose output dtype differs from the compute dtype (abs of complex is real). The inputs are
// used as given (the caller converts them), the iterator's common dtype is inputs[0]'s, and an
// allocated output gets `result`; out= / in-place outputs of another dtype receive a cast
// (checked with can_cast).
TensorIterator build_elementwise_typed(const char* op, ScalarType result, const Tensor& out,
                                       std::initializer_list<Tensor> inputs);

// Finishes: copies temporaries into the caller's out and bumps its version when it existed.
Tensor finish_elementwise(TensorIterator& iter, const Tensor& out);

}  // namespace native
}  // namespace ember
