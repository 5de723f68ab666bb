// Derivatives of reductions (reduce.cpp).
// The derivative table is one wrapper per differentiable op (docs/design/autograd.md): the
// public op (ops/*.cpp) calls its wrapper when recording is on (autograd::should_record); the
// wrapper re-runs the op with recording off and attaches the op's node, whose formula uses
// public ops only, so create_graph=True gives higher-order gradients.
#pragma once
#include "core/tensor.h"
#include "ops/reduce.h"

namespace ember {
namespace derivatives {

// ---- reductions (reduce.cpp) ----
Tensor sum(const Tensor& t, const DimList& dims, bool keepdim, ScalarType dtype, const Tensor& out);
Tensor mean(const Tensor& t, const DimList& dims, bool keepdim, ScalarType dtype,
            const Tensor& out);

}  // namespace derivatives
}  // namespace ember
