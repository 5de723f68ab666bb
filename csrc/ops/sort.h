// Ordering ops: sort, argsort, msort, topk, kthvalue, unique, unique_consecutive, and the
// counting/searching ops bincount, histc, histogram, searchsorted, bucketize.
#pragma once
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/scalar.h"
#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {
namespace native {

// Returns (values, indices). NaN sorts after every number (before them when descending), as in
// PyTorch; equal elements keep their order whenever `stable` (and, here, always).
std::tuple<Tensor, Tensor> sort(const Tensor& t, int64_t dim = -1, bool descending = false,
                                bool stable = false, const Tensor& values_out = {},
                                const Tensor& indices_out = {});
Tensor argsort(const Tensor& t, int64_t dim = -1, bool descending = false, bool stable = false);
Tensor msort(const Tensor& t, const Tensor& out = {});
// dim nullopt: the last dim.
std::tuple<Tensor, Tensor> topk(const Tensor& t, int64_t k, std::optional<int64_t> dim = {},
                                bool largest = true, bool sorted = true,
                                const Tensor& values_out = {}, const Tensor& indices_out = {});
std::tuple<Tensor, Tensor> kthvalue(const Tensor& t, int64_t k, std::optional<int64_t> dim = {},
                                    bool keepdim = false, const Tensor& values_out = {},
                                    const Tensor& indices_out = {});

// (values, inverse, counts); inverse/counts are empty tensors when not requested.
std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& t, bool sorted = true,
                                          bool return_inverse = false, bool return_counts = false,
                                          std::optional<int64_t> dim = {});
std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& t, bool return_inverse = false,
                                                      bool return_counts = false,
                                                      std::optional<int64_t> dim = {});

Tensor bincount(const Tensor& t, const Tensor& weights = {}, int64_t minlength = 0);
Tensor histc(const Tensor& t, int64_t bins = 100, const Scalar& min = 0, const Scalar& max = 0,
             const Tensor& out = {});
// bins given as a count (with optional range) or as a tensor of edges. Returns (hist, edges).
std::tuple<Tensor, Tensor> histogram(const Tensor& t, int64_t bins,
                                     std::optional<std::pair<double, double>> range,
                                     const Tensor& weight = {}, bool density = false);
std::tuple<Tensor, Tensor> histogram(const Tensor& t, const Tensor& bins, const Tensor& weight = {},
                                     bool density = false);
// side: nullopt, "left" or "right".
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32 = false,
                    bool right = false, const std::optional<std::string>& side = {},
                    const Tensor& sorter = {}, const Tensor& out = {});
Tensor bucketize(const Tensor& values, const Tensor& boundaries, bool out_int32 = false,
                 bool right = false, const Tensor& out = {});

// Kernels.
// values/indices have self's shape; rows along dim are sorted.
using SortFn = void (*)(const Tensor& values, const Tensor& indices, const Tensor& self,
                        int64_t dim, bool descending);
EMBER_DECLARE_STUB(sort_stub, SortFn);
// values/indices have self's shape except k at dim: the k largest/smallest, in order.
using TopkFn = void (*)(const Tensor& values, const Tensor& indices, const Tensor& self, int64_t k,
                        int64_t dim, bool largest);
EMBER_DECLARE_STUB(topk_stub, TopkFn);
// rows: contiguous (n, m). order: row permutation (lexicographically sorted, stable, when sort;
// identity otherwise); group_start: positions in `order` where a run of equal rows begins.
using UniqueFn = void (*)(const Tensor& rows, bool sort, std::vector<int64_t>& order,
                          std::vector<int64_t>& group_start);
EMBER_DECLARE_STUB(unique_stub, UniqueFn);
// (min, max) of a floating tensor as doubles; NaN if any element is NaN.
using HistRangeFn = std::pair<double, double> (*)(const Tensor& self);
EMBER_DECLARE_STUB(hist_range_stub, HistRangeFn);
// hist (float64, bins) += weights of self's elements falling in [edges[i], edges[i+1]) (the last
// bin closed). How a bin is found, as PyTorch's three algorithms (results differ at edges):
enum class BinSearch {
  kLinear,             // histc: arithmetic position in the input dtype
  kLinearLocalSearch,  // histogram(bins=int): arithmetic position, then the nearby edges decide
  kBinarySearch,       // histogram(bins=tensor): binary search over the edges
};
using HistogramFn = void (*)(const Tensor& hist, const Tensor& self, const Tensor& weight,
                             const Tensor& edges, BinSearch search);
EMBER_DECLARE_STUB(histogram_stub, HistogramFn);
// out (float32/float64, size >= max+1) += weights (or 1) at each index; idx int64 contiguous.
using BincountFn = void (*)(const Tensor& out, const Tensor& idx, const Tensor& weights);
EMBER_DECLARE_STUB(bincount_stub, BincountFn);
// out (int64 or int32, values' shape) <- insertion points of values in the last dim of
// boundaries (1-D: shared by all values). Everything contiguous, one dtype.
using SearchsortedFn = void (*)(const Tensor& out, const Tensor& boundaries, const Tensor& values,
                                const Tensor& sorter, bool right);
EMBER_DECLARE_STUB(searchsorted_stub, SearchsortedFn);

}  // namespace native
}  // namespace ember
