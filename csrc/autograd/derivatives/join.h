// Derivatives of the joining, reordering, triangular/diagonal and ordering ops (api/join.cpp,
// api/sort.cpp).
// The derivative table is one wrapper per differentiable op (docs/design/autograd.md): the
// public op calls its wrapper when recording is on (autograd::should_record); the wrapper runs
// the native op once with recording off and attaches the op's node, whose formula uses public
// ops only, so create_graph=True gives higher-order gradients.
//
// Composites need no wrapper: hstack/vstack/dstack/column_stack (views + cat), fliplr/flipud
// (flip), tile (repeat), diagflat (reshape + diag), meshgrid (view + expand), cartesian_prod
// (meshgrid + stack), combinations (advanced indexing), repeat_interleave with one count
// (unsqueeze + expand + clone + reshape), msort (sort).
#pragma once
#include <functional>
#include <optional>
#include <tuple>
#include <vector>

#include "core/tensor.h"

namespace ember {
namespace derivatives {

// A forward computation run with recording off (the op's own code path).
using Forward = std::function<Tensor()>;

// ---- joining (join.cpp) ----
// CatBackward0 for cat and the *stack ops built on it; `forward` (native) concatenates
// `tensors` (the *stack ops: the views of their inputs that they concatenate).
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim, const Tensor& out, const char* op,
           const Forward& forward);
// StackBackward0; `forward` (native) stacks `tensors`. dim may be negative (relative to the
// result's rank).
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim, const Tensor& out,
             const Forward& forward);

// ---- reordering (join_reorder.cpp) ----
Tensor flip(const Tensor& t, IntArrayRef dims);
Tensor roll(const Tensor& t, IntArrayRef shifts, IntArrayRef dims);
Tensor rot90(const Tensor& t, int64_t k, IntArrayRef dims);
Tensor repeat(const Tensor& t, IntArrayRef repeats);
// repeat_interleave with a repeats tensor: IndexSelectBackward0 over `index` (the selected
// slices of t along dim; `forward` gathers them).
Tensor index_select_slices(const Tensor& t, int64_t dim, const Tensor& index,
                           const Forward& forward);

// ---- triangular / diagonal (join_diag.cpp) ----
Tensor tril(const Tensor& t, int64_t diagonal, const Tensor& out);
Tensor triu(const Tensor& t, int64_t diagonal, const Tensor& out);
Tensor diag(const Tensor& t, int64_t diagonal, const Tensor& out);
Tensor diag_embed(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2);
Tensor trace(const Tensor& t);
// The diagonal `offset` of t over (dim1, dim2) (wrapped, distinct) as a view recorded with
// diagonal_backward as its formula (einsum and the formulas here use it).
Tensor diagonal_recorded(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2);
// Zeros of `sizes` with `g` written on the diagonal (offset, dim1, dim2): the gradient of a
// diagonal. Differentiable in g.
Tensor diagonal_backward(const Tensor& g, IntArrayRef sizes, int64_t offset, int64_t dim1,
                         int64_t dim2);

// ---- ordering (sort.cpp) ----
std::tuple<Tensor, Tensor> sort(const Tensor& t, int64_t dim, bool descending, bool stable,
                                const Tensor& values_out, const Tensor& indices_out);
std::tuple<Tensor, Tensor> topk(const Tensor& t, int64_t k, std::optional<int64_t> dim,
                                bool largest, bool sorted, const Tensor& values_out,
                                const Tensor& indices_out);
std::tuple<Tensor, Tensor> kthvalue(const Tensor& t, int64_t k, std::optional<int64_t> dim,
                                    bool keepdim, const Tensor& values_out,
                                    const Tensor& indices_out);

}  // namespace derivatives
}  // namespace ember
