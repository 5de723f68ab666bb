// Reductions and scans, with PyTorch's semantics (dtype promotion, keepdim, out=, NaN rules and
// empty-input behaviour). See docs/design/reductions.md.
//
// Conventions: `dims` nullopt reduces every dim; `dtype` Undefined means the op's default; an
// undefined `out` means "allocate". Two-output ops return (values, indices) / (min, max) /
// (var, mean) pairs.
#pragma once
#include <optional>
#include <utility>
#include <vector>

#include "core/scalar.h"
#include "core/tensor.h"
#include "dispatch/stub.h"
#include "kernels/reduce_stubs.h"

namespace ember {
namespace native {

using DimList = std::optional<std::vector<int64_t>>;
using TensorPair = std::pair<Tensor, Tensor>;

// ---- sums and products (reduce.cpp) ------------------------------------------------------
// dtype Undefined: bool and integer inputs sum in int64, others in their own dtype; an out=
// tensor's dtype is used when dtype is not given.
Tensor sum(const Tensor& t, const DimList& dims = std::nullopt, bool keepdim = false,
           ScalarType dtype = ScalarType::Undefined, const Tensor& out = {});
Tensor nansum(const Tensor& t, const DimList& dims = std::nullopt, bool keepdim = false,
              ScalarType dtype = ScalarType::Undefined, const Tensor& out = {});
// Floating or complex inputs (or dtype) only: NotImplementedError otherwise, as PyTorch.
Tensor mean(const Tensor& t, const DimList& dims = std::nullopt, bool keepdim = false,
            ScalarType dtype = ScalarType::Undefined, const Tensor& out = {});
// nanmean is a composite of the api layer (nansum / count_non_nan, so its gradient is div's).
// count_non_nan is its denominator: the number of non-NaN elements each result element of a
// reduction over dims covers (int64).
Tensor count_non_nan(const Tensor& t, const DimList& dims, bool keepdim, const char* op);
Tensor prod(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
            ScalarType dtype = ScalarType::Undefined, const Tensor& out = {});

// ---- extrema (reduce_minmax.cpp) ---------------------------------------------------------
// NaN propagates (any NaN makes the result NaN). No identity: empty reductions raise.
Tensor amax(const Tensor& t, const DimList& dims = std::nullopt, bool keepdim = false,
            const Tensor& out = {});
Tensor amin(const Tensor& t, const DimList& dims = std::nullopt, bool keepdim = false,
            const Tensor& out = {});
Tensor max(const Tensor& t, const Tensor& out = {});  // all elements, 0-d
Tensor min(const Tensor& t, const Tensor& out = {});
// (values, indices) along dim; the first occurrence of the extreme wins, and the first NaN.
TensorPair max(const Tensor& t, int64_t dim, bool keepdim = false, const Tensor& values = {},
               const Tensor& indices = {});
TensorPair min(const Tensor& t, int64_t dim, bool keepdim = false, const Tensor& values = {},
               const Tensor& indices = {});
// (min, max) over all elements (dim nullopt) or along dim.
TensorPair aminmax(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                   const Tensor& min_out = {}, const Tensor& max_out = {});
// dim nullopt: the index into the flattened input.
Tensor argmax(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
              const Tensor& out = {});
Tensor argmin(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
              const Tensor& out = {});

// ---- statistics (reduce_stats.cpp) -------------------------------------------------------
// correction nullopt means 1 (Bessel); a correction >= N gives inf or nan like PyTorch.
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

// NormOrder (the order of a vector norm) is in kernels/reduce_stubs.h.
Tensor norm(const Tensor& t, NormOrder p = {}, const DimList& dims = std::nullopt,
            bool keepdim = false, ScalarType dtype = ScalarType::Undefined, const Tensor& out = {});
// log(sum(exp(x))) computed stably; integer inputs give the default float dtype.
Tensor logsumexp(const Tensor& t, const DimList& dims, bool keepdim = false,
                 const Tensor& out = {});

// ---- logical and counting (reduce_logical.cpp) -------------------------------------------
// bool results (uint8 for uint8 inputs, as PyTorch). dims given as an empty list reduce nothing.
Tensor all(const Tensor& t, const DimList& dims = std::nullopt, bool keepdim = false,
           const Tensor& out = {});
Tensor any(const Tensor& t, const DimList& dims = std::nullopt, bool keepdim = false,
           const Tensor& out = {});
Tensor count_nonzero(const Tensor& t, const DimList& dims = std::nullopt, const Tensor& out = {});

// ---- scans (reduce_scan.cpp) -------------------------------------------------------------
Tensor cumsum(const Tensor& t, int64_t dim, ScalarType dtype = ScalarType::Undefined,
              const Tensor& out = {});
Tensor cumprod(const Tensor& t, int64_t dim, ScalarType dtype = ScalarType::Undefined,
               const Tensor& out = {});
TensorPair cummax(const Tensor& t, int64_t dim, const Tensor& values = {},
                  const Tensor& indices = {});
TensorPair cummin(const Tensor& t, int64_t dim, const Tensor& values = {},
                  const Tensor& indices = {});
Tensor logcumsumexp(const Tensor& t, int64_t dim, const Tensor& out = {});

// ---- order statistics (reduce_order.cpp) -------------------------------------------------
// No dim: the lower median of all elements (nan when any element is nan / all are, for
// nanmedian; nan for an empty input).
Tensor median(const Tensor& t, const Tensor& out = {});
Tensor nanmedian(const Tensor& t, const Tensor& out = {});
TensorPair median(const Tensor& t, int64_t dim, bool keepdim = false, const Tensor& values = {},
                  const Tensor& indices = {});
TensorPair nanmedian(const Tensor& t, int64_t dim, bool keepdim = false, const Tensor& values = {},
                     const Tensor& indices = {});
// The smallest of the most frequent values and the last index holding it.
TensorPair mode(const Tensor& t, int64_t dim = -1, bool keepdim = false, const Tensor& values = {},
                const Tensor& indices = {});

// QuantileInterpolation is in kernels/reduce_stubs.h.
QuantileInterpolation parse_quantile_interpolation(const std::string& name, const char* op);
// q: a 0-d or 1-d tensor of the input's dtype; a 1-d q adds a leading dim to the result.
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

}  // namespace native
}  // namespace ember
