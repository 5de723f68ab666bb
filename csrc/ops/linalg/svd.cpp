// linalg.svd and linalg.svdvals: A = U diag(S) Vh with S descending. (torch.svd, the old API, is
// a composite of public ops in api/linalg/spectral.cpp.)
#include "ops/creation.h"
#include "ops/linalg/common.h"
#include "ops/linalg/spectral.h"
#include "ops/linalg/spectral_util.h"
#include "ops/range_factories.h"
#include "ops/shape_util.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(linalg_svd_stub, SvdFn);

namespace linalg {

void check_svd_args(const Tensor& A, const std::optional<std::string>& driver, const char* op) {
  check_at_least_2d(A, op);
  check_float_or_complex_input(A, op, "linalg_svd_cpu");
  EMBER_CHECK(!driver.has_value(), "[", op,
              "] keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER "
              "backend.");
}

namespace {

std::string describe_svd_info(int info) {
  if (info == -4) {
    return "The algorithm failed to converge because the input matrix contained non-finite "
           "values.";
  }
  return str_cat(
      "The algorithm failed to converge because the input matrix is ill-conditioned or has too "
      "many repeated singular values (error code: ",
      info, ").");
}

// The identity's leading rows x cols block written into every matrix of `t` (the factors of an
// SVD with no singular values, as PyTorch returns them).
void fill_identity(Tensor& t) {
  if (t.numel() == 0) return;
  Tensor eye_block = eye(rows(t), cols(t), TensorOptions(t.dtype()));
  copy_(t, eye_block);
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> svd_unrecorded(const Tensor& A, bool full_matrices,
                                                  bool compute_uv, const char* op) {
  const int64_t m = rows(A), n = cols(A), k = std::min(m, n);
  Tensor work = column_major_copy(A, op);
  Tensor S = empty(batch_dims_with(A, {k}), TensorOptions(to_real(A.dtype())));
  Tensor U, Vh;
  char jobz = 'N';
  if (compute_uv) {
    jobz = full_matrices ? 'A' : 'S';
    U = empty_column_major(batch_dims_with(A, {m, full_matrices ? m : k}), A.dtype(), op);
    Vh = empty_column_major(batch_dims_with(A, {full_matrices ? n : k, n}), A.dtype(), op);
  }
  Tensor infos = zeros({batch_count(A)}, TensorOptions(ScalarType::Int32));
  if (A.numel() > 0) {
    linalg_svd_stub(A.device(), work, U, S, Vh, infos, jobz);
  } else if (compute_uv) {
    fill_identity(U);
    fill_identity(Vh);
  }
  raise_for_infos(infos, A, op, describe_svd_info);
  return {U, S, Vh};
}

std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices,
                                       const std::optional<std::string>& driver,
                                       const Tensor& U_out, const Tensor& S_out,
                                       const Tensor& Vh_out) {
  constexpr const char* op = "linalg.svd";
  check_svd_args(A, driver, op);
  auto [U, S, Vh] = svd_unrecorded(A, full_matrices, /*compute_uv=*/true, op);
  return {finish_out(U, U_out, op), finish_out(S, S_out, op), finish_out(Vh, Vh_out, op)};
}

Tensor svdvals(const Tensor& A, const std::optional<std::string>& driver, const Tensor& out) {
  constexpr const char* op = "linalg.svdvals";
  check_svd_args(A, driver, op);
  return finish_out(std::get<1>(svd_unrecorded(A, false, /*compute_uv=*/false, op)), out, op);
}

}  // namespace linalg
}  // namespace native
}  // namespace ember
