// Products built on the GEMM and elementwise ops: inner, outer, tensordot, kron, cross, cdist.
#include <algorithm>
#include <cmath>
#include <limits>

#include "autograd/derivatives/matmul.h"
#include "autograd/variable.h"
#include "core/factory.h"
#include "core/shape.h"
#include "dispatch/copy.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/gemm.h"
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

Tensor outer(const Tensor& a, const Tensor& b, const Tensor& out) {
  EMBER_CHECK(a.dim() == 1, "[outer] outer: Expected 1-D argument self, but got ", a.dim(), "-D");
  EMBER_CHECK(b.dim() == 1, "[outer] outer: Expected 1-D argument vec2, but got ", b.dim(), "-D");
  return mul(unsqueeze(a, 1), b, out);
}

Tensor tensordot(const Tensor& a, const Tensor& b, IntArrayRef dims_a, IntArrayRef dims_b,
                 const Tensor& out) {
  const char* op = "tensordot";
  EMBER_CHECK(dims_a.size() == dims_b.size(),
              "[tensordot] both dimension lists should have same "
              "length");
  EMBER_CHECK(a.dtype() == b.dtype(), "[tensordot] both inputs should have same dtype");
  std::vector<bool> ca(std::max<int64_t>(a.dim(), 1), false),
      cb(std::max<int64_t>(b.dim(), 1), false);
  DimVector da, db;
  int64_t k = 1;
  for (size_t i = 0; i < dims_a.size(); ++i) {
    const int64_t x = wrap_dim(dims_a[i], a.dim(), op), y = wrap_dim(dims_b[i], b.dim(), op);
    EMBER_CHECK(!ca[x], "[tensordot] dim ", x, " appears multiple times in the list of dims");
    EMBER_CHECK(!cb[y], "[tensordot] dim ", y, " appears multiple times in the list of dims");
    ca[x] = cb[y] = true;
    EMBER_CHECK(a.size(x) == b.size(y),
                "[tensordot] contracted dimensions need to match, but "
                "first has size ",
                a.size(x), " in dim ", dims_a[i], " and second has size ", b.size(y), " in dim ",
                dims_b[i]);
    da.push_back(x);
    db.push_back(y);
    k *= a.size(x);
  }
  // a -> (free_a..., contracted...) as (Pa, K); b -> (contracted..., free_b...) as (K, Pb).
  DimVector perm_a, perm_b, rshape;
  int64_t pa = 1, pb = 1;
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (ca[d]) continue;
    perm_a.push_back(d);
    rshape.push_back(a.size(d));
    pa *= a.size(d);
  }
  for (int64_t d : da) perm_a.push_back(d);
  for (int64_t d : db) perm_b.push_back(d);
  for (int64_t d = 0; d < b.dim(); ++d) {
    if (cb[d]) continue;
    perm_b.push_back(d);
    rshape.push_back(b.size(d));
    pb *= b.size(d);
  }
  if (autograd::should_record(a, b)) derivatives::refuse_out(out, a, b, op);
  Tensor a2 = reshape(permute(a, perm_a), {pa, k});
  Tensor b2 = reshape(permute(b, perm_b), {k, pb});
  return finish_out(view(mm(a2, b2), rshape), out, op);
}

Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims, const Tensor& out) {
  EMBER_CHECK(dims >= 0, "[tensordot] tensordot expects dims >= 0, but got dims=", dims);
  EMBER_CHECK(dims <= a.dim() && dims <= b.dim(),
              "[tensordot] tensordot expects dims < ndim_a "
              "or ndim_b, but got dims=",
              dims);
  DimVector da, db;
  for (int64_t i = 0; i < dims; ++i) {
    da.push_back(i - dims);  // negative, as PyTorch spells them in its messages
    db.push_back(i);
  }
  return tensordot(a, b, da, db, out);
}

Tensor inner(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (a.dim() == 0 || b.dim() == 0) return mul(a, b, out);
  EMBER_CHECK(a.size(a.dim() - 1) == b.size(b.dim() - 1),
              "[inner] inner() the last dimension "
              "must match on both input tensors but got shapes ",
              torch_shape_str(a.sizes()), " and ", torch_shape_str(b.sizes()));
  return tensordot(a, b, {-1}, {-1}, out);
}

Tensor kron(const Tensor& a, const Tensor& b, const Tensor& out) {
  const int64_t nd = std::max(a.dim(), b.dim());
  // a viewed as (a0, 1, a1, 1, ...) times b viewed as (1, b0, 1, b1, ...), then merged pairwise.
  DimVector sa, sb, result;
  for (int64_t i = 0; i < nd; ++i) {
    const int64_t ai = i - (nd - a.dim()), bi = i - (nd - b.dim());
    const int64_t x = ai >= 0 ? a.size(ai) : 1, y = bi >= 0 ? b.size(bi) : 1;
    sa.push_back(x);
    sa.push_back(1);
    sb.push_back(1);
    sb.push_back(y);
    result.push_back(x * y);
  }
  if (autograd::should_record(a, b)) derivatives::refuse_out(out, a, b, "kron");
  Tensor prod = mul(reshape(a, sa), reshape(b, sb));
  return finish_out(reshape(prod, result), out, "kron");
}

Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim, const Tensor& out) {
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
  DimVector shape = broadcast_shapes(a.sizes(), b.sizes(), op);
  EMBER_CHECK_T(NotImplementedError, a.dtype() != ScalarType::Bool,
                "[cross] \"linalg_cross\" not implemented for 'Bool'");
  if (autograd::should_record(a, b)) return derivatives::cross(a, b, d, out);
  Tensor target = output_target(out, shape, a.dtype(), {&a, &b}, op);
  if (target.numel() > 0) {
    cross_stub(a.device(), target, expand(a, shape), expand(b, shape), d);
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
  if (autograd::should_record(x1, x2)) return derivatives::cdist(x1, x2, p, compute_mode);
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
