// Public range factories and complex constructors (ops/range_factories.h): complex and polar
// record their node here (api/range_factories.cpp) and run the native op once; the factories are
// the native functions.
#pragma once
#include "ops/range_factories.h"

namespace ember {

using native::arange;
using native::ArangeFn;
using native::ComplexFromRealFn;
using native::eye;
using native::linspace;
using native::LinspaceFn;
using native::logspace;
using native::LogspaceFn;
using native::range;
// real + i * imag (both float32 or both float64, broadcast).
Tensor complex(const Tensor& real, const Tensor& imag, const Tensor& out = {});
// abs * (cos(angle) + i sin(angle)).
Tensor polar(const Tensor& abs, const Tensor& angle, const Tensor& out = {});

}  // namespace ember
