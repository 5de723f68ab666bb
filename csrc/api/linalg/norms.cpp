// Public linalg.matrix_norm, linalg.norm and linalg.cond: composites of vector_norm, svdvals and
// inv, as PyTorch's (their gradients come from the pieces).
#include <cmath>
#include <limits>

#include "api/autocast.h"
#include "api/compare.h"
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/indexing.h"
#include "api/linalg/common.h"
#include "api/linalg/misc.h"
#include "api/linalg/solve.h"
#include "api/linalg/spectral.h"
#include "api/reduce.h"
#include "api/shape_util.h"
#include "api/unary.h"
#include "api/views.h"
#include "core/shape.h"
#include "ops/linalg/spectral_util.h"

namespace ember {
namespace linalg {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string ord_str(double ord) {
  if (std::isinf(ord)) return ord > 0 ? "inf" : "-inf";
  return str_cat(ord);
}

// PyTorch's check_linalg_norm_dtype.
void check_norm_dtype(ScalarType dtype, ScalarType self, const char* op) {
  if (dtype == ScalarType::Undefined) return;
  EMBER_CHECK(is_floating(dtype) || is_complex(dtype), "[", op,
              "] dtype should be floating point or complex, but got ", torch_type_name(dtype));
  EMBER_CHECK(is_complex(self) == is_complex(dtype), "[", op, "] dtype should be ",
              is_complex(self) ? "complex" : "real", " for ", is_complex(self) ? "complex" : "real",
              " inputs, but got ", torch_type_name(dtype));
  EMBER_CHECK(promote_types(self, dtype) == dtype, "[", op, "] the dtype of the input (",
              torch_type_name(self),
              ") should be convertible without narrowing to the specified "
              "dtype (",
              torch_type_name(dtype), ")");
}

// A's checks and the wrapped dims (PyTorch's _linalg_matrix_norm_checks).
std::pair<int64_t, int64_t> matrix_norm_checks(const Tensor& A, IntArrayRef dim, ScalarType dtype,
                                               bool low_precision) {
  constexpr const char* op = "linalg.matrix_norm";
  EMBER_CHECK(A.dim() >= 2, "[", op, "] The input tensor A must have at least 2 dimensions.");
  const ScalarType t = A.dtype();
  if (!is_floating(t) && !is_complex(t)) {
    throw NotImplementedError(
        str_cat("[", op, "] Expected a floating point or complex tensor as input. Got ",
                torch_type_name(t)));
  }
  EMBER_CHECK(low_precision || (t != ScalarType::Float16 && t != ScalarType::BFloat16), "[", op,
              "] Low precision dtypes not supported. Got ", torch_type_name(t));
  EMBER_CHECK(dim.size() == 2, "[", op, "] dim must be a 2-tuple. Got ", shape_str(dim));
  const int64_t d0 = wrap_dim(dim[0], A.dim(), op), d1 = wrap_dim(dim[1], A.dim(), op);
  EMBER_CHECK(d0 != d1, "[", op, "] dims must be different. Got (", d0, ", ", d1, ")");
  check_norm_dtype(dtype, t, op);
  return {d0, d1};
}

// The permutation moving dims d0, d1 to the end (in that order), and its inverse.
DimVector backshift(int64_t d0, int64_t d1, int64_t ndim) {
  DimVector p;
  for (int64_t d = 0; d < ndim; ++d) {
    if (d != d0 && d != d1) p.push_back(d);
  }
  p.push_back(d0);
  p.push_back(d1);
  return p;
}

DimVector inverse_permutation(const DimVector& p) {
  DimVector inv(p.size());
  for (size_t i = 0; i < p.size(); ++i) inv[p[i]] = static_cast<int64_t>(i);
  return inv;
}

// f(svdvals of A with (d0, d1) moved last), reduced over the last dim; keepdim restores them.
template <typename Reduce>
Tensor reduce_singular_values(const Tensor& A, int64_t d0, int64_t d1, bool keepdim,
                              ScalarType dtype, Reduce reduce) {
  const Tensor A_ = dtype == ScalarType::Undefined ? A : ember::to_dtype(A, dtype);
  const DimVector p = backshift(d0, d1, A_.dim());
  Tensor r = reduce(linalg::svdvals(ember::permute(A_, p)));
  if (keepdim) {
    r = ember::permute(ember::unsqueeze(ember::unsqueeze(r, -1), -1), inverse_permutation(p));
  }
  return r;
}

}  // namespace

Tensor matrix_norm(const Tensor& A, const NormOrd& ord, IntArrayRef dim, bool keepdim,
                   ScalarType dtype, const Tensor& out) {
  constexpr const char* op = "linalg.matrix_norm";
  Tensor result;
  if (ord.name.has_value()) {
    const std::string& o = *ord.name;
    EMBER_CHECK(o == "fro" || o == "nuc", "[", op, "] Order ", o, " not supported.");
    auto [d0, d1] = matrix_norm_checks(A, dim, dtype, /*low_precision=*/o != "nuc");
    if (o == "fro") {
      result = ember::linalg_vector_norm(A, 2.0, std::vector<int64_t>{d0, d1}, keepdim, dtype);
    } else {
      result = reduce_singular_values(A, d0, d1, keepdim, dtype, [](const Tensor& S) {
        return ember::sum(S, std::vector<int64_t>{-1});
      });
    }
  } else {
    const double o = ord.number.value_or(2.0);
    const double abs_ord = std::abs(o);
    EMBER_CHECK(abs_ord == 2.0 || abs_ord == 1.0 || abs_ord == kInf, "[", op, "] Order ",
                ord_str(o), " not supported.");
    auto [d0, d1] = matrix_norm_checks(A, dim, dtype, /*low_precision=*/abs_ord != 2.0);
    const auto max_min = [o](const Tensor& t, int64_t d, bool keep) {
      return o > 0 ? ember::amax(t, std::vector<int64_t>{d}, keep)
                   : ember::amin(t, std::vector<int64_t>{d}, keep);
    };
    if (abs_ord == 2.0) {
      result = reduce_singular_values(A, d0, d1, keepdim, dtype,
                                      [&](const Tensor& S) { return max_min(S, -1, false); });
    } else {
      // The inf norm is the 1 norm of the transpose: sum |a| over one dim, then max / min.
      if (abs_ord == kInf) std::swap(d0, d1);
      if (!keepdim && d0 < d1) --d1;
      result = max_min(ember::linalg_vector_norm(A, 1.0, std::vector<int64_t>{d0}, keepdim, dtype),
                       d1, keepdim);
    }
  }
  return finish_out(result, out, op);
}

Tensor norm(const Tensor& A, const NormOrd& ord, const std::optional<std::vector<int64_t>>& dim,
            bool keepdim, ScalarType dtype, const Tensor& out) {
  constexpr const char* op = "linalg.norm";
  const bool has_ord = ord.number.has_value() || ord.name.has_value();
  if (dim.has_value()) {
    EMBER_CHECK(dim->size() == 1 || dim->size() == 2, "[", op,
                "] If dim is specified, it must be of length 1 or 2. Got ", shape_str(*dim));
  } else if (has_ord) {
    EMBER_CHECK(A.dim() == 1 || A.dim() == 2, "[", op,
                "] If dim is not specified but ord is, the input must be 1D or 2D. Got ", A.dim(),
                "D.");
  }
  Tensor result;
  const bool matrix = (dim.has_value() && dim->size() == 2) || (!dim.has_value() && A.dim() == 2);
  if (ord.name.has_value() || (has_ord && matrix)) {
    const DimVector d = dim.has_value() ? DimVector(*dim) : DimVector{0, 1};
    result = linalg::matrix_norm(A, ord, d, keepdim, dtype);
  } else {
    result = ember::linalg_vector_norm(A, ord.number.value_or(2.0), dim, keepdim, dtype);
  }
  return finish_out(result, out, op);
}

Tensor cond(const Tensor& A, const NormOrd& ord, const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: float32
    const Tensor A2 = autocast::to_fp32(A);
    autocast::ExcludeGuard no_autocast;
    return linalg::cond(A2, ord);
  }
  constexpr const char* op = "linalg.cond";
  EMBER_CHECK(A.dim() >= 2, "[", op, "] The input tensor must have at least 2 dimensions.");
  Tensor result;
  if (ord.name.has_value()) {
    EMBER_CHECK(*ord.name == "fro" || *ord.name == "nuc", "[", op,
                "] linalg.cond got an invalid norm type: ", *ord.name);
  } else {
    const double o = ord.number.value_or(2.0);
    EMBER_CHECK(std::abs(o) == 2.0 || std::abs(o) == 1.0 || std::abs(o) == kInf, "[", op,
                "] linalg.cond got an invalid norm type: ", ord_str(o));
  }
  const double o = ord.number.value_or(2.0);
  if (A.numel() == 0) {
    // NumPy leaves the condition number of 0x0 matrices undefined; PyTorch returns 0.
    result = ember::zeros(native::linalg::batch_dims_with(A, IntArrayRef()),
                          TensorOptions(to_real(A.dtype())));
  } else if (!ord.name.has_value() && std::abs(o) == 2.0) {
    const Tensor S = linalg::svdvals(A);
    const Tensor s_max = ember::narrow(S, -1, 0, 1),
                 s_min = ember::narrow(S, -1, S.size(S.dim() - 1) - 1, 1);
    result = ember::squeeze(o < 0 ? ember::div(s_min, s_max) : ember::div(s_max, s_min), {-1});
  } else {
    const std::string what = ord.name.has_value() ? *ord.name
                             : std::isinf(o)      ? str_cat(o > 0 ? "" : "-", "inf")
                                                  : str_cat(static_cast<int64_t>(o));
    check_square(A, str_cat("linalg.cond(ord=", what, ")").c_str());
    native::linalg::check_lapack_dtype(A, op, "linalg_inv_ex_cpu");
    auto [inverse, info] = ember::linalg_inv_ex(A, /*check_errors=*/false);
    // A singular matrix has condition number inf.
    const Tensor singular = ember::gt(ember::unsqueeze(ember::unsqueeze(info, -1), -1),
                                      ember::zeros({}, TensorOptions(info.dtype())));
    inverse = ember::masked_fill(inverse, singular, Scalar(kInf));
    result = ember::mul(linalg::matrix_norm(A, ord), linalg::matrix_norm(inverse, ord));
    result = ember::nan_to_num(result, kInf, kInf, -kInf);  // 0 * inf of NumPy's convention
  }
  return finish_out(result, out, op);
}

}  // namespace linalg
}  // namespace ember
