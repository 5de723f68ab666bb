// Public ops of ops/range_factories.h that have no node of their own (the native functions).
#pragma once
#include "ops/range_factories.h"

namespace ember {

using native::ArangeFn;
using native::LinspaceFn;
using native::LogspaceFn;
using native::ComplexFromRealFn;
using native::arange;
using native::range;
using native::linspace;
using native::logspace;
using native::eye;
using native::complex;
using native::polar;

}  // namespace ember
