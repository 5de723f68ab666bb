// linalg.pinv, linalg.matrix_rank and torch.pinverse: composites of svd / eigh, as PyTorch's
// (their gradients come from the recorded decompositions).
#include <limits>

#include "autograd/record.h"
#include "core/shape.h"
#include "ops/binary_ops.h"
#include "ops/compare_ops.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/linalg_common.h"
#include "ops/linalg_spectral.h"
#include "ops/linalg_spectral_util.h"
#include "ops/matmul.h"
#include "ops/reduce.h"
#include "ops/shape_util.h"
#include "ops/unary_ops.h"
#include "ops/views.h"

namespace ember {
namespace native {
namespace linalg {

namespace {

void check_tolerance(const Tensor& t, const char* op, const char* name) {
  if (t.defined()) {
    EMBER_CHECK(!is_complex(t.dtype()), "[", op, "] ", name,
                " tensor of complex type is not supported.");
  }
}

// PyTorch's get_atol_rtol: float64 tolerances; rtol defaults to eps * max(m, n), or 0 where
// atol > 0 when only atol is given.
std::pair<Tensor, Tensor> tolerances(const Tensor& A, const Tensor& atol_in, const Tensor& rtol_in,
                                     const char* op) {
  check_tolerance(atol_in, op, "atol");
  check_tolerance(rtol_in, op, "rtol");
  const TensorOptions f64(ScalarType::Float64);
  Tensor atol = atol_in.defined() ? atol_in : zeros({}, f64);
  if (rtol_in.defined()) return {atol, rtol_in};
  const double eps = to_real(A.dtype()) == ScalarType::Float32
                         ? std::numeric_limits<float>::epsilon()
                         : std::numeric_limits<double>::epsilon();
  Tensor rtol = full({}, Scalar(eps * static_cast<double>(std::max(rows(A), cols(A)))), f64);
  if (atol_in.defined()) rtol = where(gt(atol_in, zeros({}, f64)), zeros({}, f64), rtol);
  return {atol, rtol};
}

// max(atol, rtol * largest): the threshold under which a singular value counts as zero.
Tensor threshold(const Tensor& atol, const Tensor& rtol, const Tensor& largest) {
  return maximum(unsqueeze(atol, -1), mul(unsqueeze(rtol, -1), largest));
}

}  // namespace

Tensor pinv(const Tensor& A, const Tensor& atol_in, const Tensor& rtol_in, bool hermitian,
            const Tensor& out) {
  constexpr const char* op = "linalg.pinv";
  const ScalarType t = A.dtype();
  const bool ok = t == ScalarType::Float32 || t == ScalarType::Float64 ||
                  t == ScalarType::Complex64 || t == ScalarType::Complex128;
  EMBER_CHECK(ok && A.dim() >= 2, "[", op, "] linalg.pinv(", torch_type_name(t),
              shape_str(A.sizes()),
              "): expected a tensor with 2 or more dimensions of float, double, cfloat or cdouble "
              "types");
  if (out.defined()) autograd::check_out_arg(out, {A}, op);
  auto [atol, rtol] = tolerances(A, atol_in, rtol_in, op);
  Tensor result;
  if (A.numel() == 0) {
    auto [U, S, Vh] = linalg::svd(A, /*full_matrices=*/false);
    result = matmul(mul(mH(Vh), unsqueeze(reciprocal(S), -2)), mH(U));
  } else if (!hermitian) {
    auto [U, S, Vh] = linalg::svd(A, /*full_matrices=*/false);
    const Tensor tol = threshold(atol, rtol, narrow(S, -1, 0, 1));
    const Tensor S_pinv =
        to_dtype(where(gt(S, tol), reciprocal(S), zeros({}, TensorOptions(S.dtype()))), t);
    result = matmul(mul(mH(Vh), unsqueeze(S_pinv, -2)), mH(U));
  } else {
    auto [L, V] = eigh(A);
    const Tensor L_abs = abs(L);
    const Tensor tol = threshold(atol, rtol, amax(L_abs, std::vector<int64_t>{-1}, true));
    const Tensor L_pinv =
        to_dtype(where(gt(L_abs, tol), reciprocal(L), zeros({}, TensorOptions(L.dtype()))), t);
    result = matmul(mul(V, unsqueeze(L_pinv, -2)), mH(V));
  }
  return finish_out(result, out, op);
}

Tensor matrix_rank(const Tensor& A, const Tensor& atol_in, const Tensor& rtol_in, bool hermitian,
                   const Tensor& out) {
  constexpr const char* op = "linalg.matrix_rank";
  EMBER_CHECK(A.dim() >= 2, "[", op, "] The input tensor input must have at least 2 dimensions.");
  auto [atol, rtol] = tolerances(A, atol_in, rtol_in, op);
  autograd::NoGradGuard no_grad;  // an integer result: nothing to differentiate
  const Tensor S = hermitian ? abs(eigvalsh(A)) : svdvals(A);
  Tensor largest;
  if (S.numel() == 0) {
    largest = zeros(batch_dims_with(A, {1}), TensorOptions(S.dtype()));
  } else {
    largest = hermitian ? amax(S, std::vector<int64_t>{-1}, true) : narrow(S, -1, 0, 1);
  }
  const Tensor rank = sum(gt(S, threshold(atol, rtol, largest)), std::vector<int64_t>{-1});
  return finish_out(rank, out, op);
}

}  // namespace linalg

Tensor pinverse(const Tensor& A, double rcond) {
  return linalg::pinv(A, Tensor(), scalar_tensor(Scalar(rcond), ScalarType::Float64));
}

}  // namespace native
}  // namespace ember
