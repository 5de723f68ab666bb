// Public ops of ops/indexing_engine.h that have no node of their own (the native functions).
#pragma once
#include "ops/indexing_engine.h"

namespace ember {

using native::BoundsSpec;
using native::BoundsStyle;
using native::check_index_bounds;
using native::check_writable;
using native::CountTrueFn;
using native::functional_from_inplace;
using native::IndexBoundsFn;
using native::IndexCheck;
using native::IndexGatherFn;
using native::IndexPutFn;
using native::is_non_overlapping;
using native::launch_gather;
using native::launch_put;
using native::list_str;
using native::MaskedFillFn;
using native::MaskedSelectFn;
using native::NonzeroFn;
using native::prepare_out;
using native::PutOp;
using native::restride;
using native::ScatterMeanFn;
using native::shares_storage;
using native::to_long_index;

}  // namespace ember
