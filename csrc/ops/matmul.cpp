// matmul, mm, bmm, mv, dot, vdot and the GEMM plumbing they share (ops/matmul_common.h).
#include "ops/matmul.h"

#include <algorithm>

#include "core/factory.h"
#include "core/shape.h"
#include "dispatch/copy.h"
#include "kernels/gemm_stubs.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/matmul_common.h"
#include "ops/shape_util.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(gemm_stub, GemmFn);
EMBER_DEFINE_STUB(gemm_epilogue_stub, GemmEpilogueFn);
EMBER_DEFINE_STUB(dot_stub, DotFn);
EMBER_DEFINE_STUB(gemv_f32_stub, GemvFn);
EMBER_DEFINE_STUB(packed_sgemm_stub, PackedSgemmFn);

// ----- shared plumbing ----------------------------------------------------------------------

bool scalar_is_zero(const Scalar& s) {
  return s.to_complex() == std::complex<double>(0, 0);
}

void check_matmul_dtype(ScalarType t, const char* op) {
  EMBER_CHECK_T(NotImplementedError, t != ScalarType::Bool, "[", op,
                "] \"addmm_impl_cpu_\" not implemented for 'Bool'");
}

void check_scalar_for(const Scalar& s, ScalarType t, const char* op) {
  if (is_complex(t) || !s.is_complex()) return;
  EMBER_CHECK(s.to_complex().imag() == 0, "[", op, "] value cannot be converted to type ",
              torch_cpp_type_name(t), " without overflow");
}

namespace {

// Effective (row, col) strides when the last two dims of a (.., r, c) tensor have a layout a
// BLAS-like kernel takes: row-major (unit col stride) or column-major (unit row stride). A
// size-1 dim's stride is meaningless, so it is replaced by the natural one.
bool gemm_layout(int64_t r, int64_t c, int64_t rs, int64_t cs, int64_t* ers, int64_t* ecs) {
  const bool row_major = (c == 1 || cs == 1) && (r == 1 || rs >= std::max<int64_t>(c, 1));
  if (row_major) {
    *ers = r == 1 ? std::max<int64_t>(c, 1) : rs;
    *ecs = 1;
    return true;
  }
  const bool col_major = (r == 1 || rs == 1) && (c == 1 || cs >= std::max<int64_t>(r, 1));
  if (col_major) {
    *ers = 1;
    *ecs = c == 1 ? std::max<int64_t>(r, 1) : cs;
    return true;
  }
  return false;
}

// Fills m from a (B, r, c) tensor, copying it into a compatible layout when needed. `keep`
// holds the copy alive.
GemmMatrix gemm_operand(const Tensor& t, Tensor& keep) {
  const int64_t r = t.size(1), c = t.size(2);
  int64_t rs, cs;
  keep = t;
  if (!gemm_layout(r, c, t.stride(1), t.stride(2), &rs, &cs)) {
    if (t.size(0) > 1 && t.stride(0) == 0) {
      // A broadcast batch: copy one matrix and broadcast it again.
      Tensor one = contiguous(select(t, 0, 0));
      keep = make_view(one, t.sizes(), {0, c, 1}, one.storage_offset());
    } else {
      keep = contiguous(t);
    }
    gemm_layout(r, c, keep.stride(1), keep.stride(2), &rs, &cs);
  }
  GemmMatrix m;
  m.data = keep.data_ptr();
  m.batch_stride = keep.size(0) == 1 ? 0 : keep.stride(0);
  m.row_stride = rs;
  m.col_stride = cs;
  return m;
}

}  // namespace

void scale_by_beta(const Tensor& out, const Scalar& beta) {
  Tensor o = out;
  if (scalar_is_zero(beta)) {
    zero_(o);  // BLAS semantics: beta == 0 ignores C, NaN included
  } else if (beta.to_complex() != std::complex<double>(1, 0)) {
    mul(o, scalar_tensor(beta, o.dtype()), o);
  }
}

void gemm_into(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha,
               const Scalar& beta, const char* op) {
  const int64_t batch = out.size(0), m = out.size(1), n = out.size(2), k = a.size(2);
  if (out.numel() == 0) return;
  if (k == 0) {
    scale_by_beta(out, beta);
    return;
  }
  Tensor ka, kb;
  GemmParams p;
  p.dtype = out.dtype();
  p.batch = batch;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a = gemm_operand(a, ka);
  p.b = gemm_operand(b, kb);
  p.c.data = out.data_ptr();
  p.c.batch_stride = out.stride(0);
  p.c.row_stride = m == 1 ? n : out.stride(1);
  p.c.col_stride = 1;
  p.alpha = alpha;
  p.beta = beta;
  EMBER_CHECK(n == 1 || out.stride(2) == 1, "[", op, "] internal: result must be row-major");
  gemm_stub(out.device(), p);
  out.bump_version();
}

Tensor merge_batch_dims(const Tensor& t) {
  const int64_t nd = t.dim();
  const int64_t r = t.size(nd - 2), c = t.size(nd - 1);
  int64_t batch = 1;
  bool all_broadcast = true;
  for (int64_t d = 0; d < nd - 2; ++d) {
    batch *= t.size(d);
    if (t.size(d) > 1 && t.stride(d) != 0) all_broadcast = false;
  }
  DimVector shape{batch, r, c};
  if (all_broadcast) {
    return make_view(t, shape, {0, t.stride(nd - 2), t.stride(nd - 1)}, t.storage_offset());
  }
  if (auto strides = compute_view_strides(t.sizes(), t.strides(), shape)) {
    return make_view(t, shape, *strides, t.storage_offset());
  }
  return view(contiguous(t), shape);
}

Tensor output_target(const Tensor& out, IntArrayRef shape, ScalarType dtype,
                     std::initializer_list<const Tensor*> inputs, const char* op) {
  if (out.defined()) {
    check_out_dtype(out, dtype, op);
    EMBER_CHECK(!out.storage()->read_only(), "[", op,
                "] cannot write to a tensor backed by a "
                "read-only NumPy array");
    bool overlap = false;
    for (const Tensor* t : inputs) {
      overlap = overlap || (t->storage().get() == out.storage().get() && t->numel() > 0);
    }
    // An out= that is (a view of) an input is resized only in finish_target, after the product
    // has read the input: mv(A, v, out=A) would otherwise shrink A under the kernel.
    if (overlap) return empty_tensor(shape, dtype, Device(), op);
    resize_output(out, shape, op);
    if (out.is_contiguous()) return out;
  }
  return empty_tensor(shape, dtype, Device(), op);
}

Tensor finish_target(const Tensor& target, const Tensor& out, const char* op) {
  if (!out.defined()) return target;
  if (!target.is_same(out)) {
    resize_output(out, target.sizes(), op);
    copy_into(out, target, op);
  }
  out.bump_version();
  return out;
}

// ----- the ops ------------------------------------------------------------------------------

namespace {

void check_mm_dtypes(const Tensor& a, const Tensor& b, const char* op) {
  EMBER_CHECK(a.dtype() == b.dtype(), "[", op,
              "] expected m1 and m2 to have the same dtype, but "
              "got: ",
              torch_cpp_type_name(a.dtype()), " != ", torch_cpp_type_name(b.dtype()));
  // PyTorch lets an empty product through for any dtype (nothing is multiplied).
  if (a.numel() > 0 && b.numel() > 0) check_matmul_dtype(a.dtype(), op);
}

void check_mm_shapes(const Tensor& a, const Tensor& b, const char* op) {
  EMBER_CHECK(a.size(1) == b.size(0), "[", op, "] mat1 and mat2 shapes cannot be multiplied (",
              a.size(0), "x", a.size(1), " and ", b.size(0), "x", b.size(1), ")");
}

Tensor mm_impl(const Tensor& a, const Tensor& b, const Tensor& out, const char* op) {
  EMBER_CHECK(a.dim() == 2, "[", op, "] self must be a matrix, got ", a.dim(), "-D tensor");
  EMBER_CHECK(b.dim() == 2, "[", op, "] mat2 must be a matrix, got ", b.dim(), "-D tensor");
  check_mm_shapes(a, b, op);
  check_mm_dtypes(a, b, op);
  Tensor target = output_target(out, {a.size(0), b.size(1)}, a.dtype(), {&a, &b}, op);
  gemm_into(unsqueeze(target, 0), unsqueeze(a, 0), unsqueeze(b, 0), 1, 0, op);
  return finish_target(target, out, op);
}

Tensor mv_impl(const Tensor& mat, const Tensor& vec, const Tensor& out, const char* op) {
  EMBER_CHECK(mat.dim() == 2 && vec.dim() == 1, "[", op,
              "] vector + matrix @ vector expected, "
              "got 1, ",
              mat.dim(), ", ", vec.dim());
  EMBER_CHECK(mat.size(1) == vec.size(0), "[", op, "] size mismatch, got input (", mat.size(0),
              "), mat (", mat.size(0), "x", mat.size(1), "), vec (", vec.size(0), ")");
  EMBER_CHECK(mat.dtype() == vec.dtype(), "[", op,
              "] addmv input tensors must have the same "
              "dtype, but got ",
              torch_type_name(mat.dtype()), ", ", torch_type_name(mat.dtype()), ", and ",
              torch_type_name(vec.dtype()));
  check_matmul_dtype(mat.dtype(), op);
  Tensor target = output_target(out, {mat.size(0)}, mat.dtype(), {&mat, &vec}, op);
  gemm_into(view(target, {1, mat.size(0), 1}), unsqueeze(mat, 0), unsqueeze(unsqueeze(vec, 1), 0),
            1, 0, op);
  return finish_target(target, out, op);
}

Tensor dot_impl(const Tensor& a, const Tensor& b, const Tensor& out, bool conj, const char* op) {
  EMBER_CHECK(a.dim() == 1 && b.dim() == 1, "[", op, "] 1D tensors expected, but got ", a.dim(),
              "D and ", b.dim(), "D tensors");
  EMBER_CHECK(a.numel() == b.numel(), "[", op, "] inconsistent tensor size, expected tensor [",
              a.numel(), "] and src [", b.numel(),
              "] to have the same number of elements, but "
              "got ",
              a.numel(), " and ", b.numel(), " elements respectively");
  EMBER_CHECK(a.dtype() == b.dtype(), "[", op,
              "] dot : expected both vectors to have same dtype, "
              "but found ",
              torch_type_name(a.dtype()), " and ", torch_type_name(b.dtype()));
  EMBER_CHECK_T(NotImplementedError, a.dtype() != ScalarType::Bool, "[", op,
                "] \"dot\" not implemented for 'Bool'");
  Tensor result = empty_tensor({}, a.dtype(), a.device(), op);
  dot_stub(a.device(), result.data_ptr(), a.dtype(), a.numel(), a.data_ptr(), a.stride(0),
           b.data_ptr(), b.stride(0), conj);
  return finish_out(result, out, op);
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b, const Tensor& out) {
  return mm_impl(a, b, out, "mm");
}
Tensor mv(const Tensor& mat, const Tensor& vec, const Tensor& out) {
  return mv_impl(mat, vec, out, "mv");
}
Tensor dot(const Tensor& a, const Tensor& b, const Tensor& out) {
  return dot_impl(a, b, out, false, "dot");
}
Tensor vdot(const Tensor& a, const Tensor& b, const Tensor& out) {
  return dot_impl(a, b, out, true, "vdot");
}

Tensor bmm(const Tensor& a, const Tensor& b, const Tensor& out) {
  const char* op = "bmm";
  EMBER_CHECK(a.dim() == 3, "[bmm] batch1 must be a 3D tensor");
  EMBER_CHECK(b.dim() == 3, "[bmm] batch2 must be a 3D tensor");
  EMBER_CHECK(b.size(0) == a.size(0) && b.size(1) == a.size(2),
              "[bmm] Expected size for first "
              "two dimensions of batch2 tensor to be: [",
              a.size(0), ", ", a.size(2), "] but got: [", b.size(0), ", ", b.size(1), "].");
  EMBER_CHECK(a.dtype() == b.dtype(), "[bmm] expected scalar type ", torch_type_name(a.dtype()),
              " but found ", torch_type_name(b.dtype()));
  if (a.numel() > 0 && b.numel() > 0) check_matmul_dtype(a.dtype(), op);
  Tensor target = output_target(out, {a.size(0), a.size(1), b.size(2)}, a.dtype(), {&a, &b}, op);
  gemm_into(target, a, b, 1, 0, op);
  return finish_target(target, out, op);
}

void check_matmul_args(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dim() > 0 && b.dim() > 0,
              "[matmul] both arguments to matmul need to be at least 1D, but "
              "they are ",
              a.dim(), "D and ", b.dim(), "D");
}

Tensor matmul(const Tensor& a, const Tensor& b, const Tensor& out) {
  const char* op = "matmul";
  check_matmul_args(a, b);
  const int64_t da = a.dim(), db = b.dim();
  if (da == 1 && db == 1) return dot_impl(a, b, out, false, op);
  if (da == 2 && db == 1) return mv_impl(a, b, out, op);
  if (da == 1 && db == 2) {
    return finish_out(squeeze(mm_impl(unsqueeze(a, 0), b, Tensor(), op), {0}), out, op);
  }
  if (da == 2 && db == 2) return mm_impl(a, b, out, op);
  if (da >= 3 && db <= 2) {
    // Fold a's batch dims into its rows: one large GEMM instead of many small ones.
    DimVector shape(a.sizes());
    shape.pop_back();
    int64_t rows = 1;
    for (int64_t s : shape) rows *= s;
    Tensor a2 = reshape(a, {rows, a.size(da - 1)});
    Tensor r;
    if (db == 1) {
      r = mv_impl(a2, b, Tensor(), op);
    } else {
      r = mm_impl(a2, b, Tensor(), op);
      shape.push_back(b.size(1));
    }
    return finish_out(view(r, shape), out, op);
  }
  // Batched: broadcast the batch dims; a 1-D operand becomes a 1-row / 1-column matrix.
  const int64_t n = da > 1 ? a.size(da - 2) : 1, k1 = a.size(da - 1);
  const int64_t k2 = db > 1 ? b.size(db - 2) : b.size(0), p = db > 1 ? b.size(db - 1) : 1;
  EMBER_CHECK(k1 == k2, "[matmul] mat1 and mat2 shapes cannot be multiplied (", n, "x", k1, " and ",
              k2, "x", p, ")");
  check_mm_dtypes(a, b, op);
  DimVector batch_a, batch_b;
  for (int64_t d = 0; d + 2 < da; ++d) batch_a.push_back(a.size(d));
  for (int64_t d = 0; d + 2 < db; ++d) batch_b.push_back(b.size(d));
  DimVector batch = broadcast_shapes(batch_a, batch_b, op);
  DimVector ashape(batch), bshape(batch), rshape(batch);
  ashape.push_back(n);
  ashape.push_back(k1);
  bshape.push_back(k2);
  bshape.push_back(p);
  Tensor a3 = merge_batch_dims(expand(da == 1 ? unsqueeze(a, 0) : a, ashape));
  Tensor b3 = merge_batch_dims(expand(db == 1 ? unsqueeze(b, 1) : b, bshape));
  if (da > 1) rshape.push_back(n);
  if (db > 1) rshape.push_back(p);
  Tensor target = output_target(out, rshape, a.dtype(), {&a, &b}, op);
  gemm_into(view(target, {a3.size(0), n, p}), a3, b3, 1, 0, op);
  return finish_target(target, out, op);
}

}  // namespace native
}  // namespace ember
