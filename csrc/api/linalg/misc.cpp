// Public linalg.vector_norm, linalg.cross, linalg.vecdot and linalg.vander: argument checks with
// PyTorch's messages in front of the public ops that compute them (norm, cross, mul/sum or vdot,
// cumprod/cat), which record autograd; and linalg.matrix_exp, which records its own node.
#include "api/linalg/misc.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "api/autocast.h"
#include "api/complex.h"
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/join.h"
#include "api/matmul.h"
#include "api/reduce.h"
#include "api/shape_util.h"
#include "api/views.h"
#include "autograd/derivatives/linalg/misc.h"
#include "autograd/variable.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/shape.h"
#include "ops/reduce_common.h"

namespace ember {

namespace {

bool is_float_or_complex(ScalarType t) {
  return is_floating(t) || is_complex(t);
}

// An order as PyTorch prints a Scalar in messages: "2", "-0.5", "inf".
std::string order_str(double ord) {
  std::ostringstream s;
  s << ord;
  return s.str();
}

// The checks of PyTorch's check_linalg_norm_dtype: dtype= must be floating or complex, of the
// input's kind, and reachable from the input's dtype without narrowing.
void check_norm_dtype(ScalarType input, ScalarType dtype, const char* op) {
  if (dtype == ScalarType::Undefined) return;
  EMBER_CHECK(is_float_or_complex(dtype), "[", op,
              "] dtype should be floating point or complex, but got ", torch_type_name(dtype));
  EMBER_CHECK(is_complex(input) == is_complex(dtype), "[", op, "] dtype should be ",
              is_complex(input) ? "complex" : "real", " for ",
              is_complex(input) ? "complex" : "real", " inputs, but got ", torch_type_name(dtype));
  EMBER_CHECK(promote_types(input, dtype) == dtype, "[", op, "] the dtype of the input (",
              torch_type_name(input),
              ") should be convertible without narrowing to the specified dtype (",
              torch_type_name(dtype), ")");
}

}  // namespace

Tensor linalg_vector_norm(const Tensor& x, double ord, const DimList& dims, bool keepdim,
                          ScalarType dtype, const Tensor& out) {
  const char* op = "linalg.vector_norm";
  EMBER_CHECK_T(NotImplementedError, is_float_or_complex(x.dtype()), "[", op,
                "] Expected a floating point or complex tensor as input. Got ",
                torch_type_name(x.dtype()));
  check_norm_dtype(x.dtype(), dtype, op);
  // Wraps and de-duplicates the dims with this op's name in the messages.
  native::make_reduce_dims(x, dims, op);
  // Orders below 0 and inf reduce with min / max of |x|-like terms, which have no identity.
  if (x.numel() == 0 && (ord < 0.0 || ord == std::numeric_limits<double>::infinity())) {
    EMBER_CHECK(dims && !dims->empty(), "[", op, "] cannot compute the ", order_str(ord),
                " norm on an empty tensor because the operation does not have an identity");
    for (int64_t d : *dims) {
      const int64_t w = wrap_dim(d, x.dim(), op);
      EMBER_CHECK(x.dim() == 0 || x.size(w) != 0, "[", op, "] cannot compute the ", order_str(ord),
                  " norm on the dimension ", w,
                  " because this dimension is empty and the operation does not have an identity");
    }
  }
  if (out.defined()) {
    check_out_dtype(out, to_real(dtype == ScalarType::Undefined ? x.dtype() : dtype), op);
  }
  if (std::isnan(ord)) {
    // sum(|x|^nan)^(1/nan) is NaN, except for an empty input, which reduces to the sum's 0.
    Tensor r = ember::norm(x, NormOrder::from_double(2.0), dims, keepdim, dtype);
    if (x.numel() != 0) {
      r = ember::mul(r, scalar_tensor(std::numeric_limits<double>::quiet_NaN()));
    }
    return finish_out(r, out, op);
  }
  return ember::norm(x, NormOrder::from_double(ord), dims, keepdim, dtype, out);
}

Tensor linalg_cross(const Tensor& a, const Tensor& b, int64_t dim, const Tensor& out) {
  const char* op = "linalg.cross";
  EMBER_CHECK(a.dim() == b.dim(), "[", op, "] inputs must have the same number of dimensions.");
  EMBER_CHECK_T(IndexError, a.dim() > 0, "[", op, "] Dimension specified as ", dim,
                " but tensor has no dimensions");
  const int64_t d = wrap_dim(dim, a.dim(), op);
  EMBER_CHECK(a.size(d) == 3 && b.size(d) == 3, "[", op, "] inputs dimension ", dim,
              " must have length 3. Got ", a.size(d), " and ", b.size(d));
  EMBER_CHECK(a.dtype() == b.dtype(), "[", op, "] expected scalar type ",
              torch_type_name(a.dtype()), " but found ", torch_type_name(b.dtype()));
  EMBER_CHECK_T(NotImplementedError, a.dtype() != ScalarType::Bool, "[", op,
                "] \"cross\" not implemented for 'Bool'");
  return ember::cross(a, b, d, out);
}

Tensor linalg_vecdot(const Tensor& x, const Tensor& y, int64_t dim, const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: lower precision
    const Tensor x2 = autocast::lower(x), y2 = autocast::lower(y);
    autocast::ExcludeGuard no_autocast;
    return ember::linalg_vecdot(x2, y2, dim);
  }
  const char* op = "linalg.vecdot";
  EMBER_CHECK_T(NotImplementedError, is_float_or_complex(x.dtype()), "[", op,
                "] Expected a floating point or complex tensor as input. Got ",
                torch_type_name(x.dtype()));
  EMBER_CHECK(x.dtype() == y.dtype(), "[", op,
              "] Expected x and y to have the same dtype, but found x of type ",
              torch_type_name(x.dtype()), " and y of type ", torch_type_name(y.dtype()),
              " instead");
  const DimVector shape = broadcast_shapes(x.sizes(), y.sizes(), op);
  const int64_t d = wrap_dim(dim, static_cast<int64_t>(shape.size()), op);
  if (out.defined()) {
    EMBER_CHECK(out.dtype() == x.dtype(), "[", op, "] Expected out of dtype ",
                torch_type_name(x.dtype()), " but found ", torch_type_name(out.dtype()));
  }
  // Two vectors: one fused dot product (conj(x) . y) instead of a product tensor and a sum.
  if (x.dim() == 1 && y.dim() == 1 && x.size(0) == y.size(0)) return ember::vdot(x, y, out);
  const Tensor prod = x.is_complex() ? ember::mul(ember::conj(x), y) : ember::mul(x, y);
  return ember::sum(prod, std::vector<int64_t>{d}, false, ScalarType::Undefined, out);
}

Tensor linalg_matrix_exp(const Tensor& A) {
  if (!autograd::should_record(A)) return native::linalg_matrix_exp(A);
  native::check_matrix_exp_args(A);
  return derivatives::linalg_matrix_exp(A);
}

Tensor linalg_vander(const Tensor& x, std::optional<int64_t> N) {
  const char* op = "linalg.vander";
  const ScalarType t = x.dtype();
  const bool ok = t == ScalarType::Float32 || t == ScalarType::Float64 || is_complex(t) ||
                  is_integral(t, /*include_bool=*/false);
  EMBER_CHECK_T(NotImplementedError, ok, "[", op,
                "] linalg.vander supports floating point, complex, and integer tensors, but got ",
                torch_type_name(t));
  const Tensor x1 = x.dim() == 0 ? ember::unsqueeze(x, -1) : x;
  const int64_t n = N.value_or(x1.size(x1.dim() - 1));
  EMBER_CHECK(n > 1, "[", op, "] N must be greater than 1.");
  // Columns 1..N-1 are the running products x, x^2, ... (integers accumulate in int64, as
  // PyTorch's cumprod); column 0 is ones.
  DimVector shape(x1.sizes());
  shape.push_back(n - 1);
  const Tensor powers = ember::cumprod(ember::expand(ember::unsqueeze(x1, -1), shape), -1);
  shape.back() = 1;
  return ember::cat({ones(shape, powers.dtype()), powers}, -1);
}

}  // namespace ember
