// Public ordering ops (ops/sort.h): sort, topk and kthvalue record their node here (api/sort.cpp)
// and run the native op once; msort is a composite; the others are the native functions.
#pragma once
#include "ops/sort.h"

namespace ember {

std::tuple<Tensor, Tensor> sort(const Tensor& t, int64_t dim = -1, bool descending = false,
                                bool stable = false, const Tensor& values_out = {},
                                const Tensor& indices_out = {});
using native::argsort;
// sort's values along dim 0.
Tensor msort(const Tensor& t, const Tensor& out = {});
std::tuple<Tensor, Tensor> topk(const Tensor& t, int64_t k, std::optional<int64_t> dim = {},
                                bool largest = true, bool sorted = true,
                                const Tensor& values_out = {}, const Tensor& indices_out = {});
std::tuple<Tensor, Tensor> kthvalue(const Tensor& t, int64_t k, std::optional<int64_t> dim = {},
                                    bool keepdim = false, const Tensor& values_out = {},
                                    const Tensor& indices_out = {});
using native::bincount;
using native::BincountFn;
using native::BinSearch;
using native::bucketize;
using native::histc;
using native::histogram;
using native::HistogramFn;
using native::HistRangeFn;
using native::searchsorted;
using native::SearchsortedFn;
using native::SortFn;
using native::TopkFn;
using native::unique;
using native::unique_consecutive;
using native::UniqueFn;

}  // namespace ember
