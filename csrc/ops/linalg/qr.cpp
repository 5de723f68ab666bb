// linalg.qr, linalg.householder_product and torch.geqrf. Q and R come back as column-major
// matrices, as PyTorch's. (torch.qr, the old API, is public only: api/linalg/spectral.cpp.)
#include "ops/creation.h"
#include "ops/join.h"
#include "ops/linalg/common.h"
#include "ops/linalg/spectral.h"
#include "ops/linalg/spectral_util.h"
#include "ops/shape_util.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(linalg_geqrf_stub, GeqrfFn);
EMBER_DEFINE_STUB(linalg_orgqr_stub, OrgqrFn);
EMBER_DEFINE_STUB(linalg_qr_small_stub, QrSmallFn);

namespace linalg {

namespace {

void check_mode(const std::string& mode) {
  EMBER_CHECK(mode == "reduced" || mode == "complete" || mode == "r",
              "[linalg.qr] qr received unrecognized mode '", mode,
              "' but expected one of 'reduced' (default), 'r', or 'complete'");
}

// LAPACK reports only illegal arguments here, which Ember never passes.
std::string describe_info(int info) {
  return str_cat("LAPACK reported error code ", info);
}

// Q from reflectors: `Q` holds them in its first tau.size(-1) columns.
void expand_reflectors(const Tensor& Q, const Tensor& tau, const char* op) {
  Tensor infos = zeros({batch_count(Q)}, TensorOptions(ScalarType::Int32));
  if (Q.numel() > 0) linalg_orgqr_stub(Q.device(), Q, tau, infos);
  raise_for_infos(infos, Q, op, describe_info);
}

}  // namespace

// The compact QR of A (column-major m x n with R above and the reflectors below, tau), and R
// (R_rows x n, column-major) when R_rows > 0.
std::tuple<Tensor, Tensor, Tensor> compact_qr(const Tensor& A, const char* op, int64_t R_rows) {
  Tensor W = column_major_copy(A, op);
  Tensor tau =
      empty(batch_dims_with(A, {std::min(rows(A), cols(A))}), TensorOptions(A.dtype(), A.device()));
  Tensor R;
  if (R_rows > 0) {
    R = empty_column_major(batch_dims_with(A, {R_rows, cols(A)}), A.dtype(), op);
    if (W.numel() == 0) zero_fresh(R);
  }
  Tensor infos = zeros({batch_count(A)}, TensorOptions(ScalarType::Int32));
  if (W.numel() > 0) linalg_geqrf_stub(A.device(), W, tau, R, infos);
  raise_for_infos(infos, A, op, describe_info);
  return {W, tau, R};
}

std::tuple<Tensor, Tensor> qr_unrecorded(const Tensor& A, const std::string& mode, const char* op) {
  const int64_t m = rows(A), n = cols(A), k = std::min(m, n);
  const bool complete = mode == "complete";
  const bool real = A.dtype() == ScalarType::Float32 || A.dtype() == ScalarType::Float64;
  if (mode == "reduced" && m >= n && A.numel() > 0 && real && m * n <= kQrSmallMaxElements) {
    // Small real matrices: one pass per matrix (linalg_qr_small_stub), no column-major copy.
    Tensor Q = empty_column_major(A.sizes(), A.dtype(), op);
    Tensor R = empty_column_major(batch_dims_with(A, {n, n}), A.dtype(), op);
    const Tensor src = A.is_contiguous() || is_column_major_batch(A) ? A : contiguous(A);
    if (linalg_qr_small_stub(A.device(), src, Q, R)) return {Q, R};
  }
  // R: the upper triangle of the first k rows (all m rows for 'complete'), column-major.
  auto [W, tau, R] = compact_qr(A, op, complete ? m : k);
  if (!R.defined()) R = empty_column_major(batch_dims_with(A, {0, n}), A.dtype(), op);
  if (mode == "r") return {empty({0}, TensorOptions(A.dtype(), A.device())), R};
  if (!complete && m >= n) {
    // Q has W's shape: expand the reflectors in place.
    expand_reflectors(W, tau, op);
    return {W, R};
  }
  Tensor Q = empty_column_major(batch_dims_with(A, {m, complete ? m : k}), A.dtype(), op);
  Tensor reflectors = narrow(Q, Q.dim() - 1, 0, k);
  copy_(reflectors, narrow(W, W.dim() - 1, 0, k));
  expand_reflectors(Q, tau, op);
  return {Q, R};
}

void check_qr_args(const Tensor& A, const std::string& mode) {
  constexpr const char* op = "linalg.qr";
  check_at_least_2d(A, op);
  if (!is_floating(A.dtype()) && !is_complex(A.dtype())) {
    check_float_or_complex_input(A, op, "geqrf_cpu");
  }
  check_lapack_dtype(A, op, "geqrf_cpu");
  check_mode(mode);
}

std::tuple<Tensor, Tensor> qr(const Tensor& A, const std::string& mode, const Tensor& Q_out,
                              const Tensor& R_out) {
  constexpr const char* op = "linalg.qr";
  check_qr_args(A, mode);
  auto [Q, R] = qr_unrecorded(A, mode, op);
  return {finish_out(Q, Q_out, op), finish_out(R, R_out, op)};
}

Tensor householder_product_unrecorded(const Tensor& A, const Tensor& tau) {
  constexpr const char* op = "linalg.householder_product";
  Tensor Q = column_major_copy(A, op);
  expand_reflectors(Q, contiguous(tau), op);
  return Q;
}

void check_householder_product_args(const Tensor& A, const Tensor& tau) {
  constexpr const char* prefix = "[linalg.householder_product] ";
  EMBER_CHECK(A.dim() >= 2, prefix, "input must have at least 2 dimensions.");
  EMBER_CHECK(rows(A) >= cols(A), prefix,
              "input.shape[-2] must be greater than or equal to input.shape[-1]");
  EMBER_CHECK(cols(A) >= tau.size(tau.dim() - 1), prefix,
              "input.shape[-1] must be greater than or equal to tau.shape[-1]");
  EMBER_CHECK(A.dim() - tau.dim() == 1, prefix,
              "Expected tau to have one dimension less than input, but got tau.ndim equal to ",
              tau.dim(), " and input.ndim is equal to ", A.dim());
  const DimVector batch = batch_dims_with(A, IntArrayRef());
  DimVector tau_batch(tau.sizes());
  tau_batch.pop_back();
  if (!(batch == tau_batch)) {
    std::string got = "[";
    for (size_t i = 0; i < tau_batch.size(); ++i) got += str_cat(i ? ", " : "", tau_batch[i]);
    throw Error(str_cat(
        prefix, "Expected batch dimensions of tau to be equal to input.shape[:-2], but got ", got,
        "]"));
  }
  EMBER_CHECK(tau.dtype() == A.dtype(), prefix, "tau dtype ", torch_type_name(tau.dtype()),
              " does not match input dtype ", torch_type_name(A.dtype()));
  check_lapack_dtype(A, "linalg.householder_product", "orgqr_cpu");
}

Tensor householder_product(const Tensor& A, const Tensor& tau, const Tensor& out) {
  check_householder_product_args(A, tau);
  return finish_out(householder_product_unrecorded(A, tau), out, "linalg.householder_product");
}

}  // namespace linalg

void linalg::check_geqrf_args(const Tensor& A) {
  EMBER_CHECK(A.dim() >= 2, "[geqrf] input must have at least 2 dimensions.");
  check_lapack_dtype(A, "geqrf", "geqrf_cpu");
}

std::tuple<Tensor, Tensor> geqrf(const Tensor& A, const Tensor& a_out, const Tensor& tau_out) {
  constexpr const char* op = "geqrf";
  linalg::check_geqrf_args(A);
  auto [W, tau, R] = linalg::compact_qr(A, op);
  return {finish_out(W, a_out, op), finish_out(tau, tau_out, op)};
}

}  // namespace native
}  // namespace ember
