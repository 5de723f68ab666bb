// Public joining, reordering and triangular/diagonal ops: cat, stack, flip, roll, rot90, repeat,
// tril / triu, diag, diag_embed and trace record their node (autograd/derivatives/join*.cpp) and
// run the native op once; the *stack family, repeat_interleave and the other composites build
// their graph from public ops, as PyTorch's composites do.
#include "api/join.h"

#include <algorithm>

#include "api/autocast.h"
#include "api/creation.h"
#include "api/indexing.h"
#include "api/range_factories.h"
#include "api/shape_util.h"
#include "api/views.h"
#include "autograd/derivatives/join.h"
#include "autograd/variable.h"
#include "core/shape.h"

namespace ember {

namespace {

// The views hstack / vstack / dstack concatenate (recorded, so each input gets its gradient
// through its own view node).
Tensor atleast_nd(const Tensor& t, int n) {
  if (t.dim() >= n) return t;
  if (n == 1) return ember::reshape(t, {1});
  if (n == 2) return t.dim() == 0 ? ember::reshape(t, {1, 1}) : ember::unsqueeze(t, 0);
  // n == 3: 0-d -> (1, 1, 1); (k,) -> (1, k, 1); (m, k) -> (m, k, 1).
  if (t.dim() == 0) return ember::reshape(t, {1, 1, 1});
  if (t.dim() == 1) return ember::unsqueeze(ember::unsqueeze(t, 0), 2);
  return ember::unsqueeze(t, 2);
}

std::vector<Tensor> atleast_all(const std::vector<Tensor>& tensors, int n) {
  std::vector<Tensor> r;
  r.reserve(tensors.size());
  for (const Tensor& t : tensors) r.push_back(atleast_nd(t, n));
  return r;
}

}  // namespace

// ---- cat and the *stack family ----

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim, const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: promote
    const std::vector<Tensor> cast = autocast::cast(tensors, autocast::promote_type(tensors));
    autocast::ExcludeGuard no_autocast;
    return ember::cat(cast, dim);
  }
  if (autograd::should_record_list(tensors)) {
    return derivatives::cat(tensors, dim, out, "cat",
                            [&] { return native::cat(tensors, dim, out); });
  }
  return native::cat(tensors, dim, out);
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim, const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: promote
    const std::vector<Tensor> cast = autocast::cast(tensors, autocast::promote_type(tensors));
    autocast::ExcludeGuard no_autocast;
    return ember::stack(cast, dim);
  }
  if (autograd::should_record_list(tensors)) {
    return derivatives::stack(tensors, dim, out, [&] { return native::stack(tensors, dim, out); });
  }
  return native::stack(tensors, dim, out);
}

// hstack / vstack / dstack / column_stack while recording: CatBackward0 over the recorded views
// of the inputs; the native op computes the result (and raises for an empty list, which never
// records).
Tensor hstack(const std::vector<Tensor>& tensors, const Tensor& out) {
  if (!autograd::should_record_list(tensors)) return native::hstack(tensors, out);
  const std::vector<Tensor> parts = atleast_all(tensors, 1);
  return derivatives::cat(parts, parts[0].dim() == 1 ? 0 : 1, out, "hstack",
                          [&] { return native::hstack(tensors, out); });
}

Tensor vstack(const std::vector<Tensor>& tensors, const Tensor& out) {
  if (!autograd::should_record_list(tensors)) return native::vstack(tensors, out);
  return derivatives::cat(atleast_all(tensors, 2), 0, out, "vstack",
                          [&] { return native::vstack(tensors, out); });
}

Tensor dstack(const std::vector<Tensor>& tensors, const Tensor& out) {
  if (!autograd::should_record_list(tensors)) return native::dstack(tensors, out);
  return derivatives::cat(atleast_all(tensors, 3), 2, out, "dstack",
                          [&] { return native::dstack(tensors, out); });
}

Tensor column_stack(const std::vector<Tensor>& tensors, const Tensor& out) {
  if (!autograd::should_record_list(tensors)) return native::column_stack(tensors, out);
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) {
    parts.push_back(t.dim() <= 1 ? ember::reshape(t, {t.numel(), 1}) : t);
  }
  return derivatives::cat(parts, 1, out, "column_stack",
                          [&] { return native::column_stack(tensors, out); });
}

// ---- reordering ----

Tensor flip(const Tensor& t, IntArrayRef dims) {
  if (autograd::should_record(t)) return derivatives::flip(t, dims);
  return native::flip(t, dims);
}

Tensor fliplr(const Tensor& t) {
  EMBER_CHECK(t.dim() >= 2, "[fliplr] Input must be >= 2-d.");
  return ember::flip(t, {1});
}

Tensor flipud(const Tensor& t) {
  EMBER_CHECK(t.dim() >= 1, "[flipud] Input must be >= 1-d.");
  return ember::flip(t, {0});
}

Tensor roll(const Tensor& t, IntArrayRef shifts, IntArrayRef dims) {
  if (autograd::should_record(t)) return derivatives::roll(t, shifts, dims);
  return native::roll(t, shifts, dims);
}

Tensor rot90(const Tensor& t, int64_t k, IntArrayRef dims) {
  if (autograd::should_record(t)) return derivatives::rot90(t, k, dims);
  return native::rot90(t, k, dims);
}

Tensor repeat(const Tensor& t, IntArrayRef repeats) {
  if (autograd::should_record(t)) return derivatives::repeat(t, repeats);
  return native::repeat(t, repeats);
}

Tensor tile(const Tensor& t, IntArrayRef reps) {
  DimVector r(reps);
  while (static_cast<int64_t>(r.size()) < t.dim()) r.insert(0, 1);
  return ember::repeat(t, r);
}

Tensor repeat_interleave(const Tensor& t, int64_t repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  if (!autograd::should_record(t)) return native::repeat_interleave(t, repeats, dim, output_size);
  // Recorded as PyTorch's composite: each slice broadcast `repeats` times along a new dim,
  // copied, and the pair of dims merged (ViewBackward0 <- CloneBackward0 <- ExpandBackward0).
  // The checks are native's, in its order.
  const char* op = "repeat_interleave";
  EMBER_CHECK(repeats >= 0, "[repeat_interleave] Repeats must be non-negative");
  const Tensor in = (!dim || t.dim() == 0) ? ember::reshape(t, {-1}) : t;
  const int64_t d = dim ? wrap_dim(*dim, t.dim(), op) : 0;
  DimVector shape(in.sizes()), split(in.sizes());
  int64_t total;
  EMBER_CHECK(!__builtin_mul_overflow(shape[d], repeats, &total), "[", op,
              "] output size overflows int64");
  shape[d] = total;
  split.insert(d + 1, repeats);
  if (output_size) {
    EMBER_CHECK(*output_size == total, "[repeat_interleave] Invalid output_size, expected ", total,
                " but got ", *output_size);
  }
  return ember::reshape(ember::clone(ember::expand(ember::unsqueeze(in, d + 1), split)), shape);
}

Tensor repeat_interleave(const Tensor& t, const Tensor& repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  if (!autograd::should_record(t)) return native::repeat_interleave(t, repeats, dim, output_size);
  const native::RepeatInterleavePlan plan =
      native::plan_repeat_interleave(t, repeats, dim, output_size);
  if (plan.count) return ember::repeat_interleave(t, *plan.count, dim, output_size);
  // Slices of t (flattened without dim) picked by index: IndexSelectBackward0.
  const Tensor in = (!dim || t.dim() == 0) ? ember::reshape(t, {-1}) : t;
  return derivatives::index_select_slices(in, plan.dim, native::int64_tensor(plan.index), [&] {
    return native::gather_slices(in, plan.dim, plan.index, "repeat_interleave");
  });
}

Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> output_size) {
  return native::repeat_interleave(repeats, output_size);  // integer indices: no gradient
}

// ---- triangular / diagonal ----

Tensor tril(const Tensor& t, int64_t diagonal, const Tensor& out) {
  if (autograd::should_record(t)) return derivatives::tril(t, diagonal, out);
  return native::tril(t, diagonal, out);
}

Tensor triu(const Tensor& t, int64_t diagonal, const Tensor& out) {
  if (autograd::should_record(t)) return derivatives::triu(t, diagonal, out);
  return native::triu(t, diagonal, out);
}

Tensor& tril_(Tensor& t, int64_t diagonal) {
  if (autograd::should_record(t)) {
    derivatives::tril(t, diagonal, t);
    return t;
  }
  return native::tril_(t, diagonal);
}

Tensor& triu_(Tensor& t, int64_t diagonal) {
  if (autograd::should_record(t)) {
    derivatives::triu(t, diagonal, t);
    return t;
  }
  return native::triu_(t, diagonal);
}

Tensor diag(const Tensor& t, int64_t diagonal, const Tensor& out) {
  // Native raises for other ranks, before out= is looked at.
  if ((t.dim() == 1 || t.dim() == 2) && autograd::should_record(t)) {
    return derivatives::diag(t, diagonal, out);
  }
  return native::diag(t, diagonal, out);
}

Tensor diag_embed(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2) {
  if (autograd::should_record(t)) return derivatives::diag_embed(t, offset, dim1, dim2);
  return native::diag_embed(t, offset, dim1, dim2);
}

Tensor diagflat(const Tensor& t, int64_t offset) {
  return ember::diag(ember::reshape(t, {-1}), offset);
}

Tensor trace(const Tensor& t) {
  if (autocast::active()) {  // autocast: float32
    const Tensor t2 = autocast::to_fp32(t);
    autocast::ExcludeGuard no_autocast;
    return ember::trace(t2);
  }
  if (autograd::should_record(t)) return derivatives::trace(t);
  return native::trace(t);
}

// ---- grids and combinations ----

std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, const std::string& indexing) {
  EMBER_CHECK(!tensors.empty(), "[meshgrid] meshgrid expects a non-empty TensorList");
  EMBER_CHECK(indexing == "ij" || indexing == "xy",
              "[meshgrid] torch.meshgrid: indexing must "
              "be one of \"xy\" or \"ij\", but received: ",
              indexing);
  for (const Tensor& t : tensors) {
    EMBER_CHECK(t.dtype() == tensors[0].dtype(),
                "[meshgrid] meshgrid expects all tensors to "
                "have the same dtype");
    EMBER_CHECK(t.device() == tensors[0].device(),
                "[meshgrid] meshgrid expects all tensors to "
                "have the same device");
    EMBER_CHECK(t.dim() <= 1,
                "[meshgrid] Expected 0D or 1D tensor in the tensor list but got: ", t.dim(), "D");
  }
  // "xy" is "ij" with the first two inputs swapped, then the first two grids swapped back (the
  // results are the same expanded views as PyTorch's).
  std::vector<Tensor> ins = tensors;
  const bool swap = indexing == "xy" && ins.size() >= 2;
  if (swap) std::swap(ins[0], ins[1]);
  const int64_t n = static_cast<int64_t>(ins.size());
  DimVector shape(n);
  for (int64_t i = 0; i < n; ++i) shape[i] = ins[i].numel();
  std::vector<Tensor> grids;
  for (int64_t i = 0; i < n; ++i) {
    DimVector vshape(n, 1);
    vshape[i] = shape[i];
    grids.push_back(ember::expand(ember::view(ins[i], vshape), shape));
  }
  if (swap) std::swap(grids[0], grids[1]);
  return grids;
}

Tensor cartesian_prod(const std::vector<Tensor>& tensors) {
  for (const Tensor& t : tensors) {
    EMBER_CHECK(t.dim() == 1, "[cartesian_prod] Expect a 1D vector, but got shape ",
                torch_shape_str(t.sizes()));
  }
  EMBER_CHECK(!tensors.empty(), "[cartesian_prod] expects a non-empty TensorList");
  if (tensors.size() == 1) return tensors[0];
  std::vector<Tensor> grids = ember::meshgrid(tensors, "ij");
  for (Tensor& g : grids) g = ember::reshape(g, {-1});
  return ember::stack(grids, 1);
}

Tensor combinations(const Tensor& t, int64_t r, bool with_replacement) {
  // Native checks the arguments (and gives r == 0 its empty result, which has no gradient).
  if (t.dim() != 1 || r == 0 || !autograd::should_record(t)) {
    return native::combinations(t, r, with_replacement);
  }
  // Recorded as advanced indexing with a (count, r) index (IndexBackward0, as PyTorch): the
  // combinations of the positions 0..n-1, which native computes (and checks) like t's own.
  const Tensor positions = arange(0, t.size(0), 1, TensorOptions(ScalarType::Int64));
  const Tensor index = native::combinations(positions, r, with_replacement);
  return ember::getitem(t, {TensorIndex::tensor_index(index)});
}

}  // namespace ember
