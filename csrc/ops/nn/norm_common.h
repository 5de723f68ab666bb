// Helpers shared by the normalisation op files (nn_norm.cpp, nn_norm_batch.cpp).
#pragma once
#include <string>

#include "core/dtype.h"
#include "core/error.h"
#include "core/tensor.h"
#include "ops/nn/softmax.h"
#include "ops/views.h"

namespace ember {
namespace native {
namespace nn_detail {

// PyTorch prints shapes in these messages as "[2, 3]".
inline std::string list_str(IntArrayRef v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

inline void check_floating_input(const Tensor& x, const char* op) {
  EMBER_CHECK_T(NotImplementedError, is_floating(x.dtype()), "[", op,
                "] not implemented for dtype ", dtype_name(x.dtype()));
}

// weight / bias: x's dtype, or float32 for a float16 / bfloat16 x (PyTorch's mixed-dtype rule);
// returned in the compute dtype and contiguous (they are small).
inline Tensor param_for_kernel(const Tensor& p, const Tensor& x, ScalarType compute,
                               const char* op) {
  if (!p.defined()) return p;
  const bool reduced = x.dtype() == ScalarType::Float16 || x.dtype() == ScalarType::BFloat16;
  EMBER_CHECK(p.dtype() == x.dtype() || (reduced && p.dtype() == ScalarType::Float32), "[", op,
              "] mixed dtype (CPU): expect parameter to have scalar type of ",
              dtype_name(x.dtype()), " but got ", dtype_name(p.dtype()));
  Tensor c = p.dtype() == compute ? p : to_dtype(p, compute);
  return contiguous(c);
}

// A gradient computed in the compute dtype, returned in the dtype of what it is the gradient of.
inline Tensor in_dtype_of(const Tensor& g, const Tensor& like) {
  return !g.defined() || g.dtype() == like.dtype() ? g : to_dtype(g, like.dtype());
}

}  // namespace nn_detail
}  // namespace native
}  // namespace ember
