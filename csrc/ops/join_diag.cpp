// Triangular and diagonal ops: tril, triu (and in-place forms), diag, diag_embed, trace.
// diagflat is a composite, a public op only (api/join.cpp).
#include <algorithm>
#include <cstdlib>

#include "core/factory.h"
#include "core/shape.h"
#include "dispatch/copy.h"
#include "ops/creation.h"
#include "ops/join.h"
#include "ops/reduce.h"
#include "ops/shape_util.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(tri_stub, TriFn);

namespace {

Tensor tri(const Tensor& t, int64_t diagonal, const Tensor& out, bool lower) {
  const char* op = lower ? "tril" : "triu";
  EMBER_CHECK(t.dim() >= 2, "[", op, "] ", op, ": input tensor must have at least 2 dimensions");
  // Offsets beyond the matrix all mean "everything" or "nothing"; clamping keeps the kernel's
  // index arithmetic far from overflow.
  const int64_t rows = t.size(t.dim() - 2), cols = t.size(t.dim() - 1);
  diagonal = std::clamp<int64_t>(diagonal, -rows - 1, cols + 1);
  if (!out.defined()) {
    Tensor result = empty_tensor(t.sizes(), t.dtype(), t.device(), op);
    tri_stub(t.device(), result, t, diagonal, lower);
    return result;
  }
  check_out_dtype(out, t.dtype(), op);
  if (out.is_same(t)) {
    tri_stub(t.device(), out, t, diagonal, lower);
  } else if (out.storage().get() == t.storage().get()) {
    // Partially overlapping out=: compute separately, then copy.
    Tensor tmp = empty_tensor(t.sizes(), t.dtype(), t.device(), op);
    tri_stub(t.device(), tmp, t, diagonal, lower);
    resize_output(out, t.sizes(), op);
    copy_into(out, tmp, op);
  } else {
    resize_output(out, t.sizes(), op);
    tri_stub(t.device(), out, t, diagonal, lower);
  }
  out.bump_version();
  return out;
}

}  // namespace

Tensor tril(const Tensor& t, int64_t diagonal, const Tensor& out) {
  return tri(t, diagonal, out, true);
}
Tensor triu(const Tensor& t, int64_t diagonal, const Tensor& out) {
  return tri(t, diagonal, out, false);
}
Tensor& tril_(Tensor& t, int64_t diagonal) {
  tri(t, diagonal, t, true);
  return t;
}
Tensor& triu_(Tensor& t, int64_t diagonal) {
  tri(t, diagonal, t, false);
  return t;
}

Tensor diag(const Tensor& t, int64_t diagonal, const Tensor& out) {
  const char* op = "diag";
  EMBER_CHECK(t.dim() == 1 || t.dim() == 2, "[diag] diag(): Supports 1D or 2D tensors. Got ",
              t.dim(), "D");
  Tensor result;
  if (t.dim() == 1) {
    int64_t n;
    EMBER_CHECK(!__builtin_add_overflow(t.size(0), std::abs(diagonal), &n), "[diag] size overflow");
    result = zeros({n, n}, TensorOptions(t.dtype(), t.device()));
    if (t.numel() > 0) copy_into(diagonal_view(result, diagonal, 0, 1), t, op);
  } else {
    Tensor dv = diagonal_view(t, diagonal, 0, 1);
    result = empty_tensor(dv.sizes(), t.dtype(), t.device(), op);
    if (dv.numel() > 0) copy_into(result, dv, op);
  }
  return finish_out(result, out, op);
}

Tensor diag_embed(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2) {
  const char* op = "diag_embed";
  const int64_t nd = t.dim() + 1;
  const int64_t d1 = wrap_dim(dim1, nd, op), d2 = wrap_dim(dim2, nd, op);
  EMBER_CHECK(d1 != d2, "[diag_embed] diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  const int64_t last = t.dim() > 0 ? t.size(-1 + t.dim()) : 1;
  int64_t n;
  EMBER_CHECK(!__builtin_add_overflow(last, std::abs(offset), &n), "[diag_embed] size overflow");
  DimVector shape;
  for (int64_t d = 0; d + 1 < t.dim(); ++d) shape.push_back(t.size(d));
  // Insert the two new dims at their final positions, lower position first.
  const int64_t lo = std::min(d1, d2), hi = std::max(d1, d2);
  shape.insert(lo, n);
  shape.insert(hi, n);
  Tensor result = zeros(shape, TensorOptions(t.dtype(), t.device()));
  Tensor dv = diagonal_view(result, offset, d1, d2);
  if (dv.numel() > 0) copy_into(dv, t.dim() == 0 ? reshape(t, {1}) : t, op);
  return result;
}

Tensor trace(const Tensor& t) {
  EMBER_CHECK(t.dim() == 2, "[trace] trace: expected a matrix, but got tensor with dim ", t.dim());
  EMBER_CHECK_T(NotImplementedError, t.dtype() != ScalarType::Bool,
                "[trace] \"trace\" not implemented for 'Bool'");
  return sum(diagonal_view(t, 0, 0, 1));
}

}  // namespace native
}  // namespace ember
