// Derivatives of inv, solve, det, slogdet, the Cholesky ops and the triangular solves, with
// PyTorch's formulas (FunctionsManual.cpp). Where PyTorch reuses the forward's LU factors when
// no higher-order graph is wanted (grad mode off inside backward), so do these; with
// create_graph=True they call public ops (linalg_solve, ...), whose own nodes give the next
// order.
#include "autograd/derivatives/linalg/solve.h"

#include <complex>
#include <limits>

#include "api/binary.h"
#include "api/compare.h"
#include "api/complex.h"
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/join.h"
#include "api/linalg/common.h"
#include "api/matmul.h"
#include "api/range_factories.h"
#include "api/reduce.h"
#include "api/unary.h"
#include "api/views.h"
#include "autograd/grad_mode.h"
#include "autograd/record.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;
using linalg::LuFactors;

namespace {

bool grad_mode() {
  return autograd::GradMode::is_enabled();
}

// Runs the op with recording off.
template <typename F>
auto without_recording(F&& f) {
  autograd::NoGradGuard no_grad;
  return f();
}

void refuse_out(const Tensor& out1, const Tensor& out2, std::vector<Tensor> inputs,
                const char* op) {
  if (out1.defined() || out2.defined()) autograd::check_out_arg(out1, inputs, op);
}

// The factors as saved by a node: LU, pivots (saved tensors) and the transposed flag.
LuFactors factors(FunctionNode& n, size_t lu_index, bool transposed) {
  LuFactors f;
  f.LU = n.saved(lu_index);
  f.pivots = n.saved(lu_index + 1);
  f.transposed = transposed;
  return f;
}

void save_factors(FunctionNode& node, const LuFactors& f) {
  node.save(f.LU);
  node.save(f.pivots);
}

// d * I for a batch of scalars d: (..., n, n) with d on every diagonal.
Tensor scaled_identity(const Tensor& d, int64_t n) {
  DimVector shape(d.sizes());
  shape.push_back(n);
  return diag_embed(expand(unsqueeze(d, -1), shape));
}

double epsilon_of(ScalarType t) {
  return to_real(t) == ScalarType::Float32 ? std::numeric_limits<float>::epsilon()
                                           : std::numeric_limits<double>::epsilon();
}

}  // namespace

// ---- inverse -------------------------------------------------------------------------------

TensorPair linalg_inv_ex(const Tensor& A, const Tensor& inverse_out, const Tensor& info_out) {
  refuse_out(inverse_out, info_out, {A}, "linalg_inv_ex");
  auto node =
      autograd::new_node("LinalgInvExBackward0", {A}, [](FunctionNode& n, const variable_list& g) {
        if (!g[0].defined()) return variable_list{Tensor()};
        // -A^{-H} g A^{-H}
        const Tensor invH = mH(n.saved(0));
        return variable_list{neg(matmul(invH, matmul(g[0], invH)))};
      });
  TensorPair r = without_recording([&] { return native::linalg_inv_ex(A, false); });
  autograd::set_history_all(node, {r.first, r.second});
  node->save(r.first, /*is_output=*/true);
  return r;
}

// ---- solve ---------------------------------------------------------------------------------

TensorPair linalg_solve_ex(const Tensor& A, const Tensor& B, bool left, const Tensor& result_out,
                           const Tensor& info_out) {
  refuse_out(result_out, info_out, {A, B}, "linalg_solve_ex");
  const linalg::SolveResult s =
      without_recording([&] { return linalg::solve_with_factors(A, B, left, "linalg.solve"); });
  const bool vector_case = s.vector_case, transposed = s.factors.transposed;
  auto node = autograd::new_node(
      "LinalgSolveExBackward0", {A, B},
      [left, vector_case, transposed](FunctionNode& n, const variable_list& g) {
        variable_list r(2);
        const Tensor& gX = g[0];
        if (!gX.defined()) return r;
        const Tensor A = n.saved(0), X = n.saved(1);
        // gB = A^{-H} gX (or gX A^{-H}), gA = -gB X^H (or -X^H gB).
        Tensor gB;
        if (grad_mode()) {
          gB = ember::linalg_solve(mH(A), gX, left);
        } else {
          const LuFactors f = factors(n, 2, transposed);
          gB = linalg::lu_solve_matrices(f, vector_case ? unsqueeze(gX, -1) : gX, left,
                                         /*adjoint=*/true, "linalg.solve");
          if (vector_case) gB = squeeze(gB, {-1});
        }
        if (n.should_compute_output(0)) {
          const Tensor gBm = vector_case ? unsqueeze(gB, -1) : gB;
          const Tensor Xm = vector_case ? unsqueeze(X, -1) : X;
          r[0] = neg(left ? matmul(gBm, mH(Xm)) : matmul(mH(Xm), gBm));
        }
        if (n.should_compute_output(1)) r[1] = gB;
        return r;
      });
  autograd::set_history_all(node, {s.X, s.info});
  node->save(A);
  node->save(s.X, /*is_output=*/true);
  save_factors(*node, s.factors);
  return {s.X, s.info};
}

// ---- determinants --------------------------------------------------------------------------

namespace {

// The gradient of det at A: conj(det) g A^{-H}, the cofactor matrix scaled by g. det is C^1, so
// for a singular A the factors with each exactly-zero pivot nudged to eps give it (PyTorch's
// first-order path). With create_graph the solve is recorded; PyTorch takes singular matrices
// (|det| < 100 eps) through an SVD there, which this branch has no op for yet: those elements
// get the first-order value without a higher-order graph.
Tensor det_backward(const Tensor& g, const Tensor& det, const Tensor& A, const LuFactors& f) {
  const int64_t n = A.size(A.dim() - 1);
  const Tensor d = scaled_identity(mul(g, conj(det)), n);
  const double eps = epsilon_of(A.dtype());
  auto first_order = [&] {
    autograd::NoGradGuard no_grad;
    LuFactors nudged = f;
    nudged.LU = linalg::column_major_copy(f.LU, "linalg.det");
    Tensor diag = diagonal(nudged.LU, 0, -2, -1);
    Tensor fixed =
        where(eq(diag, scalar_tensor(0, diag.dtype())), scalar_tensor(eps, diag.dtype()), diag);
    copy_(diag, fixed);
    // The nudged factors' own determinant, sign(P) * prod(diag U): det(A) A^{-H} is the cofactor
    // matrix, a finite limit, but an exactly singular A has det(A) = 0, which would zero it.
    const Tensor swaps = sum(ne(f.pivots, arange(1, n + 1, 1, TensorOptions(f.pivots.dtype()))),
                             std::vector<int64_t>{-1});
    const Tensor sign = sub(scalar_tensor(1, ScalarType::Int64),
                            mul(ember::remainder(swaps, scalar_tensor(2, ScalarType::Int64)),
                                scalar_tensor(2, ScalarType::Int64)));
    const Tensor det_nudged = mul(prod(fixed, -1), to_dtype(sign, fixed.dtype()));
    const Tensor d_nudged = scaled_identity(mul(g, conj(det_nudged)), n);
    return linalg::lu_solve_matrices(nudged, d_nudged, /*left=*/true, /*adjoint=*/true,
                                     "linalg.det");
  };
  if (!grad_mode()) return first_order();
  const Tensor singular = lt(abs(det), scalar_tensor(100 * eps, to_real(det.dtype())));
  if (!any(singular).data<bool>()[0]) return ember::linalg_solve(mH(A), d, true);
  // Singular elements: replaced by the identity for the recorded solve, their first-order value
  // taken from the nudged factors.
  const Tensor mask = unsqueeze(unsqueeze(singular, -1), -1);
  const Tensor eye_n = eye(n, n, TensorOptions(A.dtype()));
  const Tensor regular = ember::linalg_solve(mH(where(mask, eye_n, A)), d, true);
  return where(mask, first_order(), regular);
}

}  // namespace

Tensor linalg_det(const Tensor& A, const Tensor& out) {
  refuse_out(out, Tensor(), {A}, "linalg_det");
  auto result = without_recording([&] { return linalg::det_with_factors(A); });
  const bool transposed = std::get<1>(result).transposed;
  auto node = autograd::new_node(
      "LinalgDetBackward0", {A}, [transposed](FunctionNode& n, const variable_list& g) {
        if (!g[0].defined()) return variable_list{Tensor()};
        return variable_list{det_backward(g[0], n.saved(1), n.saved(0), factors(n, 2, transposed))};
      });
  Tensor det = std::get<0>(result);
  autograd::set_history_all(node, {det});
  node->save(A);
  node->save(det, /*is_output=*/true);
  save_factors(*node, std::get<1>(result));
  return det;
}

TensorPair linalg_slogdet(const Tensor& A, const Tensor& sign_out, const Tensor& logabsdet_out) {
  refuse_out(sign_out, logabsdet_out, {A}, "linalg_slogdet");
  auto result = without_recording([&] { return linalg::slogdet_with_factors(A); });
  const bool transposed = std::get<2>(result).transposed;
  auto node = autograd::new_node(
      "LinalgSlogdetBackward0", {A}, [transposed](FunctionNode& n, const variable_list& g) {
        const Tensor A = n.saved(0);
        const bool complex = A.is_complex();
        // The sign of a real determinant is locally constant: only log|det| has a gradient.
        if (!g[1].defined() && (!complex || !g[0].defined())) return variable_list{Tensor()};
        // gA = A^{-H} g with g = g_logabsdet + i Im(conj(sign) g_sign): log|det| and the
        // sign's angle are the real and imaginary parts of the holomorphic log det.
        Tensor gs = g[1];
        if (complex) {
          if (gs.defined()) gs = to_dtype(gs, A.dtype());
          if (g[0].defined()) {
            const Tensor rot = mul(imag(mul(conj(n.saved(1)), g[0])),
                                   wrap_scalar(Scalar(std::complex<double>(0.0, 1.0))));
            gs = gs.defined() ? add(gs, rot) : to_dtype(rot, A.dtype());
          }
        }
        const Tensor d = scaled_identity(gs, A.size(A.dim() - 1));
        if (grad_mode()) return variable_list{ember::linalg_solve(mH(A), d, true)};
        return variable_list{linalg::lu_solve_matrices(factors(n, 2, transposed), d, true,
                                                       /*adjoint=*/true, "linalg.slogdet")};
      });
  Tensor sign = std::get<0>(result), logabsdet = std::get<1>(result);
  autograd::set_history_all(node, {sign, logabsdet});
  node->save(A);
  node->save(sign, /*is_output=*/true);
  save_factors(*node, std::get<2>(result));
  return {sign, logabsdet};
}

// ---- Cholesky ------------------------------------------------------------------------------

TensorPair linalg_cholesky_ex(const Tensor& A, bool upper, const Tensor& L_out,
                              const Tensor& info_out) {
  refuse_out(L_out, info_out, {A}, "linalg_cholesky_ex");
  auto node = autograd::new_node(
      "LinalgCholeskyExBackward0", {A}, [upper](FunctionNode& n, const variable_list& g) {
        if (!g[0].defined()) return variable_list{Tensor()};
        // Iain Murray (2016), arXiv 1602.07527, as PyTorch's cholesky_backward:
        // gA = L^{-H} Phi(L^H gL) L^{-1}, Phi taking the lower triangle with half its diagonal,
        // symmetrized.
        Tensor L = n.saved(0), gL = g[0];
        if (upper) {
          L = mH(L);
          gL = mH(gL);
        }
        Tensor gA = tril(matmul(mH(L), gL));
        gA = mul(add(gA, mH(tril(gA, -1))), scalar_tensor(0.5, to_real(gA.dtype())));
        gA = ember::linalg_solve_triangular(mH(L), gA, /*upper=*/true, /*left=*/true, false);
        gA = ember::linalg_solve_triangular(L, gA, /*upper=*/false, /*left=*/false, false);
        return variable_list{gA};
      });
  TensorPair r = without_recording([&] { return native::linalg_cholesky_ex(A, upper, false); });
  autograd::set_history_all(node, {r.first, r.second});
  node->save(r.first, /*is_output=*/true);
  return r;
}

Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper, const Tensor& out) {
  refuse_out(out, Tensor(), {B, L}, "cholesky_solve");
  auto node = autograd::new_node("CholeskySolveBackward0", {B, L},
                                 [upper](FunctionNode& n, const variable_list& g) {
                                   variable_list r(2);
                                   if (!g[0].defined()) return r;
                                   const Tensor L = n.saved(0), X = n.saved(1);
                                   const Tensor gB = ember::cholesky_solve(g[0], L, upper);
                                   if (n.should_compute_output(1)) {
                                     Tensor common = matmul(gB, mH(X));
                                     common = add(common, mH(common));
                                     r[1] = neg(upper ? matmul(L, common) : matmul(common, L));
                                   }
                                   if (n.should_compute_output(0)) r[0] = gB;
                                   return r;
                                 });
  Tensor X = without_recording([&] { return native::cholesky_solve(B, L, upper); });
  autograd::set_history_all(node, {X});
  node->save(L);
  node->save(X, /*is_output=*/true);
  return X;
}

Tensor cholesky_inverse(const Tensor& L, bool upper, const Tensor& out) {
  refuse_out(out, Tensor(), {L}, "cholesky_inverse");
  auto node = autograd::new_node(
      "CholeskyInverseBackward0", {L}, [upper](FunctionNode& n, const variable_list& g) {
        if (!g[0].defined()) return variable_list{Tensor()};
        const Tensor L = n.saved(0), inverse = n.saved(1);
        Tensor common = add(g[0], mH(g[0]));
        common = matmul(inverse, matmul(common, inverse));
        return variable_list{neg(upper ? matmul(L, common) : matmul(common, L))};
      });
  Tensor inverse = without_recording([&] { return native::cholesky_inverse(L, upper); });
  autograd::set_history_all(node, {inverse});
  node->save(L);
  node->save(inverse, /*is_output=*/true);
  return inverse;
}

// ---- triangular solves ---------------------------------------------------------------------

Tensor linalg_solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left,
                               bool unitriangular, const Tensor& out) {
  refuse_out(out, Tensor(), {A, B}, "linalg_solve_triangular");
  auto node = autograd::new_node(
      "LinalgSolveTriangularBackward0", {A, B},
      [upper, left, unitriangular](FunctionNode& n, const variable_list& g) {
        variable_list r(2);
        if (!g[0].defined()) return r;
        const Tensor A = n.saved(0), X = n.saved(1);
        // gB = A^{-H} g (or g A^{-H}); gA = -gB X^H (or -X^H gB) on A's triangle.
        const Tensor gB = ember::linalg_solve_triangular(mH(A), g[0], !upper, left, unitriangular);
        if (n.should_compute_output(0)) {
          const Tensor gA = neg(left ? matmul(gB, mH(X)) : matmul(mH(X), gB));
          const int64_t skip = unitriangular ? 1 : 0;
          r[0] = upper ? triu(gA, skip) : tril(gA, -skip);
        }
        if (n.should_compute_output(1)) r[1] = gB;
        return r;
      });
  Tensor X = without_recording(
      [&] { return native::linalg_solve_triangular(A, B, upper, left, unitriangular); });
  autograd::set_history_all(node, {X});
  node->save(A);
  node->save(X, /*is_output=*/true);
  return X;
}

TensorPair triangular_solve(const Tensor& b, const Tensor& A, bool upper, bool transpose,
                            bool unitriangular, const Tensor& solution_out,
                            const Tensor& coefficient_out) {
  refuse_out(solution_out, coefficient_out, {b, A}, "triangular_solve");
  auto node = autograd::new_node(
      "TriangularSolveBackward0", {b, A},
      [upper, transpose, unitriangular](FunctionNode& n, const variable_list& g) {
        variable_list r(2);
        const Tensor A = n.saved(0), X = n.saved(1);
        if (g[0].defined()) {
          const Tensor gb =
              std::get<0>(ember::triangular_solve(g[0], conj(A), upper, !transpose, unitriangular));
          if (n.should_compute_output(1)) {
            const Tensor gA = neg(transpose ? matmul(conj(X), mT(gb)) : matmul(gb, mH(X)));
            const int64_t skip = unitriangular ? 1 : 0;
            r[1] = upper ? triu(gA, skip) : tril(gA, -skip);
          }
          if (n.should_compute_output(0)) r[0] = gb;
        }
        // The cloned coefficient passes its gradient straight to A.
        if (g[1].defined() && n.should_compute_output(1)) {
          r[1] = r[1].defined() ? add(r[1], g[1]) : g[1];
        }
        return r;
      });
  TensorPair result = without_recording(
      [&] { return native::triangular_solve(b, A, upper, transpose, unitriangular); });
  autograd::set_history_all(node, {result.first, result.second});
  node->save(A);
  node->save(result.first, /*is_output=*/true);
  return result;
}

}  // namespace derivatives
}  // namespace ember
