// linalg.eigh and linalg.eigvalsh: eigenvalues (ascending, real) and eigenvectors (columns of a
// column-major matrix) of Hermitian matrices, reading the lower or upper triangle only.
#include <cctype>

#include "ops/creation.h"
#include "ops/linalg/common.h"
#include "ops/linalg/spectral.h"
#include "ops/linalg/spectral_util.h"
#include "ops/shape_util.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(linalg_eigh_stub, EighFn);

namespace linalg {

namespace {

bool parse_uplo(const std::string& uplo, const char* op) {
  const char c = uplo.size() == 1 ? static_cast<char>(std::toupper(uplo[0])) : '\0';
  EMBER_CHECK(c == 'L' || c == 'U', "[", op, "] Expected UPLO argument to be 'L' or 'U', but got ",
              uplo);
  return c == 'U';
}

}  // namespace

bool check_eigh_args(const Tensor& A, const std::string& uplo, const char* op) {
  check_square(A, op);
  check_lapack_dtype(A, op, "linalg_eigh_cpu");
  return parse_uplo(uplo, op);
}

std::tuple<Tensor, Tensor> eigh_unrecorded(const Tensor& A, bool upper, bool vectors,
                                           const char* op) {
  Tensor work = column_major_copy(A, op);
  Tensor values = empty(batch_dims_with(A, {rows(A)}), TensorOptions(to_real(A.dtype())));
  Tensor infos = zeros({batch_count(A)}, TensorOptions(ScalarType::Int32));
  if (A.numel() > 0) linalg_eigh_stub(A.device(), work, values, infos, upper, vectors);
  raise_for_infos(infos, A, op, [](int info) {
    return str_cat(
        "The algorithm failed to converge because the input matrix is ill-conditioned or has too "
        "many repeated eigenvalues (error code: ",
        info, ").");
  });
  return {values, vectors ? work : Tensor()};
}

std::tuple<Tensor, Tensor> eigh(const Tensor& A, const std::string& uplo, const Tensor& values_out,
                                const Tensor& vectors_out) {
  constexpr const char* op = "linalg.eigh";
  const bool upper = check_eigh_args(A, uplo, op);
  auto [values, vectors] = eigh_unrecorded(A, upper, /*vectors=*/true, op);
  return {finish_out(values, values_out, op), finish_out(vectors, vectors_out, op)};
}

Tensor eigvalsh(const Tensor& A, const std::string& uplo, const Tensor& out) {
  constexpr const char* op = "linalg.eigvalsh";
  const bool upper = check_eigh_args(A, uplo, op);
  return finish_out(std::get<0>(eigh_unrecorded(A, upper, /*vectors=*/false, op)), out, op);
}

}  // namespace linalg
}  // namespace native
}  // namespace ember
