// Derivatives of reductions and scans (ops/reduce*.cpp).
// The derivative table is one wrapper per differentiable op (docs/design/autograd.md): the
// public op (api/reduce.cpp) calls its wrapper when recording is on (autograd::should_record);
// the wrapper runs the native op once with recording off and attaches the op's node, whose
// formula uses public ops only, so create_graph=True gives higher-order gradients.
#pragma once
#include "api/reduce.h"
#include "core/tensor.h"

namespace ember {
namespace derivatives {

// ---- sums and products (reductions.cpp) ----
Tensor sum(const Tensor& t, const DimList& dims, bool keepdim, ScalarType dtype, const Tensor& out);
Tensor mean(const Tensor& t, const DimList& dims, bool keepdim, ScalarType dtype,
            const Tensor& out);
Tensor nansum(const Tensor& t, const DimList& dims, bool keepdim, ScalarType dtype,
              const Tensor& out);
Tensor prod(const Tensor& t, std::optional<int64_t> dim, bool keepdim, ScalarType dtype,
            const Tensor& out);

// ---- extrema and order statistics (reduce_select.cpp) ----
Tensor amax(const Tensor& t, const DimList& dims, bool keepdim, const Tensor& out);
Tensor amin(const Tensor& t, const DimList& dims, bool keepdim, const Tensor& out);
Tensor max(const Tensor& t, const Tensor& out);  // all elements
Tensor min(const Tensor& t, const Tensor& out);
TensorPair max(const Tensor& t, int64_t dim, bool keepdim, const Tensor& values,
               const Tensor& indices);
TensorPair min(const Tensor& t, int64_t dim, bool keepdim, const Tensor& values,
               const Tensor& indices);
TensorPair aminmax(const Tensor& t, std::optional<int64_t> dim, bool keepdim, const Tensor& min_out,
                   const Tensor& max_out);
Tensor median(const Tensor& t, const Tensor& out);  // all elements
Tensor nanmedian(const Tensor& t, const Tensor& out);
TensorPair median(const Tensor& t, int64_t dim, bool keepdim, const Tensor& values,
                  const Tensor& indices);
TensorPair nanmedian(const Tensor& t, int64_t dim, bool keepdim, const Tensor& values,
                     const Tensor& indices);
TensorPair mode(const Tensor& t, int64_t dim, bool keepdim, const Tensor& values,
                const Tensor& indices);

// ---- statistics (reduce_stats.cpp) ----
Tensor var(const Tensor& t, const DimList& dims, const std::optional<Scalar>& correction,
           bool keepdim, const Tensor& out);
Tensor std(const Tensor& t, const DimList& dims, const std::optional<Scalar>& correction,
           bool keepdim, const Tensor& out);
TensorPair var_mean(const Tensor& t, const DimList& dims, const std::optional<Scalar>& correction,
                    bool keepdim, const Tensor& out0, const Tensor& out1);
TensorPair std_mean(const Tensor& t, const DimList& dims, const std::optional<Scalar>& correction,
                    bool keepdim, const Tensor& out0, const Tensor& out1);
Tensor norm(const Tensor& t, NormOrder p, const DimList& dims, bool keepdim, ScalarType dtype,
            const Tensor& out);
Tensor logsumexp(const Tensor& t, const DimList& dims, bool keepdim, const Tensor& out);

// ---- scans (reduce_scan.cpp) ----
Tensor cumsum(const Tensor& t, int64_t dim, ScalarType dtype, const Tensor& out);
Tensor cumprod(const Tensor& t, int64_t dim, ScalarType dtype, const Tensor& out);
TensorPair cummax(const Tensor& t, int64_t dim, const Tensor& values, const Tensor& indices);
TensorPair cummin(const Tensor& t, int64_t dim, const Tensor& values, const Tensor& indices);
Tensor logcumsumexp(const Tensor& t, int64_t dim, const Tensor& out);

// ---- quantiles (reduce_quantile.cpp) ----
// quantile / nanquantile (ignore_nan) with q a tensor (0-d or 1-d; a 1-d q adds a leading result
// dim) or, when `q` is undefined, the number q_value.
Tensor quantile(bool ignore_nan, const Tensor& t, const Tensor& q, double q_value,
                std::optional<int64_t> dim, bool keepdim, QuantileInterpolation interpolation,
                const Tensor& out);

}  // namespace derivatives
}  // namespace ember
