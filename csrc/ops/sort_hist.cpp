// Counting and searching: bincount, histc, histogram, searchsorted, bucketize.
#include <cmath>
#include <limits>

#include "core/factory.h"
#include "core/shape.h"
#include "dispatch/copy.h"
#include "dispatch/tensor_iterator.h"
#include "ops/creation.h"
#include "ops/shape_util.h"
#include "ops/sort.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(hist_range_stub, HistRangeFn);
EMBER_DEFINE_STUB(histogram_stub, HistogramFn);
EMBER_DEFINE_STUB(bincount_stub, BincountFn);
EMBER_DEFINE_STUB(searchsorted_stub, SearchsortedFn);

namespace {

// bins + 1 evenly spaced edges from lo to hi computed in `dtype`, as torch.linspace does.
Tensor linear_edges(double lo, double hi, int64_t bins, ScalarType dtype) {
  std::vector<double> e(bins + 1);
  const double step = (hi - lo) / static_cast<double>(bins);
  const int64_t half = (bins + 1) / 2;
  for (int64_t i = 0; i <= bins; ++i) {
    e[i] =
        i < half ? lo + step * static_cast<double>(i) : hi - step * static_cast<double>(bins - i);
  }
  Tensor t = empty_tensor({bins + 1}, ScalarType::Float64, Device(), "histogram");
  std::copy(e.begin(), e.end(), t.data<double>());
  return to_dtype(t, dtype);
}

// The [lo, hi] range of a histogram: given, or the data's min and max, widened by `widen` each
// way when they coincide (1 for histc, 0.5 for histogram, as PyTorch and NumPy). Errors name `op`.
std::pair<double, double> histogram_range(const Tensor& t, double lo, double hi, bool given,
                                          double widen, const char* op) {
  if (!given) {
    if (t.numel() > 0) {
      auto mm = hist_range_stub(t.device(), t);
      lo = mm.first;
      hi = mm.second;
    } else {
      lo = hi = 0;
    }
  }
  if (lo == hi) {
    lo -= widen;
    hi += widen;
  }
  EMBER_CHECK(std::isfinite(lo) && std::isfinite(hi), "[", op, "] range of [", lo, ", ", hi,
              "] is not finite");
  EMBER_CHECK(lo < hi, "[", op, "] max must be larger than min");
  return {lo, hi};
}

void check_histogram_input(const Tensor& t, const Tensor& weight, const char* op) {
  EMBER_CHECK_T(NotImplementedError, t.is_floating_point(), "[", op,
                "] \"histogram_cpu\" not implemented for '", torch_type_name(t.dtype()), "'");
  if (weight.defined()) {
    EMBER_CHECK(weight.sizes().equals(t.sizes()), "[", op,
                "] if weight tensor is provided it "
                "should have the same shape as the input tensor");
    EMBER_CHECK(weight.dtype() == t.dtype(), "[", op,
                "] torch.histogram: if weight tensor is "
                "provided, input tensor and weight tensor should have the same dtype");
  }
}

Tensor run_histogram(const Tensor& t, const Tensor& weight, const Tensor& edges, BinSearch search,
                     bool density) {
  const int64_t bins = edges.numel() - 1;
  Tensor hist64 = zeros({bins}, TensorOptions(ScalarType::Float64, t.device()));
  if (t.numel() > 0 && bins > 0) {
    histogram_stub(t.device(), hist64, contiguous(t),
                   weight.defined() ? contiguous(weight) : Tensor(), contiguous(edges), search);
  }
  if (density) {
    // hist / (sum(hist) * bin widths)
    Tensor e64 = contiguous(to_dtype(edges, ScalarType::Float64));
    double* h = hist64.data<double>();
    const double* e = e64.data<double>();
    double total = 0;
    for (int64_t i = 0; i < bins; ++i) total += h[i];
    for (int64_t i = 0; i < bins; ++i) h[i] = h[i] / (total * (e[i + 1] - e[i]));
  }
  return to_dtype(hist64, t.dtype());
}

}  // namespace

Tensor bincount(const Tensor& t, const Tensor& weights, int64_t minlength) {
  EMBER_CHECK_T(NotImplementedError, is_integral(t.dtype(), false),
                "[bincount] \"bincount_cpu\" "
                "not implemented for '",
                torch_type_name(t.dtype()), "'");
  EMBER_CHECK(minlength >= 0, "[bincount] minlength should be >= 0");
  EMBER_CHECK(t.dim() == 1, "[bincount] bincount only supports 1-d non-negative integral inputs.");
  if (weights.defined()) {
    EMBER_CHECK(weights.dim() == 1 && weights.size(0) == t.size(0),
                "[bincount] weights should "
                "be 1-d and have the same length as input");
  }
  Tensor idx = contiguous(to_dtype(t, ScalarType::Int64));
  const int64_t* p = idx.data<int64_t>();
  int64_t max_value = -1;
  for (int64_t i = 0; i < idx.numel(); ++i) {
    EMBER_CHECK(p[i] >= 0, "[bincount] bincount only supports 1-d non-negative integral inputs.");
    max_value = std::max(max_value, p[i]);
  }
  // max_value + 1 bins: at INT64_MAX that overflows (the fuzzer found the write past a 0-sized
  // result); anything that large cannot be allocated anyway.
  EMBER_CHECK(max_value < std::numeric_limits<int64_t>::max(), "[bincount] the largest input, ",
              max_value, ", would need ", max_value, " + 1 bins, more than a tensor can hold");
  const int64_t n = std::max(max_value + 1, minlength);
  // Float32 weights count in float32; every other weight dtype in float64 (PyTorch's rule).
  const ScalarType out_dtype = !weights.defined()                       ? ScalarType::Int64
                               : weights.dtype() == ScalarType::Float32 ? ScalarType::Float32
                                                                        : ScalarType::Float64;
  Tensor out = zeros({n}, TensorOptions(out_dtype, t.device()));
  if (idx.numel() == 0) return out;
  Tensor w = weights.defined() ? contiguous(to_dtype(weights, out_dtype)) : Tensor();
  bincount_stub(t.device(), out, idx, w);
  return out;
}

Tensor histc(const Tensor& t, int64_t bins, const Scalar& min, const Scalar& max,
             const Tensor& out) {
  const char* op = "histc";
  check_histogram_input(t, Tensor(), op);
  EMBER_CHECK(bins > 0, "[histc] torch.histogram(): bins must be > 0, but got ", bins,
              " for dimension 0");
  double lo = min.to_double(), hi = max.to_double();
  EMBER_CHECK(!(lo > hi), "[histc] torch.histc: max must be larger than min");
  auto range = histogram_range(t, lo, hi, !(lo == 0 && hi == 0), 1.0, "histc");
  Tensor edges = linear_edges(range.first, range.second, bins, t.dtype());
  return finish_out(run_histogram(t, Tensor(), edges, BinSearch::kLinear, false), out, op);
}

std::tuple<Tensor, Tensor> histogram(const Tensor& t, int64_t bins,
                                     std::optional<std::pair<double, double>> range,
                                     const Tensor& weight, bool density) {
  const char* op = "histogram";
  check_histogram_input(t, weight, op);
  EMBER_CHECK(bins > 0, "[histogram] torch.histogram(): bins must be > 0, but got ", bins,
              " for dimension 0");
  if (range) {
    EMBER_CHECK(range->first <= range->second,
                "[histogram] torch.histogram(): min should not "
                "exceed max, but got min ",
                range->first, " max ", range->second);
  }
  auto r = histogram_range(t, range ? range->first : 0, range ? range->second : 0,
                           range.has_value(), 0.5, op);
  Tensor edges = linear_edges(r.first, r.second, bins, t.dtype());
  return {run_histogram(t, weight, edges, BinSearch::kLinearLocalSearch, density), edges};
}

std::tuple<Tensor, Tensor> histogram(const Tensor& t, const Tensor& bins, const Tensor& weight,
                                     bool density) {
  const char* op = "histogram";
  check_histogram_input(t, weight, op);
  EMBER_CHECK(bins.dim() == 1,
              "[histogram] torch.histogram(): bins tensor should have one "
              "dimension, but got ",
              bins.dim(), " dimensions in the bins tensor");
  EMBER_CHECK(bins.numel() > 0,
              "[histogram] torch.histogram(): bins tensor should have at "
              "least 1 element, but got ",
              bins.numel(), " elements");
  EMBER_CHECK(bins.dtype() == t.dtype(),
              "[histogram] torch.histogram: input tensor and bins "
              "tensors should have the same dtype, but got input ",
              torch_type_name(t.dtype()), " and bins ", torch_type_name(bins.dtype()));
  Tensor edges = contiguous(bins);
  return {run_histogram(t, weight, edges, BinSearch::kBinarySearch, density), clone(bins)};
}

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32, bool right,
                    const std::optional<std::string>& side, const Tensor& sorter,
                    const Tensor& out) {
  const char* op = "searchsorted";
  const Tensor& b = sorted_sequence;
  if (side) {
    EMBER_CHECK(*side == "left" || *side == "right",
                "[searchsorted] torch.searchsorted(): side "
                "can only be 'left' or 'right' but got ",
                *side);
    EMBER_CHECK(!(*side == "left" && right),
                "[searchsorted] torch.searchsorted(): side and "
                "right can't be set to opposites, got side of left while right was True");
    right = *side == "right";
  }
  EMBER_CHECK(b.dim() >= 1,
              "[searchsorted] torch.searchsorted(): boundaries tensor should have "
              "positive dimension, but got 0 dimension");
  if (b.dim() > 1) {
    bool match = values.dim() == b.dim();
    for (int64_t d = 0; match && d + 1 < b.dim(); ++d) match = values.size(d) == b.size(d);
    EMBER_CHECK(match,
                "[searchsorted] torch.searchsorted(): boundaries tensor should be 1 "
                "dimension or the first N-1 dimensions of boundaries tensor and input value "
                "tensor must match, but we got boundaries tensor ",
                torch_shape_str(b.sizes()), " and input value tensor ",
                torch_shape_str(values.sizes()));
  }
  if (sorter.defined()) {
    EMBER_CHECK(sorter.dtype() == ScalarType::Int64,
                "[searchsorted] torch.searchsorted(): "
                "sorter must be a tensor of long dtype but got dtype ",
                torch_type_name(sorter.dtype()));
    EMBER_CHECK(sorter.sizes().equals(b.sizes()),
                "[searchsorted] torch.searchsorted(): "
                "boundary and sorter must have the same size, but got boundary tensor ",
                torch_shape_str(b.sizes()), "and got sorter tensor ",
                torch_shape_str(sorter.sizes()));
  }
  ScalarType common = result_type({b, values});
  EMBER_CHECK_T(NotImplementedError, common != ScalarType::Bool && !is_complex(common),
                "[searchsorted] \"searchsorted_out_cpu\" not implemented for '",
                torch_type_name(common), "'");
  const ScalarType out_dtype = out_int32 ? ScalarType::Int32 : ScalarType::Int64;
  Tensor result = empty_tensor(values.sizes(), out_dtype, values.device(), op);
  Tensor sorter_c;
  if (sorter.defined()) {
    sorter_c = contiguous(sorter);
    const int64_t* s = sorter_c.data<int64_t>();
    const int64_t m = b.size(-1 + b.dim());
    for (int64_t i = 0; i < sorter_c.numel(); ++i) {
      EMBER_CHECK(s[i] >= 0 && s[i] < m,
                  "[searchsorted] torch.searchsorted(): sorter index out "
                  "of range");
    }
  }
  if (result.numel() > 0) {
    searchsorted_stub(values.device(), result, contiguous(to_dtype(b, common)),
                      contiguous(to_dtype(values, common)), sorter_c, right);
  }
  if (out.defined()) {
    check_out_dtype(out, out_dtype, op);
    return finish_out(result, out, op);
  }
  return result;
}

Tensor bucketize(const Tensor& values, const Tensor& boundaries, bool out_int32, bool right,
                 const Tensor& out) {
  EMBER_CHECK(boundaries.dim() == 1,
              "[bucketize] boundaries tensor must be 1 dimension, but got "
              "dim(",
              boundaries.dim(), ")");
  return searchsorted(boundaries, values, out_int32, right, std::nullopt, Tensor(), out);
}

}  // namespace native
}  // namespace ember
