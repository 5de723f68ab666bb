// Derivatives of ember.special's ops (api/special.cpp calls these when recording). Formulas are
// PyTorch's (derivatives.yaml), written with public ops so that they record in turn.
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "ops/special.h"

namespace ember {
namespace derivatives {

Tensor special_unary(native::SpecialOp op, const char* name, const Tensor& a, const Tensor& out);
Tensor special_binary(native::SpecialOp op, const char* name, const Tensor& a, const Tensor& b,
                      const Tensor& out);
Tensor mvlgamma(const Tensor& a, int64_t p, const Tensor& out);

}  // namespace derivatives
}  // namespace ember
