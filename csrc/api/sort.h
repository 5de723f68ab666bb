// Public ops of ops/sort.h that have no node of their own (the native functions).
#pragma once
#include "ops/sort.h"

namespace ember {

using native::sort;
using native::argsort;
using native::msort;
using native::topk;
using native::kthvalue;
using native::unique;
using native::unique_consecutive;
using native::bincount;
using native::histc;
using native::histogram;
using native::searchsorted;
using native::bucketize;
using native::SortFn;
using native::TopkFn;
using native::UniqueFn;
using native::HistRangeFn;
using native::BinSearch;
using native::HistogramFn;
using native::BincountFn;
using native::SearchsortedFn;

}  // namespace ember
