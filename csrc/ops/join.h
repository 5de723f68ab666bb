// Joining, reordering and triangular/diagonal ops: cat and the *stack family, flip, roll, rot90,
// repeat, repeat_interleave, tril/triu, diag, diag_embed, trace, combinations. PyTorch semantics;
// each op that has out= takes `out` (undefined: allocate). The composites fliplr, flipud, tile,
// diagflat, meshgrid and cartesian_prod are public ops only (api/join.h).
#pragma once
#include <optional>
#include <vector>

#include "core/tensor.h"
#include "dispatch/stub.h"
#include "kernels/join_stubs.h"

namespace ember {
namespace native {

// Type-promoting concatenation; 1-D tensors of shape (0,) are skipped like PyTorch's legacy rule.
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0, const Tensor& out = {});
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0, const Tensor& out = {});
Tensor hstack(const std::vector<Tensor>& tensors, const Tensor& out = {});
Tensor vstack(const std::vector<Tensor>& tensors, const Tensor& out = {});
Tensor dstack(const std::vector<Tensor>& tensors, const Tensor& out = {});
Tensor column_stack(const std::vector<Tensor>& tensors, const Tensor& out = {});

Tensor flip(const Tensor& t, IntArrayRef dims);
// dims empty: roll the flattened tensor (one shift) and restore the shape.
Tensor roll(const Tensor& t, IntArrayRef shifts, IntArrayRef dims);
Tensor rot90(const Tensor& t, int64_t k, IntArrayRef dims);
Tensor repeat(const Tensor& t, IntArrayRef repeats);
Tensor repeat_interleave(const Tensor& t, int64_t repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size);
Tensor repeat_interleave(const Tensor& t, const Tensor& repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size);
// The one-argument form: repeat_interleave(repeats) == indices 0..n-1 repeated repeats[i] times.
Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> output_size);
// repeat_interleave(t, repeats tensor, dim, output_size) checked (in the op's order) and planned:
// `count` is set when repeats holds one count (the int form then applies); otherwise index[i] is
// the input slice along `dim` that output slice i copies.
struct RepeatInterleavePlan {
  int64_t dim = 0;
  std::optional<int64_t> count;
  std::vector<int64_t> index;
};
RepeatInterleavePlan plan_repeat_interleave(const Tensor& t, const Tensor& repeats,
                                            std::optional<int64_t> dim,
                                            std::optional<int64_t> output_size);

Tensor tril(const Tensor& t, int64_t diagonal = 0, const Tensor& out = {});
Tensor triu(const Tensor& t, int64_t diagonal = 0, const Tensor& out = {});
Tensor& tril_(Tensor& t, int64_t diagonal = 0);
Tensor& triu_(Tensor& t, int64_t diagonal = 0);
Tensor diag(const Tensor& t, int64_t diagonal = 0, const Tensor& out = {});
Tensor diag_embed(const Tensor& t, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1);
Tensor trace(const Tensor& t);

Tensor combinations(const Tensor& t, int64_t r = 2, bool with_replacement = false);

// The kernel stubs are in kernels/join_stubs.h.

}  // namespace native
}  // namespace ember
