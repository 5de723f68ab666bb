// Public real / imag / conj of ops/complex.h: complex inputs record their autograd node, then
// run the native op once.
#pragma once
#include "ops/complex.h"

namespace ember {

Tensor real(const Tensor& a);          // complex: a view; real dtypes: a itself
Tensor imag(const Tensor& a);          // complex: a view; other dtypes raise TypeError
Tensor conj(const Tensor& a);          // complex: conj_physical(a); real dtypes: a itself
Tensor view_as_real(const Tensor& a);  // views (ops/complex.h), differentiable
Tensor view_as_complex(const Tensor& a);

}  // namespace ember
