// linalg.eig and linalg.eigvals: eigenvalues and eigenvectors of general square matrices, always
// complex (complex64 for float32 / complex64 inputs, complex128 otherwise), as PyTorch.
#include "ops/conversion.h"
#include "ops/creation.h"
#include "ops/linalg/common.h"
#include "ops/linalg/spectral.h"
#include "ops/linalg/spectral_util.h"
#include "ops/reduce.h"
#include "ops/shape_util.h"
#include "ops/unary.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(linalg_eig_stub, EigFn);

namespace linalg {

void check_eig_args(const Tensor& A, const Tensor& values_out, const Tensor& vectors_out,
                    const char* op) {
  check_square(A, op);
  const ScalarType t = A.dtype();
  EMBER_CHECK(is_floating(t) || is_complex(t), "[", op, "] Unknown Complex ScalarType for ",
              torch_type_name(t));
  check_lapack_dtype(A, op, "linalg_eig_out_cpu");
  const ScalarType ctype = to_complex(to_real(A.dtype()));
  for (const Tensor* o : {&values_out, &vectors_out}) {
    if (!o->defined()) continue;
    EMBER_CHECK(is_complex(o->dtype()), "[", op, "] Expected ",
                o == &values_out ? "eigenvalues" : "eigenvectors", " to be safely castable from ",
                torch_type_name(ctype), " dtype, but got ",
                o == &values_out ? "eigenvalues" : "eigenvectors", " with dtype ",
                torch_type_name(o->dtype()));
  }
}

std::tuple<Tensor, Tensor> eig_unrecorded(const Tensor& A, bool vectors, const char* op) {
  // LAPACK's geev does not terminate reliably on NaN / inf: PyTorch refuses them up front.
  if (A.numel() > 0) {
    EMBER_CHECK(item(all(isfinite(A))).to<bool>(), "[", op,
                "] input tensor should not contain infs or NaNs.");
  }
  const int64_t n = rows(A);
  const ScalarType ctype = to_complex(to_real(A.dtype()));
  Tensor work = column_major_copy(A, op);
  Tensor values = empty(batch_dims_with(A, {n}), TensorOptions(ctype));
  Tensor vecs = vectors ? empty_column_major(batch_dims_with(A, {n, n}), ctype, op) : Tensor();
  Tensor infos = zeros({batch_count(A)}, TensorOptions(ScalarType::Int32));
  if (A.numel() > 0) linalg_eig_stub(A.device(), work, values, vecs, infos);
  raise_for_infos(infos, A, op, [](int info) {
    return str_cat("The QR algorithm failed to compute all the eigenvalues (error code: ", info,
                   ").");
  });
  return {values, vecs};
}

std::tuple<Tensor, Tensor> eig(const Tensor& A, const Tensor& values_out,
                               const Tensor& vectors_out) {
  constexpr const char* op = "linalg.eig";
  check_eig_args(A, values_out, vectors_out, op);
  auto [values, vectors] = eig_unrecorded(A, /*vectors=*/true, op);
  return {finish_out(values, values_out, op), finish_out(vectors, vectors_out, op)};
}

Tensor eigvals(const Tensor& A, const Tensor& out) {
  constexpr const char* op = "linalg.eigvals";
  check_eig_args(A, Tensor(), Tensor(), op);
  return finish_out(std::get<0>(eig_unrecorded(A, /*vectors=*/false, op)), out, op);
}

}  // namespace linalg
}  // namespace native
}  // namespace ember
