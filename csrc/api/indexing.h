// Public ops of ops/indexing.h that have no node of their own (the native functions).
#pragma once
#include "ops/indexing.h"

namespace ember {

using native::TensorIndex;
using native::getitem;
using native::setitem;
using native::index;
using native::index_put_;
using native::index_put;
using native::gather;
using native::take;
using native::take_along_dim;
using native::scatter_;
using native::scatter;
using native::scatter_add_;
using native::scatter_add;
using native::scatter_reduce_;
using native::scatter_reduce;
using native::index_select;
using native::index_add_;
using native::index_add;
using native::index_copy_;
using native::index_copy;
using native::index_fill_;
using native::index_fill;
using native::masked_fill_;
using native::masked_fill;
using native::masked_select;
using native::masked_scatter_;
using native::masked_scatter;
using native::nonzero;
using native::nonzero_tuple;
using native::argwhere;

}  // namespace ember
