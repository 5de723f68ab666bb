// Public ops of ops/join.h that have no node of their own (the native functions).
#pragma once
#include "ops/join.h"

namespace ember {

using native::cat;
using native::stack;
using native::hstack;
using native::vstack;
using native::dstack;
using native::column_stack;
using native::flip;
using native::fliplr;
using native::flipud;
using native::roll;
using native::rot90;
using native::repeat;
using native::tile;
using native::repeat_interleave;
using native::tril;
using native::triu;
using native::tril_;
using native::triu_;
using native::diag;
using native::diag_embed;
using native::diagflat;
using native::trace;
using native::meshgrid;
using native::cartesian_prod;
using native::combinations;
using native::CatContiguousFn;
using native::TriFn;

}  // namespace ember
