// Kernel stubs of the indexing ops (ops/indexing_engine.h includes this header; the ops are
// ops/indexing*.cpp, the kernels kernels/cpu/index_kernels.cpp, index_put_kernels.cpp and
// mask_kernels.cpp). The gather and put loops run over restrided views of the indexed tensor:
// Note [Indexing through restrided views] in ops/indexing_engine.h.
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "dispatch/stub.h"
#include "dispatch/tensor_iterator.h"

namespace ember {
namespace native {

enum class PutOp : uint8_t { Assign, Add, Multiply, Max, Min };

// Operands [out, src, idx_0..idx_{n-1}] (idx int64), all of the iteration shape. sizes[j] is the
// size of the indexed dim (negative indices wrap by it), byte_strides[j] its stride in bytes.
// With check_lo / check_span (else null), index j is valid iff (uint64)(i - lo[j]) < span[j];
// an invalid index is never dereferenced and the kernel returns false (the output is then
// partially written, so this is only for outputs nobody else sees yet).
using IndexGatherFn = bool (*)(TensorIterator& iter, IntArrayRef sizes, IntArrayRef byte_strides,
                               const int64_t* check_lo, const uint64_t* check_span);
// Operands [dst, src, idx_0..] (dst is an *input* operand the kernel writes through, since it
// has zero strides). `serial` forces one thread.
using IndexPutFn = void (*)(TensorIterator& iter, IntArrayRef sizes, IntArrayRef byte_strides,
                            PutOp op, bool serial);
// Scans int64 operand 0 for a value outside [lo, hi); returns true and sets *bad to one.
using IndexBoundsFn = bool (*)(TensorIterator& iter, int64_t lo, int64_t hi, int64_t* bad);
// scatter_reduce(mean): out = count > 0 ? out / count : out (floor division for integers).
using ScatterMeanFn = void (*)(TensorIterator& iter);

// Masks. Operands [self (out), mask (bool)]; `value` points at one element of self's dtype.
using MaskedFillFn = void (*)(TensorIterator& iter, const void* value);
// Number of true elements of a contiguous bool tensor.
using CountTrueFn = int64_t (*)(const Tensor& mask);
// out[k] = self[i_k] for the k-th true mask[i] (self, mask contiguous, same numel; out
// contiguous with one element per true).
using MaskedSelectFn = void (*)(const Tensor& self, const Tensor& mask, const Tensor& out);
// out (count, ndim) int64 contiguous <- coordinates of the trues of a contiguous bool tensor
// of shape `shape`, in C order.
using NonzeroFn = void (*)(const Tensor& mask, IntArrayRef shape, const Tensor& out);

EMBER_DECLARE_STUB(masked_fill_stub, MaskedFillFn);
EMBER_DECLARE_STUB(count_true_stub, CountTrueFn);
EMBER_DECLARE_STUB(masked_select_stub, MaskedSelectFn);
EMBER_DECLARE_STUB(nonzero_stub, NonzeroFn);
EMBER_DECLARE_STUB(index_gather_stub, IndexGatherFn);
EMBER_DECLARE_STUB(index_put_stub, IndexPutFn);
EMBER_DECLARE_STUB(index_bounds_stub, IndexBoundsFn);
EMBER_DECLARE_STUB(scatter_mean_stub, ScatterMeanFn);

}  // namespace native
}  // namespace ember
