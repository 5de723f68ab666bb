// linalg.ldl_factor_ex / ldl_solve (LAPACK's sytrf / hetrf and sytrs / hetrs semantics, lower
// triangle). linalg.ldl_factor is a composite of ldl_factor_ex, in api/linalg/solve.cpp.
#include "core/shape.h"
#include "ops/linalg/common.h"
#include "ops/linalg/solve.h"
#include "ops/shape_util.h"
#include "ops/views.h"

namespace ember {
namespace native {

using namespace linalg;

std::string linalg::describe_singular_d(int32_t info) {
  return str_cat(
      "The factorization has been completed, but the block diagonal matrix D is "
      "exactly singular (D[",
      info, ",", info, "] is zero), so it cannot be used to solve a system of equations.");
}

namespace {

TensorTriple ldl_compute(const Tensor& A, bool hermitian, const char* op) {
  const int64_t n = rows(A);
  const DimVector batch = batch_shape(A);
  Tensor LD = column_major_copy(A, op);
  Tensor pivots = empty_int32(with_dims(batch, {n}), op);
  Tensor infos = empty_int32(batch, op);
  ldl_factor_stub(A.device(), LD, pivots, infos, hermitian);
  return {LD, pivots, infos};
}

// ldl_solve reads pivots block by block: each must name a row, and a negative one (a 2x2 block)
// must be repeated in the next position, or the kernel would read past the matrix.
void check_ldl_pivots(const Tensor& pivots, int64_t n, const char* op) {
  const int32_t* p = pivots.data<int32_t>();
  const int64_t batch = n == 0 ? 0 : pivots.numel() / n;
  for (int64_t b = 0; b < batch; ++b) {
    const int32_t* pb = p + b * n;
    for (int64_t k = 0; k < n;) {
      const int32_t v = pb[k];
      const bool ok = v != 0 && std::abs(static_cast<int64_t>(v)) <= n &&
                      (v > 0 || (k + 1 < n && pb[k + 1] == v));
      EMBER_CHECK(ok, "[", op,
                  "] Pivots given to ldl_solve must all satisfy |pivot| <= LD.size(-2), with "
                  "2x2 blocks marked by a repeated negative pivot. Did you properly pass the "
                  "result of ldl_factor?");
      k += v > 0 ? 1 : 2;
    }
  }
}

}  // namespace

TensorTriple linalg_ldl_factor_ex(const Tensor& A, bool hermitian, bool check_errors,
                                  const Tensor& LD_out, const Tensor& pivots_out,
                                  const Tensor& info_out) {
  const char* op = "linalg.ldl_factor_ex";
  check_square_float_matrix(A, op);
  check_out(LD_out, A.dtype(), op);
  check_out(pivots_out, ScalarType::Int32, op);
  check_out(info_out, ScalarType::Int32, op);
  auto [LD, pivots, infos] = ldl_compute(A, hermitian, op);
  TensorTriple r = {finish_out(LD, LD_out, op), finish_out(pivots, pivots_out, op),
                    finish_out(infos, info_out, op)};
  if (check_errors) raise_for_infos(std::get<2>(r), A, op, describe_singular_d);
  return r;
}

Tensor linalg::check_ldl_solve_args(const Tensor& LD, const Tensor& pivots, const Tensor& B,
                                    const Tensor& out) {
  const char* op = "linalg.ldl_solve";
  check_at_least_2d(LD, op, "LD");
  check_square(LD, op);
  check_at_least_2d(B, op, "B");
  check_float_or_complex(LD, op);
  EMBER_CHECK(B.dtype() == LD.dtype(), "[", op,
              "] Expected b and A to have the same dtype, but found b of type ",
              torch_type_name(B.dtype()), " and A of type ", torch_type_name(LD.dtype()),
              " instead.");
  EMBER_CHECK_T(TypeError, is_integral(pivots.dtype(), /*include_bool=*/false), "[", op,
                "] pivots should be a tensor of integers (int32), got ",
                torch_type_name(pivots.dtype()));
  const int64_t n = rows(LD);
  EMBER_CHECK(pivots.sizes().equals(with_dims(batch_shape(LD), {n})), "[", op,
              "] Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with "
              "shape ",
              torch_shape_str(pivots.sizes()), " instead");
  EMBER_CHECK(rows(B) == n, "[", op,
              "] Incompatible matrix sizes for torch.linalg.ldl_solve: "
              "each A matrix is ",
              n, " by ", n, " but each b matrix is ", rows(B), " by ", cols(B));
  check_out(out, B.dtype(), op);
  const Tensor piv32 = contiguous(to_dtype(pivots, ScalarType::Int32));
  check_ldl_pivots(piv32, n, op);
  return piv32;
}

Tensor linalg_ldl_solve(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian,
                        const Tensor& out) {
  const char* op = "linalg.ldl_solve";
  const Tensor piv32 = check_ldl_solve_args(LD, pivots, B, out);
  const DimVector batch = broadcast_shapes(batch_shape(LD), batch_shape(B), op);
  Tensor X = column_major_copy(expand_batch(B, batch), op);
  ldl_solve_stub(B.device(), expand_batch(column_major(LD, op), batch),
                 expand_batch(piv32, batch, 1), X, hermitian);
  return finish_out(X, out, op);
}

}  // namespace native
}  // namespace ember
