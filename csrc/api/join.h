// Public joining, reordering and triangular/diagonal ops (ops/join.h): the differentiable ones
// record their node here (api/join.cpp) and run the native op once; hstack / vstack / dstack /
// column_stack, fliplr, flipud, tile, diagflat, meshgrid, cartesian_prod and combinations are
// composites of public ops.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ops/join.h"

namespace ember {

// Type-promoting concatenation; 1-D tensors of shape (0,) are skipped like PyTorch's legacy rule.
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0, const Tensor& out = {});
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0, const Tensor& out = {});
Tensor hstack(const std::vector<Tensor>& tensors, const Tensor& out = {});
Tensor vstack(const std::vector<Tensor>& tensors, const Tensor& out = {});
Tensor dstack(const std::vector<Tensor>& tensors, const Tensor& out = {});
Tensor column_stack(const std::vector<Tensor>& tensors, const Tensor& out = {});

Tensor flip(const Tensor& t, IntArrayRef dims);
Tensor fliplr(const Tensor& t);
Tensor flipud(const Tensor& t);
// dims empty: roll the flattened tensor (one shift) and restore the shape.
Tensor roll(const Tensor& t, IntArrayRef shifts, IntArrayRef dims);
Tensor rot90(const Tensor& t, int64_t k, IntArrayRef dims);
Tensor repeat(const Tensor& t, IntArrayRef repeats);
Tensor tile(const Tensor& t, IntArrayRef reps);
Tensor repeat_interleave(const Tensor& t, int64_t repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size);
Tensor repeat_interleave(const Tensor& t, const Tensor& repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size);
// The one-argument form: repeat_interleave(repeats) == indices 0..n-1 repeated repeats[i] times.
Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> output_size);

Tensor tril(const Tensor& t, int64_t diagonal = 0, const Tensor& out = {});
Tensor triu(const Tensor& t, int64_t diagonal = 0, const Tensor& out = {});
Tensor& tril_(Tensor& t, int64_t diagonal = 0);
Tensor& triu_(Tensor& t, int64_t diagonal = 0);
Tensor diag(const Tensor& t, int64_t diagonal = 0, const Tensor& out = {});
Tensor diag_embed(const Tensor& t, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1);
Tensor diagflat(const Tensor& t, int64_t offset = 0);
Tensor trace(const Tensor& t);

// indexing: "ij" or "xy"; the results are expanded views of the inputs.
std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, const std::string& indexing);
Tensor cartesian_prod(const std::vector<Tensor>& tensors);
Tensor combinations(const Tensor& t, int64_t r = 2, bool with_replacement = false);

using native::CatContiguousFn;
using native::TriFn;

}  // namespace ember
