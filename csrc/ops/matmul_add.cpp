// addmm, addmv, addbmm, baddbmm: beta * input + alpha * product, computed by one GEMM whose C
// operand starts as the broadcast input (or is write-only when beta == 0).
#include "core/factory.h"
#include "core/shape.h"
#include "dispatch/copy.h"
#include "ops/creation.h"
#include "ops/matmul.h"
#include "ops/matmul_common.h"
#include "ops/shape_util.h"
#include "ops/views.h"

namespace ember {
namespace native {

namespace {

// Which ops follow BLAS when alpha == 0 and skip the product (so NaN or inf in the factors do
// not reach the result): PyTorch's addmm, addmv and addbmm do; its baddbmm does not.
enum class ZeroAlpha { SkipsProduct, MultipliesProduct };

// Computes into a result of `shape` (at least 2-D after view3) starting from input.
// view3 maps the result to the (B, m, n) layout the GEMM writes.
template <typename View3>
Tensor add_product(const Tensor& input, const Tensor& a3, const Tensor& b3, IntArrayRef shape,
                   const Scalar& beta, const Scalar& alpha, const Tensor& out, View3 view3,
                   const char* op, ZeroAlpha zero_alpha = ZeroAlpha::SkipsProduct) {
  const ScalarType dtype = a3.dtype();
  check_scalar_for(beta, dtype, op);
  check_scalar_for(alpha, dtype, op);
  const bool inplace = out.defined() && out.is_same(input);
  Tensor target;
  if (inplace) {
    EMBER_CHECK(input.sizes().equals(shape), "[", op, "] output with shape ",
                torch_shape_str(input.sizes()), " doesn't match the broadcast shape ",
                torch_shape_str(shape));
    target = (input.is_contiguous() && input.storage().get() != a3.storage().get() &&
              input.storage().get() != b3.storage().get())
                 ? input
                 : clone(input);
    if (!target.is_contiguous()) target = contiguous(target);
  } else {
    Tensor expanded = expand(input, shape);  // checks that input broadcasts
    target = output_target(out, shape, dtype, {&input, &a3, &b3}, op);
    if (!scalar_is_zero(beta)) copy_into(target, expanded, op);
  }
  if (zero_alpha == ZeroAlpha::SkipsProduct && scalar_is_zero(alpha)) {
    if (target.numel() > 0) scale_by_beta(view3(target), beta);
    target.bump_version();
  } else {
    gemm_into(view3(target), a3, b3, alpha, beta, op);
  }
  return finish_target(target, out, op);
}

void check_input_dtype(const Tensor& input, const Tensor& m2, const char* op) {
  EMBER_CHECK(input.dtype() == m2.dtype(), "[", op,
              "] self and mat2 must have the same dtype, "
              "but got ",
              torch_type_name(input.dtype()), " and ", torch_type_name(m2.dtype()));
}

}  // namespace

Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2, const Scalar& beta,
             const Scalar& alpha, const Tensor& out) {
  const char* op = "addmm";
  EMBER_CHECK(m1.dim() == 2, "[addmm] mat1 must be a matrix, got ", m1.dim(), "-D tensor");
  EMBER_CHECK(m2.dim() == 2, "[addmm] mat2 must be a matrix, got ", m2.dim(), "-D tensor");
  EMBER_CHECK(m1.size(1) == m2.size(0), "[addmm] mat1 and mat2 shapes cannot be multiplied (",
              m1.size(0), "x", m1.size(1), " and ", m2.size(0), "x", m2.size(1), ")");
  check_input_dtype(input, m2, op);
  EMBER_CHECK(m1.dtype() == m2.dtype(),
              "[addmm] expected m1 and m2 to have the same dtype, but "
              "got: ",
              torch_cpp_type_name(m1.dtype()), " != ", torch_cpp_type_name(m2.dtype()));
  check_matmul_dtype(m1.dtype(), op);
  const DimVector shape{m1.size(0), m2.size(1)};
  return add_product(
      input, unsqueeze(m1, 0), unsqueeze(m2, 0), shape, beta, alpha, out,
      [](const Tensor& t) { return unsqueeze(t, 0); }, op);
}

Tensor addmv(const Tensor& input, const Tensor& mat, const Tensor& vec, const Scalar& beta,
             const Scalar& alpha, const Tensor& out) {
  const char* op = "addmv";
  EMBER_CHECK(mat.dim() == 2 && vec.dim() == 1 && input.dim() <= 1,
              "[addmv] vector + matrix @ "
              "vector expected, got ",
              input.dim(), ", ", mat.dim(), ", ", vec.dim());
  const bool input_ok = input.dim() == 0 || input.size(0) == mat.size(0) || input.size(0) == 1;
  EMBER_CHECK(mat.size(1) == vec.size(0) && input_ok, "[addmv] size mismatch, got input (",
              input.dim() == 0 ? 1 : input.size(0), "), mat (", mat.size(0), "x", mat.size(1),
              "), vec (", vec.size(0), ")");
  EMBER_CHECK(input.dtype() == mat.dtype() && mat.dtype() == vec.dtype(),
              "[addmv] addmv input "
              "tensors must have the same dtype, but got ",
              torch_type_name(input.dtype()), ", ", torch_type_name(mat.dtype()), ", and ",
              torch_type_name(vec.dtype()));
  check_matmul_dtype(mat.dtype(), op);
  const DimVector shape{mat.size(0)};
  return add_product(
      input, unsqueeze(mat, 0), unsqueeze(unsqueeze(vec, 1), 0), shape, beta, alpha, out,
      [](const Tensor& t) {
        return view(t, {1, t.size(0), 1});
      },
      op);
}

Tensor baddbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, const Scalar& beta,
               const Scalar& alpha, const Tensor& out) {
  const char* op = "baddbmm";
  // PyTorch reads sizes before it checks the dims, so too few dims is its IndexError (except a
  // 2-d batch1 here); the classes follow it, the messages stay explicit.
  EMBER_CHECK_T(IndexError, b1.dim() >= 2, "[baddbmm] batch1 must be a 3D tensor");
  EMBER_CHECK(b1.dim() == 3, "[baddbmm] batch1 must be a 3D tensor");
  EMBER_CHECK_T(IndexError, b2.dim() >= 3, "[baddbmm] batch2 must be a 3D tensor");
  EMBER_CHECK(b2.dim() == 3, "[baddbmm] batch2 must be a 3D tensor");
  EMBER_CHECK(b2.size(0) == b1.size(0) && b2.size(1) == b1.size(2),
              "[baddbmm] Expected size for "
              "first two dimensions of batch2 tensor to be: [",
              b1.size(0), ", ", b1.size(2), "] but got: [", b2.size(0), ", ", b2.size(1), "].");
  EMBER_CHECK(b1.dtype() == b2.dtype() && input.dtype() == b1.dtype(),
              "[baddbmm] expected "
              "scalar type ",
              torch_type_name(input.dtype()), " but found ",
              torch_type_name(input.dtype() != b1.dtype() ? b1.dtype() : b2.dtype()));
  check_matmul_dtype(b1.dtype(), op);
  const DimVector shape{b1.size(0), b1.size(1), b2.size(2)};
  return add_product(
      input, b1, b2, shape, beta, alpha, out, [](const Tensor& t) { return t; }, op,
      ZeroAlpha::MultipliesProduct);
}

Tensor addbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, const Scalar& beta,
              const Scalar& alpha, const Tensor& out) {
  const char* op = "addbmm";
  EMBER_CHECK_T(IndexError, b1.dim() >= 3, "[addbmm] batch1 must be a 3D tensor");
  EMBER_CHECK(b1.dim() == 3, "[addbmm] batch1 must be a 3D tensor");
  EMBER_CHECK_T(IndexError, b2.dim() >= 3, "[addbmm] batch2 must be a 3D tensor");
  EMBER_CHECK(b2.dim() == 3, "[addbmm] batch2 must be a 3D tensor");
  EMBER_CHECK(b1.size(0) == b2.size(0),
              "[addbmm] batch1 and batch2 must have same number of "
              "batches, got ",
              b1.size(0), " and ", b2.size(0));
  EMBER_CHECK(b1.size(2) == b2.size(1), "[addbmm] Incompatible matrix sizes for bmm (", b1.size(1),
              "x", b1.size(2), " and ", b2.size(1), "x", b2.size(2), ")");
  check_input_dtype(input, b2, op);
  EMBER_CHECK(b1.dtype() == b2.dtype(),
              "[addbmm] expected m1 and m2 to have the same dtype, but "
              "got: ",
              torch_cpp_type_name(b1.dtype()), " != ", torch_cpp_type_name(b2.dtype()));
  check_matmul_dtype(b1.dtype(), op);
  // sum_b b1[b] @ b2[b] is one GEMM: (m, B*k) @ (B*k, n).
  const int64_t batch = b1.size(0), m = b1.size(1), k = b1.size(2), n = b2.size(2);
  Tensor a2 = reshape(permute(b1, {1, 0, 2}), {m, batch * k});
  Tensor c2 = reshape(b2, {batch * k, n});
  const DimVector shape{m, n};
  return add_product(
      input, unsqueeze(a2, 0), unsqueeze(c2, 0), shape, beta, alpha, out,
      [](const Tensor& t) { return unsqueeze(t, 0); }, op);
}

}  // namespace native
}  // namespace ember
