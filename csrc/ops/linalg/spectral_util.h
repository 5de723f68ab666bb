// Helpers shared by the spectral family's ops (ops/linalg/*.cpp of eigh, svd, qr, lstsq, ...).
#pragma once
#include <string>

#include "core/tensor.h"

namespace ember {
namespace native {
namespace linalg {

// PyTorch's dtype check of the LAPACK-backed decompositions: float32/64, complex64/128.
// Others raise NotImplementedError "[op] "<kernel>" not implemented for 'Half'" (the kernel
// name PyTorch reports, e.g. linalg_eigh_cpu), as PyTorch does for every unsupported dtype.
void check_lapack_dtype(const Tensor& A, const char* op, const char* kernel);

// The check of ops PyTorch guards with "Expected a floating point or complex tensor as input"
// (svd, qr, ...): integers and bool raise that NotImplementedError, float16 / bfloat16 the
// kernel's "not implemented for 'Half'" one.
void check_float_or_complex_input(const Tensor& A, const char* op, const char* kernel);

// The batch dims of A (all but the last two) followed by `tail` (IntArrayRef() for none).
DimVector batch_dims_with(const Tensor& A, IntArrayRef tail);

}  // namespace linalg
}  // namespace native
}  // namespace ember
