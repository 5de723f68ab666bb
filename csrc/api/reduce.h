// Public reductions and scans (ops/reduce.h): the differentiable ones record their node here
// (api/reduce.cpp) and run the native op once; the others are the native functions.
#pragma once
#include "ops/reduce.h"

namespace ember {

using native::DimList;
using native::NormOrder;
using native::QuantileInterpolation;
using native::TensorPair;

// ---- sums and products ----
Tensor sum(const Tensor& t, const DimList& dims = std::nullopt, bool keepdim = false,
           ScalarType dtype = ScalarType::Undefined, const Tensor& out = {});
Tensor nansum(const Tensor& t, const DimList& dims = std::nullopt, bool keepdim = false,
              ScalarType dtype = ScalarType::Undefined, const Tensor& out = {});
Tensor mean(const Tensor& t, const DimList& dims = std::nullopt, bool keepdim = false,
            ScalarType dtype = ScalarType::Undefined, const Tensor& out = {});
// nansum(x) / (number of non-NaN elements), each rounded to the result dtype, as PyTorch.
Tensor nanmean(const Tensor& t, const DimList& dims = std::nullopt, bool keepdim = false,
               ScalarType dtype = ScalarType::Undefined, const Tensor& out = {});
Tensor prod(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
            ScalarType dtype = ScalarType::Undefined, const Tensor& out = {});

// ---- extrema ----
Tensor amax(const Tensor& t, const DimList& dims = std::nullopt, bool keepdim = false,
            const Tensor& out = {});
Tensor amin(const Tensor& t, const DimList& dims = std::nullopt, bool keepdim = false,
            const Tensor& out = {});
Tensor max(const Tensor& t, const Tensor& out = {});
Tensor min(const Tensor& t, const Tensor& out = {});
TensorPair max(const Tensor& t, int64_t dim, bool keepdim = false, const Tensor& values = {},
               const Tensor& indices = {});
TensorPair min(const Tensor& t, int64_t dim, bool keepdim = false, const Tensor& values = {},
               const Tensor& indices = {});
TensorPair aminmax(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                   const Tensor& min_out = {}, const Tensor& max_out = {});
using native::argmax;
using native::argmin;

// ---- statistics ----
Tensor var(const Tensor& t, const DimList& dims = std::nullopt,
           const std::optional<Scalar>& correction = std::nullopt, bool keepdim = false,
           const Tensor& out = {});
Tensor std(const Tensor& t, const DimList& dims = std::nullopt,
           const std::optional<Scalar>& correction = std::nullopt, bool keepdim = false,
           const Tensor& out = {});
TensorPair var_mean(const Tensor& t, const DimList& dims = std::nullopt,
                    const std::optional<Scalar>& correction = std::nullopt, bool keepdim = false,
                    const Tensor& out0 = {}, const Tensor& out1 = {});
TensorPair std_mean(const Tensor& t, const DimList& dims = std::nullopt,
                    const std::optional<Scalar>& correction = std::nullopt, bool keepdim = false,
                    const Tensor& out0 = {}, const Tensor& out1 = {});
Tensor norm(const Tensor& t, NormOrder p = {}, const DimList& dims = std::nullopt,
            bool keepdim = false, ScalarType dtype = ScalarType::Undefined, const Tensor& out = {});
Tensor logsumexp(const Tensor& t, const DimList& dims, bool keepdim = false,
                 const Tensor& out = {});

// ---- logical and counting (not differentiable) ----
using native::all;
using native::any;
using native::count_nonzero;

// ---- scans ----
Tensor cumsum(const Tensor& t, int64_t dim, ScalarType dtype = ScalarType::Undefined,
              const Tensor& out = {});
Tensor cumprod(const Tensor& t, int64_t dim, ScalarType dtype = ScalarType::Undefined,
               const Tensor& out = {});
TensorPair cummax(const Tensor& t, int64_t dim, const Tensor& values = {},
                  const Tensor& indices = {});
TensorPair cummin(const Tensor& t, int64_t dim, const Tensor& values = {},
                  const Tensor& indices = {});
Tensor logcumsumexp(const Tensor& t, int64_t dim, const Tensor& out = {});

// ---- order statistics ----
Tensor median(const Tensor& t, const Tensor& out = {});
Tensor nanmedian(const Tensor& t, const Tensor& out = {});
TensorPair median(const Tensor& t, int64_t dim, bool keepdim = false, const Tensor& values = {},
                  const Tensor& indices = {});
TensorPair nanmedian(const Tensor& t, int64_t dim, bool keepdim = false, const Tensor& values = {},
                     const Tensor& indices = {});
TensorPair mode(const Tensor& t, int64_t dim = -1, bool keepdim = false, const Tensor& values = {},
                const Tensor& indices = {});

using native::parse_quantile_interpolation;
// A tensor q gets a gradient for linear interpolation only (as PyTorch's composite).
Tensor quantile(const Tensor& t, const Tensor& q, std::optional<int64_t> dim = std::nullopt,
                bool keepdim = false,
                QuantileInterpolation interpolation = QuantileInterpolation::Linear,
                const Tensor& out = {});
Tensor quantile(const Tensor& t, double q, std::optional<int64_t> dim = std::nullopt,
                bool keepdim = false,
                QuantileInterpolation interpolation = QuantileInterpolation::Linear,
                const Tensor& out = {});
Tensor nanquantile(const Tensor& t, const Tensor& q, std::optional<int64_t> dim = std::nullopt,
                   bool keepdim = false,
                   QuantileInterpolation interpolation = QuantileInterpolation::Linear,
                   const Tensor& out = {});
Tensor nanquantile(const Tensor& t, double q, std::optional<int64_t> dim = std::nullopt,
                   bool keepdim = false,
                   QuantileInterpolation interpolation = QuantileInterpolation::Linear,
                   const Tensor& out = {});

}  // namespace ember
