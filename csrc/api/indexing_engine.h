// Public ops of ops/indexing_engine.h that have no node of their own (the native functions).
#pragma once
#include "ops/indexing_engine.h"

namespace ember {

using native::PutOp;
using native::IndexGatherFn;
using native::IndexPutFn;
using native::IndexBoundsFn;
using native::ScatterMeanFn;
using native::MaskedFillFn;
using native::CountTrueFn;
using native::MaskedSelectFn;
using native::NonzeroFn;
using native::list_str;
using native::BoundsStyle;
using native::BoundsSpec;
using native::check_index_bounds;
using native::to_long_index;
using native::restride;
using native::is_non_overlapping;
using native::IndexCheck;
using native::launch_gather;
using native::launch_put;
using native::check_writable;
using native::shares_storage;
using native::prepare_out;
using native::functional_from_inplace;

}  // namespace ember
