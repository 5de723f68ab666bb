// Ordering ops: sort, argsort, topk, kthvalue, unique, unique_consecutive, and the
// counting/searching ops bincount, histc, histogram, searchsorted, bucketize (msort is api/sort.h).
#pragma once
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/scalar.h"
#include "core/tensor.h"
#include "dispatch/stub.h"
#include "kernels/sort_stubs.h"

namespace ember {
namespace native {

// Returns (values, indices). NaN sorts after every number (before them when descending), as in
// PyTorch; equal elements keep their order whenever `stable` (and, here, always).
std::tuple<Tensor, Tensor> sort(const Tensor& t, int64_t dim = -1, bool descending = false,
                                bool stable = false, const Tensor& values_out = {},
                                const Tensor& indices_out = {});
Tensor argsort(const Tensor& t, int64_t dim = -1, bool descending = false, bool stable = false);
// msort is a composite of the api layer (sort's values, so its gradient is sort's).
// dim nullopt: the last dim.
std::tuple<Tensor, Tensor> topk(const Tensor& t, int64_t k, std::optional<int64_t> dim = {},
                                bool largest = true, bool sorted = true,
                                const Tensor& values_out = {}, const Tensor& indices_out = {});
std::tuple<Tensor, Tensor> kthvalue(const Tensor& t, int64_t k, std::optional<int64_t> dim = {},
                                    bool keepdim = false, const Tensor& values_out = {},
                                    const Tensor& indices_out = {});

// Not differentiable (as PyTorch), like the counting/searching ops below: nothing is recorded.
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

// The kernel stubs are in kernels/sort_stubs.h.

}  // namespace native
}  // namespace ember
