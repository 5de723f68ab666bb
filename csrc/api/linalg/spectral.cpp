// Public ops of ember.linalg's spectral family: each decomposition runs the native op unless an
// input requires grad; then it runs the native op's checks (so errors still name the op called,
// and come before the out= refusal) and records the node (autograd/derivatives/linalg/spectral,
// linalg_polar). pinv, torch.pinverse, torch.qr and torch.svd are composites of public ops.
#include "api/linalg/spectral.h"

#include "api/autocast.h"
#include "api/compare.h"
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/linalg/common.h"
#include "api/matmul.h"
#include "api/reduce.h"
#include "api/shape_util.h"
#include "api/unary.h"
#include "api/views.h"
#include "autograd/derivatives/linalg/spectral.h"
#include "autograd/record.h"
#include "core/shape.h"
#include "ops/linalg/spectral_util.h"

namespace ember {

namespace {

// out= with an input that requires grad: PyTorch's refusal.
void refuse_outs(std::initializer_list<const Tensor*> outs, const std::vector<Tensor>& inputs,
                 const char* op) {
  for (const Tensor* o : outs) {
    if (o->defined()) autograd::check_out_arg(*o, inputs, op);
  }
}

}  // namespace

namespace linalg {

namespace nl = native::linalg;

// ---- eigh / eigvalsh -----------------------------------------------------------------------

std::tuple<Tensor, Tensor> eigh(const Tensor& A, const std::string& uplo, const Tensor& values_out,
                                const Tensor& vectors_out) {
  if (autocast::active() && !values_out.defined() && !vectors_out.defined()) {  // autocast: fp32
    const Tensor A2 = autocast::to_fp32(A);
    autocast::ExcludeGuard no_autocast;
    return linalg::eigh(A2, uplo);
  }
  if (!autograd::should_record(A)) return nl::eigh(A, uplo, values_out, vectors_out);
  constexpr const char* op = "linalg.eigh";
  const bool upper = nl::check_eigh_args(A, uplo, op);
  refuse_outs({&values_out, &vectors_out}, {A}, op);
  return derivatives::linalg_eigh(A, upper);
}

Tensor eigvalsh(const Tensor& A, const std::string& uplo, const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: float32
    const Tensor A2 = autocast::to_fp32(A);
    autocast::ExcludeGuard no_autocast;
    return linalg::eigvalsh(A2, uplo);
  }
  if (!autograd::should_record(A)) return nl::eigvalsh(A, uplo, out);
  constexpr const char* op = "linalg.eigvalsh";
  const bool upper = nl::check_eigh_args(A, uplo, op);
  refuse_outs({&out}, {A}, op);
  // The gradient needs the eigenvectors: computed through the recorded eigh, as PyTorch.
  return std::get<0>(derivatives::linalg_eigh(A, upper));
}

// ---- eig / eigvals -------------------------------------------------------------------------

std::tuple<Tensor, Tensor> eig(const Tensor& A, const Tensor& values_out,
                               const Tensor& vectors_out) {
  if (autocast::active() && !values_out.defined() && !vectors_out.defined()) {  // autocast: fp32
    const Tensor A2 = autocast::to_fp32(A);
    autocast::ExcludeGuard no_autocast;
    return linalg::eig(A2);
  }
  if (!autograd::should_record(A)) return nl::eig(A, values_out, vectors_out);
  constexpr const char* op = "linalg.eig";
  nl::check_eig_args(A, values_out, vectors_out, op);
  refuse_outs({&values_out, &vectors_out}, {A}, op);
  return derivatives::linalg_eig(A);
}

Tensor eigvals(const Tensor& A, const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: float32
    const Tensor A2 = autocast::to_fp32(A);
    autocast::ExcludeGuard no_autocast;
    return linalg::eigvals(A2);
  }
  if (!autograd::should_record(A)) return nl::eigvals(A, out);
  constexpr const char* op = "linalg.eigvals";
  nl::check_eig_args(A, Tensor(), Tensor(), op);
  refuse_outs({&out}, {A}, op);
  // The gradient needs the eigenvectors: computed through the recorded eig, as PyTorch.
  return std::get<0>(derivatives::linalg_eig(A));
}

// ---- svd / svdvals -------------------------------------------------------------------------

std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices,
                                       const std::optional<std::string>& driver,
                                       const Tensor& U_out, const Tensor& S_out,
                                       const Tensor& Vh_out) {
  if (autocast::active() && !U_out.defined() && !S_out.defined() && !Vh_out.defined()) {
    const Tensor A2 = autocast::to_fp32(A);  // autocast: float32
    autocast::ExcludeGuard no_autocast;
    return linalg::svd(A2, full_matrices, driver);
  }
  if (!autograd::should_record(A)) return nl::svd(A, full_matrices, driver, U_out, S_out, Vh_out);
  constexpr const char* op = "linalg.svd";
  nl::check_svd_args(A, driver, op);
  refuse_outs({&U_out, &S_out, &Vh_out}, {A}, op);
  return derivatives::linalg_svd(A, full_matrices);
}

Tensor svdvals(const Tensor& A, const std::optional<std::string>& driver, const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: float32
    const Tensor A2 = autocast::to_fp32(A);
    autocast::ExcludeGuard no_autocast;
    return linalg::svdvals(A2, driver);
  }
  if (!autograd::should_record(A)) return nl::svdvals(A, driver, out);
  constexpr const char* op = "linalg.svdvals";
  nl::check_svd_args(A, driver, op);
  refuse_outs({&out}, {A}, op);
  // The gradient needs U and Vh: computed through the recorded svd, as PyTorch.
  return std::get<1>(derivatives::linalg_svd(A, /*full_matrices=*/false));
}

// ---- qr and householder_product ------------------------------------------------------------

std::tuple<Tensor, Tensor> qr(const Tensor& A, const std::string& mode, const Tensor& Q_out,
                              const Tensor& R_out) {
  if (autocast::active() && !Q_out.defined() && !R_out.defined()) {  // autocast: float32
    const Tensor A2 = autocast::to_fp32(A);
    autocast::ExcludeGuard no_autocast;
    return linalg::qr(A2, mode);
  }
  if (!autograd::should_record(A)) return nl::qr(A, mode, Q_out, R_out);
  nl::check_qr_args(A, mode);
  refuse_outs({&Q_out, &R_out}, {A}, "linalg.qr");
  return derivatives::linalg_qr(A, mode);
}

Tensor householder_product(const Tensor& A, const Tensor& tau, const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: float32 (also torch.orgqr)
    const Tensor A2 = autocast::to_fp32(A), tau2 = autocast::to_fp32(tau);
    autocast::ExcludeGuard no_autocast;
    return linalg::householder_product(A2, tau2);
  }
  if (!autograd::should_record(A, tau)) return nl::householder_product(A, tau, out);
  nl::check_householder_product_args(A, tau);
  refuse_outs({&out}, {A, tau}, "linalg.householder_product");
  return derivatives::linalg_householder_product(A, tau);
}

// ---- lstsq ---------------------------------------------------------------------------------

LstsqResult lstsq(const Tensor& A, const Tensor& B, std::optional<double> rcond,
                  const std::optional<std::string>& driver) {
  if (autocast::active()) {  // autocast: float32
    const Tensor A2 = autocast::to_fp32(A), B2 = autocast::to_fp32(B);
    autocast::ExcludeGuard no_autocast;
    return linalg::lstsq(A2, B2, rcond, driver);
  }
  if (!autograd::should_record(A, B)) return nl::lstsq(A, B, rcond, driver);
  return derivatives::linalg_lstsq(A, B, rcond, nl::check_lstsq_args(A, B, driver));
}

// ---- matrix_sqrth and polar ----------------------------------------------------------------

Tensor matrix_sqrth(const Tensor& A) {
  if (!autograd::should_record(A)) return nl::matrix_sqrth(A);
  nl::check_matrix_sqrth_args(A);
  return derivatives::linalg_matrix_sqrth(A);
}

std::tuple<Tensor, Tensor> polar(const Tensor& A, const Tensor& U_out, const Tensor& H_out) {
  if (!autograd::should_record(A)) return nl::polar(A, U_out, H_out);
  nl::check_polar_args(A);
  refuse_outs({&U_out, &H_out}, {A}, "linalg.polar");
  return derivatives::linalg_polar(A);
}

// ---- matrix_rank ---------------------------------------------------------------------------

Tensor matrix_rank(const Tensor& A, const Tensor& atol, const Tensor& rtol, bool hermitian,
                   const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: float32 (an integer result)
    const Tensor A2 = autocast::to_fp32(A), atol2 = autocast::to_fp32(atol);
    const Tensor rtol2 = autocast::to_fp32(rtol);
    autocast::ExcludeGuard no_autocast;
    return nl::matrix_rank(A2, atol2, rtol2, hermitian);
  }
  return nl::matrix_rank(A, atol, rtol, hermitian, out);
}

// ---- pinv (a composite of svd / eigh, as PyTorch's) ----------------------------------------

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
  auto [atol, rtol] = nl::rank_tolerances(A, atol_in, rtol_in, op);
  Tensor result;
  if (A.numel() == 0) {
    auto [U, S, Vh] = linalg::svd(A, /*full_matrices=*/false);
    result = ember::matmul(ember::mul(ember::mH(Vh), ember::unsqueeze(ember::reciprocal(S), -2)),
                           ember::mH(U));
  } else if (!hermitian) {
    auto [U, S, Vh] = linalg::svd(A, /*full_matrices=*/false);
    // The cut-off only selects values: no gradient flows through it.
    const Tensor tol = nl::rank_threshold(atol, rtol, ember::narrow(S, -1, 0, 1));
    const Tensor S_pinv = ember::to_dtype(
        ember::where(ember::gt(S, tol), ember::reciprocal(S), zeros({}, TensorOptions(S.dtype()))),
        t);
    result = ember::matmul(ember::mul(ember::mH(Vh), ember::unsqueeze(S_pinv, -2)), ember::mH(U));
  } else {
    auto [L, V] = linalg::eigh(A);
    const Tensor L_abs = ember::abs(L);
    const Tensor tol =
        nl::rank_threshold(atol, rtol, ember::amax(L_abs, std::vector<int64_t>{-1}, true));
    const Tensor L_pinv = ember::to_dtype(ember::where(ember::gt(L_abs, tol), ember::reciprocal(L),
                                                       zeros({}, TensorOptions(L.dtype()))),
                                          t);
    result = ember::matmul(ember::mul(V, ember::unsqueeze(L_pinv, -2)), ember::mH(V));
  }
  return finish_out(result, out, op);
}

}  // namespace linalg

Tensor pinverse(const Tensor& A, double rcond) {
  // Autocast: float32, and the products inside pinv stay there (linalg.pinv itself is not on
  // PyTorch's list: its products are cast down).
  if (autocast::active()) {
    const Tensor A2 = autocast::to_fp32(A);
    autocast::ExcludeGuard no_autocast;
    return ember::pinverse(A2, rcond);
  }
  return linalg::pinv(A, Tensor(), scalar_tensor(Scalar(rcond), ScalarType::Float64));
}

std::tuple<Tensor, Tensor> geqrf(const Tensor& A, const Tensor& a_out, const Tensor& tau_out) {
  if (autocast::active() && !a_out.defined() && !tau_out.defined()) {  // autocast: float32
    const Tensor A2 = autocast::to_fp32(A);
    autocast::ExcludeGuard no_autocast;
    return ember::geqrf(A2);
  }
  if (!autograd::should_record(A)) return native::geqrf(A, a_out, tau_out);
  native::linalg::check_geqrf_args(A);
  refuse_outs({&a_out, &tau_out}, {A}, "geqrf");
  return derivatives::geqrf(A);
}

std::tuple<Tensor, Tensor> qr(const Tensor& A, bool some, const Tensor& Q_out,
                              const Tensor& R_out) {
  if (autocast::active() && !Q_out.defined() && !R_out.defined()) {  // autocast: float32
    const Tensor A2 = autocast::to_fp32(A);
    autocast::ExcludeGuard no_autocast;
    return ember::qr(A2, some);
  }
  return linalg::qr(A, some ? "reduced" : "complete", Q_out, R_out);
}

std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool some, bool compute_uv,
                                       const Tensor& U_out, const Tensor& S_out,
                                       const Tensor& V_out) {
  if (autocast::active() && !U_out.defined() && !S_out.defined() && !V_out.defined()) {
    const Tensor A2 = autocast::to_fp32(A);  // autocast: float32 (torch.svd)
    autocast::ExcludeGuard no_autocast;
    return ember::svd(A2, some, compute_uv);
  }
  constexpr const char* op = "svd";
  Tensor U, S, V;
  if (compute_uv) {
    Tensor Vh;
    std::tie(U, S, Vh) = linalg::svd(A, /*full_matrices=*/!some);
    V = ember::mH(Vh);
  } else {
    S = linalg::svdvals(A);
    const int64_t m = linalg::rows(A), n = linalg::cols(A);
    U = zeros(native::linalg::batch_dims_with(A, {m, m}), TensorOptions(A.dtype()));
    V = zeros(native::linalg::batch_dims_with(A, {n, n}), TensorOptions(A.dtype()));
  }
  if (U_out.defined() || S_out.defined() || V_out.defined()) {
    autograd::check_out_arg(U_out.defined() ? U_out : S_out.defined() ? S_out : V_out, {A}, op);
    return {finish_out(U, U_out, op), finish_out(S, S_out, op), finish_out(V, V_out, op)};
  }
  return {U, S, V};
}

}  // namespace ember
