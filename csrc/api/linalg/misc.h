// Public ops of ember.linalg that are not decompositions (ops/linalg/misc.h): matrix_exp records
// its node (api/linalg/misc.cpp) and runs the native op once; vector_norm, cross, vecdot,
// vander (api/linalg/misc.cpp), multi_dot, matrix_power, tensorinv and tensorsolve
// (api/linalg/products.cpp) are composites of public ops (norm, cross, mul/sum, cumprod/cat, mm,
// matmul, inv, solve), which record their pieces.
#pragma once
#include <optional>
#include <vector>

#include "core/scalar.h"
#include "core/small_vector.h"
#include "core/tensor.h"
#include "ops/linalg/misc.h"
#include "ops/reduce.h"

namespace ember {

using native::DimList;

// linalg.vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None). ord may be
// any real number: 0 counts non-zeros, +-inf take max / min of |x|, NaN gives NaN.
Tensor linalg_vector_norm(const Tensor& x, double ord = 2.0, const DimList& dims = std::nullopt,
                          bool keepdim = false, ScalarType dtype = ScalarType::Undefined,
                          const Tensor& out = {});

// linalg.cross(input, other, *, dim=-1, out=None): same number of dims, broadcast otherwise.
Tensor linalg_cross(const Tensor& a, const Tensor& b, int64_t dim = -1, const Tensor& out = {});

// linalg.vecdot(x, y, *, dim=-1, out=None) = sum(conj(x) * y, dim), broadcasting x and y.
Tensor linalg_vecdot(const Tensor& x, const Tensor& y, int64_t dim = -1, const Tensor& out = {});

// linalg.vander(x, *, N=None): (..., n) -> (..., n, N) with columns x^0, x^1, ..., x^(N-1).
// Integer inputs give int64 (the powers are a cumprod), as PyTorch.
Tensor linalg_vander(const Tensor& x, std::optional<int64_t> N = std::nullopt);

// linalg.multi_dot(tensors, *, out=None): the chain product in the cheapest order (the
// classic O(n^3) dynamic program over the matrix sizes). The first and last tensors may be 1-D
// (a row and a column vector, dropped from the result's shape).
Tensor linalg_multi_dot(const std::vector<Tensor>& tensors, const Tensor& out = {});

// linalg.matrix_power(A, n, *, out=None): repeated squaring for n > 0, the identity for
// n == 0, and powers of linalg.inv(A) for n < 0.
Tensor linalg_matrix_power(const Tensor& A, int64_t n, const Tensor& out = {});

// linalg.tensorinv(A, ind=2, *, out=None): the inverse of A seen as a square matrix of
// prod(A.shape[:ind]) rows, shaped A.shape[ind:] + A.shape[:ind].
Tensor linalg_tensorinv(const Tensor& A, int64_t ind = 2, const Tensor& out = {});

// linalg.tensorsolve(A, B, dims=None, *, out=None): X with tensordot(A, X, X.dim()) == B, X of
// shape A.shape[B.dim():] (after moving `dims` of A to the end).
Tensor linalg_tensorsolve(const Tensor& A, const Tensor& B,
                          const std::optional<DimVector>& dims = std::nullopt,
                          const Tensor& out = {});

// linalg.matrix_exp(A): scaling and squaring with the optimized Taylor polynomials of degree
// 1, 2, 4, 8, 12 and 18 of Bader, Blanes and Casas (2019), as PyTorch.
Tensor linalg_matrix_exp(const Tensor& A);
using native::MatrixExpFn;

}  // namespace ember
