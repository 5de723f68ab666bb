// linalg.lstsq: the least-squares solution of A X = B for each matrix of a batch (A and B batch
// dims broadcast), with PyTorch's residuals / rank / singular_values per driver.
#include <limits>

#include "core/shape.h"
#include "ops/complex.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/linalg/common.h"
#include "ops/linalg/spectral.h"
#include "ops/linalg/spectral_util.h"
#include "ops/reduce.h"
#include "ops/shape_util.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(linalg_lstsq_stub, LstsqFn);

namespace linalg {

namespace {

constexpr const char* kOp = "linalg.lstsq";

LstsqDriver parse_driver(const std::string& d) {
  if (d == "gels") return LstsqDriver::gels;
  if (d == "gelsy") return LstsqDriver::gelsy;
  if (d == "gelsd") return LstsqDriver::gelsd;
  if (d == "gelss") return LstsqDriver::gelss;
  throw Error(
      str_cat("[", kOp, "] parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"));
}

void check_lstsq_shapes(const Tensor& A, const Tensor& B) {
  EMBER_CHECK(A.dim() >= 2, "[", kOp, "] input must have at least 2 dimensions.");
  EMBER_CHECK(B.dim() >= 1, "[", kOp, "] other must have at least 1 dimension.");
  EMBER_CHECK(A.dtype() == B.dtype(), "[", kOp,
              "] Expected input and other to have the same dtype, but got input's dtype ",
              torch_type_name(A.dtype()), " and other's dtype ", torch_type_name(B.dtype()));
  const int64_t diff = A.dim() - B.dim();
  EMBER_CHECK(diff == 0 || diff == 1, "[", kOp,
              "] input.dim() must be greater or equal to other.dim() and (input.dim() - "
              "other.dim()) <= 1");
  const bool vector_case = diff == 1;
  EMBER_CHECK(rows(A) == B.size(B.dim() - (vector_case ? 1 : 2)), "[", kOp,
              "] input.size(-2) should match other.size(", vector_case ? "-1" : "-2", ")");
  const ScalarType t = A.dtype();
  EMBER_CHECK(t == ScalarType::Float32 || t == ScalarType::Float64 || t == ScalarType::Complex64 ||
                  t == ScalarType::Complex128,
              "[", kOp, "] This function doesn't handle types other than float and double");
}

std::string describe_info(LstsqDriver driver, int info) {
  if (info < 0) {
    return str_cat("Argument ", -info,
                   " has an illegal value (LAPACK rejects matrices holding NaN).");
  }
  if (driver == LstsqDriver::gels) {
    return str_cat(
        "The least squares solution could not be computed because the input matrix does not "
        "have full rank (error code: ",
        info, ").");
  }
  return str_cat("The algorithm for computing the SVD failed to converge (error code: ", info,
                 ").");
}

}  // namespace

bool lstsq_vector_case(const Tensor& A, const Tensor& B) {
  return A.dim() - B.dim() == 1;
}

LstsqResult lstsq_unrecorded(const Tensor& A, const Tensor& B_in, std::optional<double> rcond,
                             const std::string& driver_name) {
  const LstsqDriver driver = parse_driver(driver_name);
  const bool vector_case = lstsq_vector_case(A, B_in);
  const Tensor B = vector_case ? unsqueeze(B_in, -1) : B_in;
  const int64_t m = rows(A), n = cols(A), nrhs = cols(B), mx = std::max(m, n);
  const DimVector batch =
      broadcast_shapes(batch_dims_with(A, IntArrayRef()), batch_dims_with(B, IntArrayRef()), kOp);
  const ScalarType real_dtype = to_real(A.dtype());
  const double eps = real_dtype == ScalarType::Float32 ? std::numeric_limits<float>::epsilon()
                                                       : std::numeric_limits<double>::epsilon();
  const double rc = rcond.value_or(eps * static_cast<double>(mx));

  auto with_batch = [&](std::initializer_list<int64_t> tail) {
    DimVector s(batch);
    for (int64_t t : tail) s.push_back(t);
    return s;
  };
  Tensor Aw = column_major_copy(expand(A, with_batch({m, n})), kOp);
  // B padded to max(m, n) rows: LAPACK writes the n-row solution over the m-row right side.
  Tensor Bw = empty_column_major(with_batch({mx, nrhs}), A.dtype(), kOp);
  zero_fresh(Bw);
  Tensor Bw_rows = narrow(Bw, Bw.dim() - 2, 0, m);
  copy_(Bw_rows, expand(B, with_batch({m, nrhs})));

  const bool has_rank = driver != LstsqDriver::gels;
  const bool has_sv = driver == LstsqDriver::gelsd || driver == LstsqDriver::gelss;
  Tensor rank = has_rank ? zeros(batch, TensorOptions(ScalarType::Int64))
                         : empty({0}, TensorOptions(ScalarType::Int64));
  Tensor sv = has_sv ? zeros(with_batch({std::min(m, n)}), TensorOptions(real_dtype))
                     : empty({0}, TensorOptions(real_dtype));
  const int64_t nbatch = Aw.numel() ? Aw.numel() / (m * n) : 0;
  Tensor infos = zeros({nbatch}, TensorOptions(ScalarType::Int32));
  if (m > 0 && n > 0 && nbatch > 0) {
    linalg_lstsq_stub(A.device(), Aw, Bw, rank, sv, infos, driver, rc);
  }
  raise_for_infos(infos, Aw, kOp, [driver](int info) { return describe_info(driver, info); });

  // Residuals: only when m > n and the driver is not gelsy; for gelsd / gelss only when every
  // matrix has full rank (as PyTorch; the rows past n of B hold the residual components).
  Tensor residuals = empty({0}, TensorOptions(real_dtype));
  if (m > n && driver != LstsqDriver::gelsy) {
    bool compute = true;
    if (has_sv) {
      const int64_t* r = rank.data<int64_t>();
      for (int64_t i = 0; i < rank.numel(); ++i) compute = compute && r[i] == n;
    }
    if (compute) {
      Tensor raw = narrow(Bw, Bw.dim() - 2, n, m - n);
      residuals = sum(real(mul(raw, conj(raw))), std::vector<int64_t>{-2});
    }
  }
  Tensor solution = narrow(Bw, Bw.dim() - 2, 0, n);
  if (vector_case) solution = squeeze(solution, {-1});
  return {solution, residuals, rank, sv};
}

std::string check_lstsq_args(const Tensor& A, const Tensor& B,
                             const std::optional<std::string>& driver) {
  check_lstsq_shapes(A, B);
  std::string d = driver.value_or("gelsy");
  parse_driver(d);
  return d;
}

LstsqResult lstsq(const Tensor& A, const Tensor& B, std::optional<double> rcond,
                  const std::optional<std::string>& driver) {
  return lstsq_unrecorded(A, B, rcond, check_lstsq_args(A, B, driver));
}

}  // namespace linalg
}  // namespace native
}  // namespace ember
