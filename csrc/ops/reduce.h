// Reductions.
#pragma once
#include <optional>
#include <vector>

#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {

class TensorIterator;
using ReduceFn = void (*)(TensorIterator& iter);
EMBER_DECLARE_STUB(sum_stub, ReduceFn);

// dtype Undefined: bool and integer inputs sum in int64, others in their own dtype.
Tensor sum(const Tensor& t, const std::optional<std::vector<int64_t>>& dims = std::nullopt,
           bool keepdim = false, ScalarType dtype = ScalarType::Undefined, const Tensor& out = {});

}  // namespace ember
