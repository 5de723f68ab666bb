// linalg.matrix_rank (an integer result, from svdvals / eigvalsh, as PyTorch's) and the tolerances
// it shares with linalg.pinv (a composite of public ops, in api/linalg/spectral.cpp).
#include <limits>

#include "core/shape.h"
#include "ops/binary.h"
#include "ops/compare.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/linalg/common.h"
#include "ops/linalg/spectral.h"
#include "ops/linalg/spectral_util.h"
#include "ops/matmul.h"
#include "ops/reduce.h"
#include "ops/shape_util.h"
#include "ops/unary.h"
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

}  // namespace

std::pair<Tensor, Tensor> rank_tolerances(const Tensor& A, const Tensor& atol_in,
                                          const Tensor& rtol_in, const char* op) {
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

Tensor rank_threshold(const Tensor& atol, const Tensor& rtol, const Tensor& largest) {
  return maximum(unsqueeze(atol, -1), mul(unsqueeze(rtol, -1), largest));
}

Tensor matrix_rank(const Tensor& A, const Tensor& atol_in, const Tensor& rtol_in, bool hermitian,
                   const Tensor& out) {
  constexpr const char* op = "linalg.matrix_rank";
  EMBER_CHECK(A.dim() >= 2, "[", op, "] The input tensor input must have at least 2 dimensions.");
  auto [atol, rtol] = rank_tolerances(A, atol_in, rtol_in, op);
  const Tensor S = hermitian ? abs(eigvalsh(A)) : svdvals(A);
  Tensor largest;
  if (S.numel() == 0) {
    largest = zeros(batch_dims_with(A, {1}), TensorOptions(S.dtype()));
  } else {
    largest = hermitian ? amax(S, std::vector<int64_t>{-1}, true) : narrow(S, -1, 0, 1);
  }
  const Tensor rank = sum(gt(S, rank_threshold(atol, rtol, largest)), std::vector<int64_t>{-1});
  return finish_out(rank, out, op);
}

}  // namespace linalg
}  // namespace native
}  // namespace ember
