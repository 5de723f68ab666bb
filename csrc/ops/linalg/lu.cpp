// linalg.lu_factor_ex / lu / lu_solve and lu_unpack (linalg.lu_factor is a composite of
// lu_factor_ex, in api/linalg/solve.cpp).
//
// pivot=False (LU without pivoting) runs on the CPU too, where PyTorch only has it on CUDA; its
// pivots are the identity 1..k so that lu_solve and lu_unpack accept them.
#include "core/shape.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/join.h"
#include "ops/linalg/common.h"
#include "ops/linalg/solve.h"
#include "ops/range_factories.h"
#include "ops/shape_util.h"
#include "ops/views.h"

namespace ember {
namespace native {

namespace linalg {

std::string describe_zero_pivot(int32_t info) {
  return str_cat("U[", info, ",", info,
                 "] is zero and using it on lu_solve would result in a division by zero. If you "
                 "still want to perform the factorization, consider calling linalg.lu(A, pivot) "
                 "or linalg.lu_factor_ex(A, pivot)");
}

void check_lu_input(const Tensor& A, const char* op) {
  EMBER_CHECK(A.dim() >= 2, "[", op,
              "] Expected tensor with 2 or more dimensions. Got size: ", torch_shape_str(A.sizes()),
              " instead");
  check_float_or_complex(A, op);
}

}  // namespace linalg

using namespace linalg;

namespace {

TensorTriple lu_factor_compute(const Tensor& A, bool pivot, const char* op) {
  const int64_t k = std::min(rows(A), cols(A));
  const DimVector batch = batch_shape(A);
  Tensor LU = work_copy(A, op);
  Tensor pivots = empty_int32(with_dims(batch, {k}), op);
  Tensor infos = empty_int32(batch, op);
  lu_factor_stub(A.device(), LU, pivots, infos, pivot);
  return {unpadded(LU, op), pivots, infos};
}

}  // namespace

TensorTriple linalg_lu_factor_ex(const Tensor& A, bool pivot, bool check_errors,
                                 const Tensor& LU_out, const Tensor& pivots_out,
                                 const Tensor& info_out) {
  const char* op = "linalg.lu_factor_ex";
  check_lu_input(A, op);
  check_out(LU_out, A.dtype(), op);
  check_out(pivots_out, ScalarType::Int32, op);
  check_out(info_out, ScalarType::Int32, op);
  auto [LU, pivots, infos] = lu_factor_compute(A, pivot, op);
  TensorTriple r = {finish_out(LU, LU_out, op), finish_out(pivots, pivots_out, op),
                    finish_out(infos, info_out, op)};
  if (check_errors) raise_for_infos(std::get<2>(r), A, op, describe_zero_pivot);
  return r;
}

// ---- lu_unpack -----------------------------------------------------------------------------

namespace {

void check_unpack_shapes(const Tensor& LU, const Tensor& pivots, bool unpack_pivots,
                         const char* op) {
  EMBER_CHECK(LU.dim() >= 2, "[", op, "] Expected tensor with 2 or more dimensions. Got size: ",
              torch_shape_str(LU.sizes()), " instead");
  if (!unpack_pivots) return;
  EMBER_CHECK(pivots.dtype() == ScalarType::Int32, "[", op,
              "] LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\nNote: "
              "this function is intended to be used with the output produced by "
              "torch.linalg.lu_factor");
  DimVector expected = batch_shape(LU);
  expected.push_back(std::min(rows(LU), cols(LU)));
  EMBER_CHECK_T(ValueError, pivots.sizes().equals(expected), "[", op,
                "] Expected LU_pivots to have shape ", torch_shape_str(expected), " but got ",
                torch_shape_str(pivots.sizes()), " instead.");
}

// Pivots must name rows of the factored matrix: checked before a kernel indexes with them.
void check_pivot_range(const Tensor& pivots, int64_t m, const char* message) {
  const Tensor p = contiguous(pivots);
  const int32_t* v = p.data<int32_t>();
  for (int64_t i = 0; i < p.numel(); ++i) {
    EMBER_CHECK(v[i] >= 1 && v[i] <= m, message);
  }
}

// L (unit lower, (.., m, k)) and U (upper, (.., k, n)) of a packed LU.
std::pair<Tensor, Tensor> unpack_data(const Tensor& LU) {
  const int64_t m = rows(LU), n = cols(LU), k = std::min(m, n);
  Tensor L = tril(narrow(LU, -1, 0, k), -1);
  L = add(L, eye(m, k, TensorOptions(LU.dtype())));
  Tensor U = triu(narrow(LU, -2, 0, k));
  return {L, U};
}

Tensor permutation_matrices(const Tensor& pivots, int64_t m, ScalarType dtype, const char* op) {
  DimVector shape = batch_shape(pivots, 1);
  shape.push_back(m);
  shape.push_back(m);
  Tensor P = empty_tensor(shape, dtype, Device(), op);
  lu_permutation_stub(pivots.device(), contiguous(pivots), P);
  return P;
}

}  // namespace

void linalg::check_lu_unpack_args(const Tensor& LU, const Tensor& pivots, bool unpack_pivots,
                                  const Tensor& P_out, const Tensor& L_out, const Tensor& U_out) {
  const char* op = "lu_unpack";
  check_unpack_shapes(LU, pivots, unpack_pivots, op);
  check_out(P_out, LU.dtype(), op);
  check_out(L_out, LU.dtype(), op);
  check_out(U_out, LU.dtype(), op);
  if (unpack_pivots) {
    check_pivot_range(pivots, rows(LU),
                      "[lu_unpack] pivots passed to lu_unpack must be between 1 and LU.size(-2) "
                      "inclusive.Did you properly pass the result of lu_factor?");
  }
}

TensorTriple lu_unpack(const Tensor& LU, const Tensor& pivots, bool unpack_data_flag,
                       bool unpack_pivots, const Tensor& P_out, const Tensor& L_out,
                       const Tensor& U_out) {
  const char* op = "lu_unpack";
  check_lu_unpack_args(LU, pivots, unpack_pivots, P_out, L_out, U_out);
  const TensorOptions opts(LU.dtype());
  Tensor P =
      unpack_pivots ? permutation_matrices(pivots, rows(LU), LU.dtype(), op) : empty({0}, opts);
  Tensor L = empty({0}, opts), U = empty({0}, opts);
  if (unpack_data_flag) std::tie(L, U) = unpack_data(LU);
  return {finish_out(P, P_out, op), finish_out(L, L_out, op), finish_out(U, U_out, op)};
}

// ---- linalg.lu -----------------------------------------------------------------------------

TensorTriple linalg_lu(const Tensor& A, bool pivot, const Tensor& P_out, const Tensor& L_out,
                       const Tensor& U_out) {
  const char* op = "linalg.lu";
  check_lu_input(A, op);
  check_out(P_out, A.dtype(), op);
  check_out(L_out, A.dtype(), op);
  check_out(U_out, A.dtype(), op);
  auto [LU, pivots, infos] = lu_factor_compute(A, pivot, op);
  (void)infos;
  auto [L, U] = unpack_data(LU);
  Tensor P = pivot ? permutation_matrices(pivots, rows(A), A.dtype(), op)
                   : empty(with_dims(batch_shape(A), {0, 0}), TensorOptions(A.dtype()));
  return {finish_out(P, P_out, op), finish_out(contiguous(L), L_out, op),
          finish_out(contiguous(U), U_out, op)};
}

// ---- lu_solve ------------------------------------------------------------------------------

void linalg::check_lu_solve_args(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left,
                                 const Tensor& out) {
  const char* op = "linalg.lu_solve";
  check_at_least_2d(LU, op, "LU");
  check_square(LU, op);
  check_at_least_2d(B, op, "B");
  check_float_or_complex(LU, op);
  EMBER_CHECK(LU.dtype() == B.dtype(), "[", op,
              "] Expected LU and B to have the same dtype, but found LU of type ",
              torch_type_name(LU.dtype()), " and B of type ", torch_type_name(B.dtype()),
              " instead");
  EMBER_CHECK(pivots.dtype() == ScalarType::Int32, "[", op,
              "] pivots should be a Tensor of scalar type torch.int32");
  const int64_t n = rows(LU);
  EMBER_CHECK(pivots.dim() >= 1 && pivots.size(pivots.dim() - 1) == n, "[", op,
              "] Number of pivots per batch should be same as the dimension of the matrix");
  DimVector expected = batch_shape(LU);
  expected.push_back(n);
  EMBER_CHECK(pivots.sizes().equals(expected), "[", op,
              "] Expected LU.shape[:-1] and pivots.shape to be the same, but got pivots with "
              "shape ",
              torch_shape_str(pivots.sizes()), " instead");
  EMBER_CHECK(left ? rows(B) == n : cols(B) == n, "[", op,
              "] Incompatible shapes of A and B for the equation ", left ? "AX = B" : "XA = B",
              " (", n, "x", n, " and ", rows(B), "x", cols(B), ")");
  check_out(out, B.dtype(), op);
  check_pivot_range(pivots, n,
                    "[linalg.lu_solve] Pivots given to lu_solve must all be between 1 and "
                    "LU.size(-2). Did you properly pass the result of lu_factor?");
}

Tensor linalg_lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left,
                       bool adjoint, const Tensor& out) {
  const char* op = "linalg.lu_solve";
  check_lu_solve_args(LU, pivots, B, left, out);
  LuFactors f;
  f.LU = column_major(LU, op);
  f.pivots = contiguous(pivots);
  return finish_out(lu_solve_matrices(f, B, left, adjoint, op), out, op);
}

}  // namespace native
}  // namespace ember
