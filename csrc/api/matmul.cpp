// Public matrix products: each records its node (autograd/derivatives/matmul*.cpp) when an input
// requires grad and otherwise runs the native op; inner, outer, tensordot and kron are
// composites of public ops, whose own nodes give their gradients.
#include "api/matmul.h"

#include <algorithm>
#include <vector>

#include "api/autocast.h"
#include "api/elementwise.h"
#include "api/shape_util.h"
#include "api/views.h"
#include "autograd/derivatives/matmul.h"
#include "autograd/variable.h"
#include "core/shape.h"

namespace ember {

// ---- products with a node of their own ----------------------------------------------------

Tensor mm(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: lower precision
    const Tensor a2 = autocast::lower(a), b2 = autocast::lower(b);
    autocast::ExcludeGuard no_autocast;
    return ember::mm(a2, b2);
  }
  if (autograd::should_record(a, b)) return derivatives::mm(a, b, out);
  return native::mm(a, b, out);
}

Tensor bmm(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: lower precision
    const Tensor a2 = autocast::lower(a), b2 = autocast::lower(b);
    autocast::ExcludeGuard no_autocast;
    return ember::bmm(a2, b2);
  }
  if (autograd::should_record(a, b)) return derivatives::bmm(a, b, out);
  return native::bmm(a, b, out);
}

Tensor mv(const Tensor& mat, const Tensor& vec, const Tensor& out) {
  if (autograd::should_record(mat, vec)) return derivatives::mv(mat, vec, out);
  return native::mv(mat, vec, out);
}

Tensor dot(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (autograd::should_record(a, b)) return derivatives::dot(a, b, out);
  return native::dot(a, b, out);
}

Tensor vdot(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (autograd::should_record(a, b)) return derivatives::vdot(a, b, out);
  return native::vdot(a, b, out);
}

Tensor matmul(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: lower precision
    const Tensor a2 = autocast::lower(a), b2 = autocast::lower(b);
    autocast::ExcludeGuard no_autocast;
    return ember::matmul(a2, b2);
  }
  if (autograd::should_record(a, b)) {
    // The recorded form is a composite of dot / mv / mm / bmm that assumes 1-D or more.
    native::check_matmul_args(a, b);
    return derivatives::matmul(a, b, out);
  }
  return native::matmul(a, b, out);
}

Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2, const Scalar& beta,
             const Scalar& alpha, const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: lower precision (not the in-place form)
    const Tensor i2 = autocast::lower(input), x2 = autocast::lower(m1), y2 = autocast::lower(m2);
    autocast::ExcludeGuard no_autocast;
    return ember::addmm(i2, x2, y2, beta, alpha);
  }
  if (autograd::should_record(input, m1, m2)) {
    return derivatives::addmm(input, m1, m2, beta, alpha, out);
  }
  return native::addmm(input, m1, m2, beta, alpha, out);
}

Tensor addmv(const Tensor& input, const Tensor& mat, const Tensor& vec, const Scalar& beta,
             const Scalar& alpha, const Tensor& out) {
  if (autograd::should_record(input, mat, vec)) {
    return derivatives::addmv(input, mat, vec, beta, alpha, out);
  }
  return native::addmv(input, mat, vec, beta, alpha, out);
}

Tensor addbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, const Scalar& beta,
              const Scalar& alpha, const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: lower precision (not the in-place form)
    const Tensor i2 = autocast::lower(input), x2 = autocast::lower(b1), y2 = autocast::lower(b2);
    autocast::ExcludeGuard no_autocast;
    return ember::addbmm(i2, x2, y2, beta, alpha);
  }
  if (autograd::should_record(input, b1, b2)) {
    return derivatives::addbmm(input, b1, b2, beta, alpha, out);
  }
  return native::addbmm(input, b1, b2, beta, alpha, out);
}

Tensor baddbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, const Scalar& beta,
               const Scalar& alpha, const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: lower precision (not the in-place form)
    const Tensor i2 = autocast::lower(input), x2 = autocast::lower(b1), y2 = autocast::lower(b2);
    autocast::ExcludeGuard no_autocast;
    return ember::baddbmm(i2, x2, y2, beta, alpha);
  }
  if (autograd::should_record(input, b1, b2)) {
    return derivatives::baddbmm(input, b1, b2, beta, alpha, out);
  }
  return native::baddbmm(input, b1, b2, beta, alpha, out);
}

Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim, const Tensor& out) {
  if (autograd::should_record(a, b)) {
    // The node's formula needs the dim the product ran along (found and checked by native).
    return derivatives::cross(a, b, native::cross_dim(a, b, dim), out);
  }
  return native::cross(a, b, dim, out);
}

Tensor cdist(const Tensor& x1, const Tensor& x2, double p,
             const std::optional<std::string>& compute_mode) {
  if (autocast::active()) {  // autocast: float32
    const Tensor a = autocast::to_fp32(x1), b = autocast::to_fp32(x2);
    autocast::ExcludeGuard no_autocast;
    return ember::cdist(a, b, p, compute_mode);
  }
  if (autograd::should_record(x1, x2)) return derivatives::cdist(x1, x2, p, compute_mode);
  return native::cdist(x1, x2, p, compute_mode);
}

// ---- composites ----------------------------------------------------------------------------

Tensor outer(const Tensor& a, const Tensor& b, const Tensor& out) {
  EMBER_CHECK(a.dim() == 1, "[outer] outer: Expected 1-D argument self, but got ", a.dim(), "-D");
  EMBER_CHECK(b.dim() == 1, "[outer] outer: Expected 1-D argument vec2, but got ", b.dim(), "-D");
  return ember::mul(ember::unsqueeze(a, 1), b, out);
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
  if (pa == 1 && pb == 1) {
    // A single number out of the contraction: one dot product, as PyTorch (DotBackward0; under
    // autocast it stays in the inputs' dtype, where mm would be cast down).
    Tensor p = ember::dot(ember::reshape(ember::permute(a, perm_a), {k}),
                          ember::reshape(ember::permute(b, perm_b), {k}));
    return finish_out(ember::view(p, rshape), out, op);
  }
  Tensor a2 = ember::reshape(ember::permute(a, perm_a), {pa, k});
  Tensor b2 = ember::reshape(ember::permute(b, perm_b), {k, pb});
  return finish_out(ember::view(ember::mm(a2, b2), rshape), out, op);
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
  return ember::tensordot(a, b, da, db, out);
}

Tensor inner(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (a.dim() == 0 || b.dim() == 0) return ember::mul(a, b, out);
  EMBER_CHECK(a.size(a.dim() - 1) == b.size(b.dim() - 1),
              "[inner] inner() the last dimension "
              "must match on both input tensors but got shapes ",
              torch_shape_str(a.sizes()), " and ", torch_shape_str(b.sizes()));
  return ember::tensordot(a, b, {-1}, {-1}, out);
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
  Tensor prod = ember::mul(ember::reshape(a, sa), ember::reshape(b, sb));
  return finish_out(ember::reshape(prod, result), out, "kron");
}

}  // namespace ember
