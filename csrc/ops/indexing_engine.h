// The machinery every indexing op shares (see docs/design/indexing.md).
//
// Note [Indexing through restrided views]
// Every indexing op is one of two loops over an iteration shape S:
//   gather:  out[i] = src[i + sum_j idx_j[i] * stride_j]          (getitem, gather, take, ...)
//   put:     dst[i + sum_j idx_j[i] * stride_j] op= src[i]        (setitem, scatter, index_add,
//   ...)
// where `src` / `dst` are views of the indexed tensor restrided to S: the indexed dims get
// stride 0 (their offset comes from the index values instead) and the other dims keep their
// strides. Index tensors are likewise restrided (broadcast) to S. A TensorIterator over these
// views then does the broadcasting, dim ordering and coalescing, and each op only describes its
// geometry. This is PyTorch's design for index / index_put.
//
// Parallelism: gather writes each output element once, so it is split freely. A put may hit one
// destination element from many iterations (duplicate indices), so it is split only along a dim
// in which dst itself moves (TensorIterator::for_each_reduction_safe); two iterations in
// different chunks then write different elements, and duplicates land in one thread in order
// (deterministic "last write wins" and exact accumulation). A dst that overlaps itself
// (expanded) runs serially.
#pragma once
#include <string>
#include <vector>
#include "dispatch/tensor_iterator.h"

#include "core/tensor.h"
#include "dispatch/copy.h"
#include "dispatch/stub.h"
#include "kernels/indexing_stubs.h"
#include "ops/shape_util.h"
#include "ops/views.h"

namespace ember {
namespace native {

// PutOp and the kernel stubs (index_gather_stub, index_put_stub, the mask stubs, ...) are in
// kernels/indexing_stubs.h.

// --- helpers for the op files ----------------------------------------------------------------

// "[2, 3]": the list format PyTorch prints in indexing messages.
std::string list_str(IntArrayRef v);

// How an out-of-range index is reported (each op family words it as PyTorch does).
enum class BoundsStyle {
  OutOfBounds,       // "index 5 is out of bounds for dimension 0 with size 3"
  OutOfRangeInSelf,  // "index out of range in self"  (index_select, index_add)
  Take,              // "out of range: tried to access index 12 on a tensor of 12 elements."
};
struct BoundsSpec {
  const char* op;
  int64_t dim;
  int64_t size;
  bool allow_negative;  // valid range [-size, size) instead of [0, size)
  bool index_error;     // IndexError instead of RuntimeError
  BoundsStyle style = BoundsStyle::OutOfBounds;
  const char* prefix = "";  // e.g. "index_copy_(): "
};
// Throws the op's error when `index` (int64) has a value out of range. Never touches memory
// other than reading the index.
void check_index_bounds(const Tensor& index, const BoundsSpec& spec);

// index as int64 (int32 indices are converted; the caller has rejected other dtypes).
Tensor to_long_index(const Tensor& index);

// A view of t's storage with the given geometry (t's storage offset); no bounds check, the
// caller guarantees every reachable element lies inside t.
Tensor restride(const Tensor& t, IntArrayRef sizes, IntArrayRef strides);

// False when two elements of t may share memory (stride 0 over a size > 1 dim, or strides that
// interleave). Conservative: may say true only when it is sure.
bool is_non_overlapping(const Tensor& t);

// Runs the gather loop into `out` (defined, of the iteration shape).
// `fresh_checks`: when given (one per index operand: the original index and its bounds), `out`
// must be a tensor nobody else sees yet; the indices are then validated inside the gather loop
// instead of in a separate pass, and the spec's error is raised on failure.
struct IndexCheck {
  Tensor index;
  BoundsSpec spec;
};
void launch_gather(const Tensor& out, const Tensor& src_view, const std::vector<Tensor>& idx_views,
                   IntArrayRef sizes, IntArrayRef elem_strides, const char* op,
                   const std::vector<IndexCheck>* fresh_checks = nullptr);
// Runs the put loop; `dst_base` is the tensor dst_view restrides (decides serial vs parallel).
void launch_put(const Tensor& dst_base, const Tensor& dst_view, const Tensor& src_view,
                const std::vector<Tensor>& idx_views, IntArrayRef sizes, IntArrayRef elem_strides,
                PutOp op, const char* op_name);

// Raises when t's storage is read-only.
void check_writable(const Tensor& t, const char* op);

// Whether a and b share storage (an in-place op then reads a copy of b first).
inline bool shares_storage(const Tensor& a, const Tensor& b) {
  return a.defined() && b.defined() && a.storage().get() == b.storage().get();
}

// Prepares an out= tensor: same dtype as `dtype`, resized to `sizes`.
void prepare_out(const Tensor& out, ScalarType dtype, IntArrayRef sizes, const char* op);

// The functional form of an in-place op: `inplace` runs on a copy of self, whose result is
// returned or written into out= (resized). out is touched only once the op has succeeded.
template <typename F>
Tensor functional_from_inplace(const Tensor& self, const Tensor& out, const char* op, F&& inplace) {
  if (out.defined()) {
    check_out_dtype(out, self.dtype(), op);
  }
  Tensor r = native::clone(self);
  inplace(r);
  if (!out.defined()) return r;
  prepare_out(out, self.dtype(), self.sizes(), op);
  copy_into(out, r, op);
  return out;
}

}  // namespace native
}  // namespace ember
