// softmax / log_softmax: validation, dtype handling and the kernel call. See nn_softmax.h.
#include "ops/nn/softmax.h"

#include "core/shape.h"
#include "ops/creation.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(softmax_stub, SoftmaxFn);
EMBER_DEFINE_STUB(softmax_backward_stub, SoftmaxBackwardFn);

namespace nn_detail {

SplitSizes split_at(IntArrayRef sizes, int64_t dim) {
  SplitSizes s{1, 1, 1};
  const int64_t nd = static_cast<int64_t>(sizes.size());
  if (nd == 0) return s;
  for (int64_t d = 0; d < dim; ++d) s.outer *= sizes[d];
  s.dim_size = sizes[dim];
  for (int64_t d = dim + 1; d < nd; ++d) s.inner *= sizes[d];
  return s;
}

Tensor to_compute_dtype(const Tensor& t) {
  const ScalarType d = t.dtype();
  return d == ScalarType::Float16 || d == ScalarType::BFloat16 ? to_dtype(t, ScalarType::Float32)
                                                               : t;
}

}  // namespace nn_detail

namespace {

Tensor softmax_forward(const Tensor& x, int64_t dim, ScalarType dtype, bool log) {
  const char* op = log ? "log_softmax" : "softmax";
  Tensor in = dtype == ScalarType::Undefined || dtype == x.dtype() ? x : to_dtype(x, dtype);
  EMBER_CHECK_T(NotImplementedError, is_floating(in.dtype()), "[", op,
                "] not implemented for dtype ", dtype_name(in.dtype()));
  const int64_t d = wrap_dim(dim, in.dim(), op);
  const ScalarType result_dtype = in.dtype();
  in = contiguous(nn_detail::to_compute_dtype(in));
  Tensor out = empty(in.sizes(), TensorOptions(in.dtype()));
  if (in.numel() > 0) {
    const auto s = nn_detail::split_at(in.sizes(), d);
    softmax_stub(in.device(), out, in, s.outer, s.dim_size, s.inner, log);
  }
  return out.dtype() == result_dtype ? out : to_dtype(out, result_dtype);
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim, ScalarType dtype) {
  return softmax_forward(x, dim, dtype, false);
}

Tensor log_softmax(const Tensor& x, int64_t dim, ScalarType dtype) {
  return softmax_forward(x, dim, dtype, true);
}

Tensor softmax_backward_data(const Tensor& grad, const Tensor& output, int64_t dim, bool log) {
  const char* op = log ? "log_softmax_backward" : "softmax_backward";
  EMBER_CHECK(grad.sizes().equals(output.sizes()), "[", op, "] grad of shape ",
              shape_str(grad.sizes()), " does not match the output's shape ",
              shape_str(output.sizes()));
  const int64_t d = wrap_dim(dim, output.dim(), op);
  const ScalarType result_dtype = output.dtype();
  Tensor y = contiguous(nn_detail::to_compute_dtype(output));
  Tensor g = contiguous(grad.dtype() == y.dtype() ? grad : to_dtype(grad, y.dtype()));
  Tensor gi = empty(y.sizes(), TensorOptions(y.dtype()));
  if (y.numel() > 0) {
    const auto s = nn_detail::split_at(y.sizes(), d);
    softmax_backward_stub(y.device(), gi, g, y, s.outer, s.dim_size, s.inner, log);
  }
  return gi.dtype() == result_dtype ? gi : to_dtype(gi, result_dtype);
}

}  // namespace native
}  // namespace ember
