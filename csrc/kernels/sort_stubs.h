// Kernel stubs of the ordering and counting ops (ops/sort.h includes this header; the ops are
// ops/sort*.cpp, the kernels kernels/cpu/sort_kernels.cpp, unique_kernel.cpp and
// hist_kernels.cpp).
#pragma once
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {
namespace native {

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
