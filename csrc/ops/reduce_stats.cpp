// var, std, var_mean, std_mean, norm, logsumexp.
#include <cmath>

#include "kernels/reduce_stubs.h"
#include "ops/creation.h"
#include "ops/reduce.h"
#include "ops/reduce_common.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(var_stub, VarFn);
EMBER_DEFINE_STUB(norm_stub, NormFn);
EMBER_DEFINE_STUB(logsumexp_stub, ReduceFn);

namespace {

double correction_value(const std::optional<Scalar>& c, const char* op) {
  if (!c) return 1.0;
  EMBER_CHECK_T(TypeError, !c->is_complex(), "[", op, "] correction must be a real number");
  return c->to_double();
}

// var / std, optionally with the mean as a second output.
TensorPair var_std(const char* op, bool take_sqrt, bool with_mean, const Tensor& t,
                   const DimList& dims, const std::optional<Scalar>& correction, bool keepdim,
                   const Tensor& out0, const Tensor& out1) {
  EMBER_CHECK_T(NotImplementedError, t.is_floating_point() || t.is_complex(), "[", op,
                "] std and var only support floating point and complex dtypes, got ",
                dtype_name(t.dtype()));
  const double corr = correction_value(correction, op);
  ReduceDims rd = make_reduce_dims(t, dims, op);
  const ScalarType real = to_real(t.dtype());
  if (with_mean) {
    Reduction r = make_reduction2(t, rd, keepdim, real, t.dtype(), op, out0, out1, true);
    var_stub(t.device(), r.iter, corr, take_sqrt);
    return finish_reduction2(r, rd, keepdim);
  }
  Reduction r = make_reduction(t, rd, keepdim, real, op, out0, /*cast_out=*/true);
  var_stub(t.device(), r.iter, corr, take_sqrt);
  return {finish_reduction(r, rd, keepdim), Tensor()};
}

}  // namespace

Tensor var(const Tensor& t, const DimList& dims, const std::optional<Scalar>& correction,
           bool keepdim, const Tensor& out) {
  return var_std("var", false, false, t, dims, correction, keepdim, out, {}).first;
}

Tensor std(const Tensor& t, const DimList& dims, const std::optional<Scalar>& correction,
           bool keepdim, const Tensor& out) {
  return var_std("std", true, false, t, dims, correction, keepdim, out, {}).first;
}

TensorPair var_mean(const Tensor& t, const DimList& dims, const std::optional<Scalar>& correction,
                    bool keepdim, const Tensor& out0, const Tensor& out1) {
  return var_std("var_mean", false, true, t, dims, correction, keepdim, out0, out1);
}

TensorPair std_mean(const Tensor& t, const DimList& dims, const std::optional<Scalar>& correction,
                    bool keepdim, const Tensor& out0, const Tensor& out1) {
  return var_std("std_mean", true, true, t, dims, correction, keepdim, out0, out1);
}

Tensor norm(const Tensor& t, NormOrder p, const DimList& dims, bool keepdim, ScalarType dtype,
            const Tensor& out) {
  const char* op = "norm";
  EMBER_CHECK_T(NotImplementedError, t.is_floating_point() || t.is_complex(), "[", op,
                "] Expected a floating point or complex tensor as input. Got ",
                dtype_name(t.dtype()));
  if (dtype != ScalarType::Undefined) {
    EMBER_CHECK(is_floating(dtype) || is_complex(dtype), "[", op,
                "] dtype should be floating point or complex, but got ", dtype_name(dtype));
    EMBER_CHECK(t.is_complex() || !is_complex(dtype), "[", op,
                "] dtype should be real for real inputs, but got ", dtype_name(dtype));
    EMBER_CHECK(!t.is_complex() || is_complex(dtype), "[", op,
                "] dtype should be complex for complex inputs, but got ", dtype_name(dtype));
    EMBER_CHECK(promote_types(t.dtype(), dtype) == dtype, "[", op, "] the dtype of the input (",
                dtype_name(t.dtype()),
                ") should be convertible without narrowing to the "
                "specified dtype (",
                dtype_name(dtype), ")");
  }
  EMBER_CHECK(!std::isnan(p.p), "[", op, "] the order of the norm must not be nan");
  if (p.kind == NormOrder::Kind::Fro && dims) {
    EMBER_CHECK(dims->size() <= 2, "[", op,
                "] the Frobenius norm takes one or two dims (a "
                "matrix norm), but got ",
                dims->size());
  }
  ReduceDims rd = make_reduce_dims(t, dims, op);
  if (p.kind == NormOrder::Kind::Inf || p.kind == NormOrder::Kind::NegInf) {
    // max/min have no identity: PyTorch refuses an empty reduction here.
    EMBER_CHECK(t.numel() != 0 || !rd.all || rd.specified, "[", op, "] cannot compute the ",
                p.kind == NormOrder::Kind::Inf ? "inf" : "-inf",
                " norm on an empty tensor "
                "because the operation does not have an identity");
    for (int64_t d = 0; d < t.dim(); ++d) {
      EMBER_CHECK(!(rd.mask[d] && t.size(d) == 0), "[", op, "] cannot compute the ",
                  p.kind == NormOrder::Kind::Inf ? "inf" : "-inf", " norm on the dimension ", d,
                  " because this dimension is empty and the operation does not have an "
                  "identity");
    }
  }
  Tensor in = dtype != ScalarType::Undefined ? to_dtype(t, dtype) : t;
  const ScalarType real = to_real(in.dtype());
  Reduction r = make_reduction(in, rd, keepdim, real, op, out);
  norm_stub(in.device(), r.iter, p);
  return finish_reduction(r, rd, keepdim);
}

Tensor logsumexp(const Tensor& t, const DimList& dims, bool keepdim, const Tensor& out) {
  const char* op = "logsumexp";
  if (out.defined()) {
    EMBER_CHECK(
        is_floating(out.dtype()) || is_complex(out.dtype()), "[", op,
        "] Expected floating point type for result tensor, but got: ", dtype_name(out.dtype()));
  }
  // Integers and bool compute in the default float dtype, as PyTorch.
  Tensor in = t.is_floating_point() || t.is_complex() ? t : to_dtype(t, default_dtype());
  ReduceDims rd = make_reduce_dims(t, dims, op);
  Reduction r = make_reduction(in, rd, keepdim, in.dtype(), op, out, /*cast_out=*/true);
  logsumexp_stub(in.device(), r.iter);
  return finish_reduction(r, rd, keepdim);
}

}  // namespace native
}  // namespace ember
