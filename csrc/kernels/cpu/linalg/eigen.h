// Pieces shared by the Eigen-backed linalg kernels (LU, Cholesky, LDL, triangular solves): the
// dtypes they instantiate and views of one column-major matrix with a leading dimension.
#pragma once
#include <Eigen/Core>
#include <cstdint>

#include "dispatch/dtype_dispatch.h"

namespace ember {
namespace native {
namespace linalg {

// LAPACK's four types; reduced floats are refused before any kernel runs.
constexpr uint32_t kLinalgTypes = kFloat32 | kFloat64 | kComplex64 | kComplex128;

template <typename T>
using ColMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
template <typename T>
using ConstMap = Eigen::Map<const ColMatrix<T>, Eigen::Unaligned, Eigen::OuterStride<>>;
template <typename T>
using MutMap = Eigen::Map<ColMatrix<T>, Eigen::Unaligned, Eigen::OuterStride<>>;

}  // namespace linalg
}  // namespace native
}  // namespace ember
