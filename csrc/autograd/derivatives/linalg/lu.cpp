// Derivatives of the LU family: lu_factor(_ex), lu, lu_solve, lu_unpack (PyTorch's
// lu_factor_ex_backward, linalg_lu_backward, linalg_lu_solve_LU, lu_unpack_backward), and the
// LDL ops, which PyTorch does not differentiate except ldl_solve with respect to B here.
#include "api/complex.h"
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/join.h"
#include "api/linalg/common.h"
#include "api/matmul.h"
#include "api/unary.h"
#include "api/views.h"
#include "autograd/derivatives/common.h"
#include "autograd/derivatives/linalg/solve.h"
#include "autograd/record.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

template <typename F>
auto without_recording(F&& f) {
  autograd::NoGradGuard no_grad;
  return f();
}

void refuse_outs(std::initializer_list<Tensor> outs, const std::vector<Tensor>& inputs,
                 const char* op) {
  for (const Tensor& o : outs) {
    if (o.defined()) autograd::check_out_arg(o, inputs, op);
  }
}

Tensor add_defined(const Tensor& a, const Tensor& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return add(a, b);
}

// t's shape with the last dim (or the row dim) replaced.
DimVector with_last(const Tensor& t, int64_t size) {
  DimVector s(t.sizes());
  s[s.size() - 1] = size;
  return s;
}
DimVector with_rows(const Tensor& t, int64_t size) {
  DimVector s(t.sizes());
  s[s.size() - 2] = size;
  return s;
}

Tensor solve_tri(const Tensor& A, const Tensor& B, bool upper, bool left, bool unit = false) {
  return ember::linalg_solve_triangular(A, B, upper, left, unit);
}

}  // namespace

Tensor linalg_lu_backward(const Tensor& L_grad, const Tensor& U_grad, const Tensor& P,
                          const Tensor& L, const Tensor& U, bool pivot) {
  if (!L_grad.defined() && !U_grad.defined()) return Tensor();
  const int64_t m = L.size(L.dim() - 2), n = U.size(U.dim() - 1), k = std::min(m, n);
  if (m == n) {
    // A_grad = P L^{-H} [L^H L_grad o 1_L + U_grad U^H o 1_U] U^{-H}
    Tensor A_grad = L_grad.defined() ? tril(matmul(mH(L), L_grad), -1) : Tensor();
    if (U_grad.defined()) A_grad = add_defined(A_grad, triu(matmul(U_grad, mH(U))));
    A_grad = solve_tri(mH(U), A_grad, /*upper=*/false, /*left=*/false);
    A_grad = solve_tri(mH(L), A_grad, /*upper=*/true, /*left=*/true, /*unit=*/true);
    return pivot ? matmul(P, A_grad) : A_grad;
  }
  if (m < n) {
    // Wide: A1_grad = P L^{-H} [U1_grad + (L^H L_grad o 1_L - U_grad U^H o 1_U) U1^{-H}],
    // A2_grad = P L^{-H} U2_grad.
    const Tensor U1 = narrow(U, -1, 0, k);
    Tensor A_grad = L_grad.defined() ? matmul(mH(L), L_grad) : Tensor();
    if (U_grad.defined()) {
      const Tensor t = matmul(triu(U_grad), mH(U));
      A_grad = A_grad.defined() ? sub(A_grad, t) : neg(t);
    }
    A_grad = solve_tri(mH(U1), tril(A_grad, -1), /*upper=*/false, /*left=*/false);
    if (U_grad.defined()) {
      A_grad = cat({add(A_grad, triu(narrow(U_grad, -1, 0, k))), narrow(U_grad, -1, k, n - k)}, -1);
    }
    A_grad = solve_tri(mH(L), A_grad, /*upper=*/true, /*left=*/true, /*unit=*/true);
    if (!U_grad.defined()) {
      A_grad = cat({A_grad, zeros_for(narrow(U, -1, k, n - k).sizes(), U)}, -1);
    }
    return pivot ? matmul(P, A_grad) : A_grad;
  }
  // Tall: A1_grad = P [L1^{-H} [L1_grad + (U_grad U^H o 1_U - L^H L_grad o 1_L) U^{-H}]],
  // A2_grad = P L2_grad U^{-H}.
  const Tensor L1 = narrow(L, -2, 0, k);
  Tensor A_grad = U_grad.defined() ? matmul(U_grad, mH(U)) : Tensor();
  if (L_grad.defined()) {
    const Tensor t = matmul(mH(L), tril(L_grad, -1));
    A_grad = A_grad.defined() ? sub(A_grad, t) : neg(t);
  }
  A_grad = solve_tri(mH(L1), triu(A_grad), /*upper=*/true, /*left=*/true, /*unit=*/true);
  if (L_grad.defined()) {
    A_grad =
        cat({add(A_grad, tril(narrow(L_grad, -2, 0, k), -1)), narrow(L_grad, -2, k, m - k)}, -2);
  }
  A_grad = solve_tri(mH(U), A_grad, /*upper=*/false, /*left=*/false);
  if (!L_grad.defined()) {
    A_grad = cat({A_grad, zeros_for(narrow(L, -2, k, m - k).sizes(), L)}, -2);
  }
  return pivot ? matmul(P, A_grad) : A_grad;
}

TensorTriple linalg_lu_factor_ex(const Tensor& A, bool pivot, const Tensor& LU_out,
                                 const Tensor& pivots_out, const Tensor& info_out) {
  refuse_outs({LU_out, pivots_out, info_out}, {A}, "linalg_lu_factor_ex");
  auto node = autograd::new_node(
      "LinalgLuFactorExBackward0", {A}, [pivot](FunctionNode& n, const variable_list& g) {
        if (!g[0].defined()) return variable_list{Tensor()};
        const Tensor LU = n.saved(0);
        auto [P, L, U] = ember::lu_unpack(LU, n.saved(1), true, pivot);
        const int64_t k = std::min(LU.size(LU.dim() - 2), LU.size(LU.dim() - 1));
        return variable_list{
            linalg_lu_backward(narrow(g[0], -1, 0, k), narrow(g[0], -2, 0, k), P, L, U, pivot)};
      });
  TensorTriple r = without_recording([&] { return native::linalg_lu_factor_ex(A, pivot, false); });
  autograd::set_history_all(node, {std::get<0>(r), std::get<1>(r), std::get<2>(r)});
  node->save(std::get<0>(r), /*is_output=*/true);
  node->save(std::get<1>(r));
  return r;
}

TensorTriple linalg_lu(const Tensor& A, bool pivot, const Tensor& P_out, const Tensor& L_out,
                       const Tensor& U_out) {
  refuse_outs({P_out, L_out, U_out}, {A}, "linalg_lu");
  auto node = autograd::new_node(
      "LinalgLuBackward0", {A}, [pivot](FunctionNode& n, const variable_list& g) {
        return variable_list{
            linalg_lu_backward(g[1], g[2], n.saved(0), n.saved(1), n.saved(2), pivot)};
      });
  TensorTriple r = without_recording([&] { return native::linalg_lu(A, pivot); });
  // P is a constant of A (piecewise): it gets no history, as in PyTorch.
  autograd::set_history_all(node, {Tensor(), std::get<1>(r), std::get<2>(r)});
  node->save(std::get<0>(r));
  node->save(std::get<1>(r), /*is_output=*/true);
  node->save(std::get<2>(r), /*is_output=*/true);
  return r;
}

namespace {

// PyTorch's linalg_lu_solve_LU: the gradient of X = lu_solve(LU, pivots, B) with respect to the
// packed LU (left / adjoint select op_1(A) X = B or X op_1(A) = B).
Tensor lu_solve_LU_backward(const Tensor& gX, const Tensor& LU, const Tensor& pivots,
                            const Tensor& X, bool left, bool adjoint) {
  auto [P, L, U] = ember::lu_unpack(LU, pivots, true, left == adjoint);
  if (left != adjoint) {
    // gR = U^{-H} op_2(-gX) op_2(X)^H, gL = (L^{-H} gR U^H).tril(-1)
    const Tensor gR =
        solve_tri(mH(U), neg(matmul(left ? gX : mH(gX), left ? mH(X) : X)), /*upper=*/false,
                  /*left=*/true);
    const Tensor gL =
        tril(solve_tri(mH(L), matmul(gR, mH(U)), /*upper=*/true, /*left=*/true, /*unit=*/true), -1);
    return add(gL, triu(gR));
  }
  // gR = -P^T op_3(X) op_1(op_2(gX)) P, then gR L^{-H}; gU = (L^H gR U^{-H}).triu()
  Tensor gR = neg(matmul(matmul(matmul(mT(P), left ? X : mH(X)), left ? mH(gX) : gX), P));
  gR = solve_tri(mH(L), gR, /*upper=*/true, /*left=*/false, /*unit=*/true);
  const Tensor gU = triu(solve_tri(mH(U), matmul(mH(L), gR), /*upper=*/false, /*left=*/false));
  return add(tril(gR, -1), gU);
}

}  // namespace

Tensor linalg_lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left,
                       bool adjoint, const Tensor& out) {
  refuse_outs({out}, {LU, B}, "linalg_lu_solve");
  auto node = autograd::new_node(
      "LinalgLuSolveBackward0", {LU, B}, [left, adjoint](FunctionNode& n, const variable_list& g) {
        variable_list r(2);
        if (!g[0].defined()) return r;
        const Tensor LU = n.saved(0), pivots = n.saved(1), X = n.saved(2);
        if (n.should_compute_output(1)) {
          r[1] = ember::linalg_lu_solve(LU, pivots, g[0], left, !adjoint);
        }
        if (n.should_compute_output(0)) {
          r[0] = lu_solve_LU_backward(g[0], LU, pivots, X, left, adjoint);
        }
        return r;
      });
  Tensor X =
      without_recording([&] { return native::linalg_lu_solve(LU, pivots, B, left, adjoint); });
  autograd::set_history_all(node, {X});
  node->save(LU);
  node->save(pivots);
  node->save(X, /*is_output=*/true);
  return X;
}

TensorTriple lu_unpack(const Tensor& LU, const Tensor& pivots, bool unpack_data, bool unpack_pivots,
                       const Tensor& P_out, const Tensor& L_out, const Tensor& U_out) {
  refuse_outs({P_out, L_out, U_out}, {LU}, "lu_unpack");
  const int64_t m = LU.size(LU.dim() - 2), n = LU.size(LU.dim() - 1), k = std::min(m, n);
  auto node = autograd::new_node(
      "LuUnpackBackward0", {LU}, [m, n, k](FunctionNode& self, const variable_list& g) {
        const Tensor& L_grad = g[1];
        const Tensor& U_grad = g[2];
        if (!L_grad.defined() && !U_grad.defined()) return variable_list{Tensor()};
        const Tensor Lg = L_grad.defined() ? tril(L_grad, -1) : Tensor();
        const Tensor Ug = U_grad.defined() ? triu(U_grad) : Tensor();
        if (m == n) return variable_list{add_defined(Lg, Ug)};
        if (m < n) {
          // U is (k, n) = LU's shape; L's (m, k) part lands on its first k columns.
          if (!Lg.defined()) return variable_list{Ug};
          if (!Ug.defined()) {
            return variable_list{cat({Lg, zeros_for(with_last(Lg, n - k), Lg)}, -1)};
          }
          return variable_list{cat({add(narrow(Ug, -1, 0, k), Lg), narrow(Ug, -1, k, n - k)}, -1)};
        }
        if (!Ug.defined()) return variable_list{Lg};
        if (!Lg.defined()) {
          return variable_list{cat({Ug, zeros_for(with_rows(Ug, m - k), Ug)}, -2)};
        }
        return variable_list{cat({add(narrow(Lg, -2, 0, k), Ug), narrow(Lg, -2, k, m - k)}, -2)};
      });
  TensorTriple r =
      without_recording([&] { return native::lu_unpack(LU, pivots, unpack_data, unpack_pivots); });
  autograd::set_history_all(node, {Tensor(), std::get<1>(r), std::get<2>(r)});
  return r;
}

// ---- LDL -----------------------------------------------------------------------------------

TensorTriple linalg_ldl_factor_ex(const Tensor& A, bool hermitian, const Tensor& LD_out,
                                  const Tensor& pivots_out, const Tensor& info_out) {
  refuse_outs({LD_out, pivots_out, info_out}, {A}, "linalg_ldl_factor_ex");
  // PyTorch has no derivative for the Bunch-Kaufman factorization: its node raises when reached.
  auto node = autograd::new_node(
      "NotImplemented", {A}, [](FunctionNode&, const variable_list&) -> variable_list {
        throw Error("derivative for aten::linalg_ldl_factor_ex is not implemented");
      });
  TensorTriple r =
      without_recording([&] { return native::linalg_ldl_factor_ex(A, hermitian, false); });
  autograd::set_history_all(node, {std::get<0>(r), std::get<1>(r), std::get<2>(r)});
  return r;
}

Tensor linalg_ldl_solve(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian,
                        const Tensor& out) {
  refuse_outs({out}, {LD, B}, "linalg_ldl_solve");
  // X = A^{-1} B with A symmetric (A^H = conj(A)) or Hermitian: gB = A^{-H} gX. PyTorch defines
  // no derivative here at all; the one with respect to LD stays undefined, as there.
  auto node = autograd::new_node(
      "LinalgLdlSolveBackward0", {LD, B}, [hermitian](FunctionNode& n, const variable_list& g) {
        variable_list r(2);
        if (!g[0].defined()) return r;
        if (n.should_compute_output(0)) {
          throw Error(
              "derivative for aten::linalg_ldl_solve with respect to LD is not "
              "implemented");
        }
        const Tensor LD = n.saved(0), pivots = n.saved(1);
        if (hermitian || !LD.is_complex()) {
          r[1] = ember::linalg_ldl_solve(LD, pivots, g[0], hermitian);
        } else {
          r[1] = conj(ember::linalg_ldl_solve(LD, pivots, conj(g[0]), false));
        }
        return r;
      });
  Tensor X = without_recording([&] { return native::linalg_ldl_solve(LD, pivots, B, hermitian); });
  autograd::set_history_all(node, {X});
  node->save(LD);
  node->save(pivots);
  return X;
}

}  // namespace derivatives
}  // namespace ember
