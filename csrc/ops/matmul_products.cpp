// cross and cdist (with its fused backward). The products composed of other ops (inner, outer,
// tensordot, kron) are public composites in api/matmul.cpp.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/factory.h"
#include "core/shape.h"
#include "dispatch/copy.h"
#include "dispatch/tensor_iterator.h"
#include "kernels/gemm_stubs.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/matmul.h"
#include "ops/matmul_common.h"
#include "ops/shape_util.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(cross_stub, CrossFn);
EMBER_DEFINE_STUB(cdist_stub, CdistFn);
EMBER_DEFINE_STUB(cdist_mm_finish_stub, CdistFinishFn);
EMBER_DEFINE_STUB(cdist_backward_stub, CdistBackwardFn);

int64_t cross_dim(const Tensor& a, const Tensor& b, std::optional<int64_t> dim) {
  const char* op = "cross";
  EMBER_CHECK(a.dtype() == b.dtype(), "[cross] expected scalar type ", torch_type_name(a.dtype()),
              " but found ", torch_type_name(b.dtype()));
  const int64_t nd = std::max(a.dim(), b.dim());
  // Sizes along a dim of the (right-aligned) broadcast shape, before broadcasting.
  auto size_at = [nd](const Tensor& t, int64_t d) {
    const int64_t k = d - (nd - t.dim());
    return k >= 0 ? t.size(k) : int64_t(1);
  };
  int64_t d = -1;
  if (dim) {
    // A 0-d pair has no dim to index (wrap_dim accepts 0 and -1 for it, as for reductions).
    EMBER_CHECK_T(IndexError, nd > 0, "[cross] Dimension specified as ", *dim,
                  " but tensor has no dimensions");
    d = wrap_dim(*dim, nd, op);
    EMBER_CHECK(size_at(a, d) == 3 && size_at(b, d) == 3,
                "[cross] linalg.cross: inputs "
                "dimension ",
                *dim, " must have length 3. Got ", size_at(a, d), " and ", size_at(b, d));
  } else {
    for (int64_t i = 0; i < nd && d < 0; ++i) {
      if (size_at(a, i) == 3) d = i;
    }
    EMBER_CHECK(d >= 0, "[cross] no dimension of size 3 in input");
  }
  broadcast_shapes(a.sizes(), b.sizes(), op);  // checks that a and b broadcast
  EMBER_CHECK_T(NotImplementedError, a.dtype() != ScalarType::Bool,
                "[cross] \"linalg_cross\" not implemented for 'Bool'");
  return d;
}

Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim, const Tensor& out) {
  const char* op = "cross";
  const int64_t d = cross_dim(a, b, dim);
  const DimVector shape = broadcast_shapes(a.sizes(), b.sizes(), op);
  Tensor target = output_target(out, shape, a.dtype(), {&a, &b}, op);
  if (target.numel() > 0) {
    // The kernel walks the operands narrowed to index 0 along d and reads the three components
    // of each element through the strides along d.
    const Tensor ea = expand(a, shape), eb = expand(b, shape);
    auto iter = TensorIteratorConfig()
                    .name("cross")
                    .add_output(narrow(target, d, 0, 1))
                    .add_input(narrow(ea, d, 0, 1))
                    .add_input(narrow(eb, d, 0, 1))
                    .build();
    const int64_t isz = static_cast<int64_t>(target.itemsize());
    cross_stub(a.device(), iter, target.stride(d) * isz, ea.stride(d) * isz, eb.stride(d) * isz);
  }
  return finish_target(target, out, op);
}

Tensor cdist(const Tensor& x1, const Tensor& x2, double p,
             const std::optional<std::string>& compute_mode) {
  const char* op = "cdist";
  EMBER_CHECK(x1.dim() >= 2, "[cdist] cdist only supports at least 2D tensors, X1 got: ", x1.dim(),
              "D");
  EMBER_CHECK(x2.dim() >= 2, "[cdist] cdist only supports at least 2D tensors, X2 got: ", x2.dim(),
              "D");
  EMBER_CHECK(x1.size(-1 + x1.dim()) == x2.size(-1 + x2.dim()),
              "[cdist] X1 and X2 must have the "
              "same number of columns. X1: ",
              x1.size(-1 + x1.dim()), " X2: ", x2.size(-1 + x2.dim()));
  const bool floating = x1.dtype() == ScalarType::Float32 || x1.dtype() == ScalarType::Float64;
  EMBER_CHECK(floating, "[cdist] cdist only supports floating-point dtypes, X1 got: ",
              torch_type_name(x1.dtype()));
  EMBER_CHECK(x1.dtype() == x2.dtype(), "[cdist] expected scalar type ",
              torch_type_name(x1.dtype()), " but found ", torch_type_name(x2.dtype()));
  EMBER_CHECK(p >= 0, "[cdist] cdist only supports non-negative p values");
  int mode = 0;
  if (compute_mode) {
    if (*compute_mode == "use_mm_for_euclid_dist")
      mode = 1;
    else if (*compute_mode == "donot_use_mm_for_euclid_dist")
      mode = 2;
    else
      EMBER_CHECK_T(ValueError, *compute_mode == "use_mm_for_euclid_dist_if_necessary", "[cdist] ",
                    *compute_mode, " is not a valid value for compute_mode");
  }
  const int64_t P = x1.size(x1.dim() - 2), R = x2.size(x2.dim() - 2), M = x1.size(x1.dim() - 1);
  DimVector ba, bb;
  for (int64_t d = 0; d + 2 < x1.dim(); ++d) ba.push_back(x1.size(d));
  for (int64_t d = 0; d + 2 < x2.dim(); ++d) bb.push_back(x2.size(d));
  DimVector batch = broadcast_shapes(ba, bb, op);
  DimVector s1(batch), s2(batch), rshape(batch);
  s1.push_back(P);
  s1.push_back(M);
  s2.push_back(R);
  s2.push_back(M);
  rshape.push_back(P);
  rshape.push_back(R);
  Tensor result = empty_tensor(rshape, x1.dtype(), x1.device(), op);
  if (result.numel() == 0) return result;
  if (M == 0) return zero_(result);
  Tensor a = contiguous(merge_batch_dims(expand(x1, s1)));
  Tensor b = contiguous(merge_batch_dims(expand(x2, s2)));
  Tensor r3 = view(result, {a.size(0), P, R});
  const bool use_mm = p == 2.0 && (mode == 1 || (mode == 0 && (P > 25 || R > 25)));
  if (use_mm) {
    // |x - y|^2 = |x|^2 + |y|^2 - 2 x.y, with the cross term from one GEMM (as PyTorch).
    gemm_into(r3, a, transpose(b, 1, 2), Scalar(-2.0), Scalar(0.0), op);
    cdist_mm_finish_stub(x1.device(), r3, a, b);
  } else {
    cdist_stub(x1.device(), r3, a, b, p);
  }
  return result;
}

Tensor cdist_backward(const Tensor& grad, const Tensor& x1, const Tensor& x2, double p,
                      const Tensor& dist) {
  const char* op = "cdist_backward";
  const int64_t nd = dist.dim();
  EMBER_CHECK(nd >= 2 && grad.sizes().equals(dist.sizes()), "[cdist_backward] grad ",
              torch_shape_str(grad.sizes()), " and dist ", torch_shape_str(dist.sizes()),
              " must have one shape of at least 2 dims");
  const int64_t P = dist.size(nd - 2), R = dist.size(nd - 1), M = x1.size(x1.dim() - 1);
  DimVector s1(dist.sizes()), s2(dist.sizes());
  s1[nd - 1] = M;
  s2[nd - 2] = R;
  s2[nd - 1] = M;
  Tensor result = zeros(s1, TensorOptions(x1.dtype(), x1.device()));
  if (p == 0.0 || result.numel() == 0 || R == 0) return result;
  Tensor a = contiguous(merge_batch_dims(expand(x1, s1)));
  Tensor b = contiguous(merge_batch_dims(expand(x2, s2)));
  Tensor g = contiguous(merge_batch_dims(grad));
  Tensor d = contiguous(merge_batch_dims(dist));
  EMBER_CHECK(g.dtype() == a.dtype() && d.dtype() == a.dtype() && b.dtype() == a.dtype(), "[", op,
              "] expected one floating dtype for all inputs");
  cdist_backward_stub(x1.device(), view(result, {a.size(0), P, M}), g, a, b, d, p);
  return result;
}

}  // namespace native
}  // namespace ember
