// Public views and copies: each computes its result with the native op, then, when recording,
// attaches its node (Note [Views and Autograd] in docs/design/autograd.md); plus the composite
// views (Tensor.T / H / mT / mH / adjoint, movedim, broadcast_*, chunk, tensor_split, h/v/dsplit).
#include "api/views.h"

#include <algorithm>
#include <numeric>

#include "autograd/derivatives/views.h"
#include "autograd/variable.h"
#include "core/shape.h"

namespace ember {

namespace {

// reshape and flatten give a view when the strides allow one, else a copy (UnsafeViewBackward0,
// as PyTorch).
const char* reshape_node_name(const Tensor& t, const Tensor& result) {
  return result.storage() == t.storage() ? "ViewBackward0" : "UnsafeViewBackward0";
}

// Ember has no lazy conjugate bit: Tensor.H / mH / adjoint of a complex tensor materialise the
// conjugate (ConjBackward0 when recording, as PyTorch's conj() node).
Tensor conj_if_complex(const Tensor& t) {
  if (!t.is_complex()) return t;
  if (autograd::should_record(t)) return derivatives::conj_copy(t, conj_if_complex);
  return native::conj_copy(t);
}

const char* split_name(char which) {
  return which == 'h' ? "hsplit" : which == 'v' ? "vsplit" : "dsplit";
}

// The dim hsplit / vsplit / dsplit work along, after checking the input's rank.
int64_t directional_dim(const Tensor& t, char which) {
  const int64_t min_dims = which == 'h' ? 1 : which == 'v' ? 2 : 3;
  const char* name = split_name(which);
  if (which == 'h') {
    EMBER_CHECK(t.dim() >= 1, "[", name,
                "] torch.hsplit requires a tensor with at least 1 "
                "dimension, but got a tensor with ",
                t.dim(), " dimensions!");
  } else {
    EMBER_CHECK(t.dim() >= min_dims, "[", name, "] torch.", name,
                " requires a tensor with at "
                "least ",
                min_dims, " dimension, but got a tensor with ", t.dim(), " dimensions!");
  }
  if (which == 'h') return t.dim() == 1 ? 0 : 1;
  return which == 'v' ? 0 : 2;
}

}  // namespace

// ---- views with a node of their own ----

Tensor alias(const Tensor& t) {
  Tensor r = native::alias(t);
  return autograd::should_record(t) ? derivatives::alias(t, r) : r;
}

Tensor as_strided(const Tensor& t, IntArrayRef sizes, IntArrayRef strides,
                  std::optional<int64_t> storage_offset) {
  Tensor r = native::as_strided(t, sizes, strides, storage_offset);
  return autograd::should_record(t) ? derivatives::view_generic("AsStridedBackward0", t, r) : r;
}

Tensor view(const Tensor& t, IntArrayRef shape) {
  Tensor r = native::view(t, shape);
  return autograd::should_record(t) ? derivatives::view_like_reshape("ViewBackward0", t, r) : r;
}

Tensor reshape(const Tensor& t, IntArrayRef shape) {
  Tensor r = native::reshape(t, shape);
  if (!autograd::should_record(t)) return r;
  return derivatives::view_like_reshape(reshape_node_name(t, r), t, r);
}

Tensor flatten(const Tensor& t, int64_t start_dim, int64_t end_dim) {
  Tensor r = native::flatten(t, start_dim, end_dim);
  if (!autograd::should_record(t)) return r;
  return derivatives::view_like_reshape(reshape_node_name(t, r), t, r);
}

Tensor transpose(const Tensor& t, int64_t dim0, int64_t dim1) {
  Tensor r = native::transpose(t, dim0, dim1);
  if (!autograd::should_record(t)) return r;
  if (t.dim() == 0) return derivatives::alias(t, r);  // a 0-d transpose is an alias
  std::vector<int64_t> perm(static_cast<size_t>(t.dim()));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[static_cast<size_t>(wrap_dim(dim0, t.dim(), "transpose"))],
            perm[static_cast<size_t>(wrap_dim(dim1, t.dim(), "transpose"))]);
  return derivatives::view_permuted("TransposeBackward0", t, r, perm);
}

Tensor permute(const Tensor& t, IntArrayRef dims) {
  if (!autograd::should_record(t)) return native::permute(t, dims);
  // The node's permutation. Wrapping checks each dim before native checks their count (the order
  // a recorded permute has always reported errors in).
  std::vector<int64_t> perm;
  for (int64_t d : dims) perm.push_back(wrap_dim(d, t.dim(), "permute"));
  return derivatives::view_permuted("PermuteBackward0", t, native::permute(t, dims), perm);
}

Tensor expand(const Tensor& t, IntArrayRef sizes) {
  Tensor r = native::expand(t, sizes);
  return autograd::should_record(t) ? derivatives::view_expanded(t, r) : r;
}

Tensor squeeze(const Tensor& t) {
  Tensor r = native::squeeze(t);
  return autograd::should_record(t) ? derivatives::view_like_reshape("SqueezeBackward0", t, r) : r;
}

Tensor squeeze(const Tensor& t, IntArrayRef dims) {
  Tensor r = native::squeeze(t, dims);
  return autograd::should_record(t) ? derivatives::view_like_reshape("SqueezeBackward1", t, r) : r;
}

Tensor unsqueeze(const Tensor& t, int64_t dim) {
  Tensor r = native::unsqueeze(t, dim);
  if (!autograd::should_record(t)) return r;
  return derivatives::view_like_reshape("UnsqueezeBackward0", t, r);
}

Tensor select(const Tensor& t, int64_t dim, int64_t index) {
  Tensor r = native::select(t, dim, index);  // validates dim and index
  if (!autograd::should_record(t)) return r;
  const int64_t d = wrap_dim(dim, t.dim(), "select");
  return derivatives::select(t, d, index < 0 ? index + t.size(d) : index, r);
}

Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length) {
  // Recorded as the slice it is (SliceBackward0, as PyTorch).
  Tensor r = native::narrow(t, dim, start, length);  // validates dim, start and length
  if (!autograd::should_record(t)) return r;
  const int64_t d = wrap_dim(dim, t.dim(), "narrow");
  return derivatives::slice(t, d, start < 0 ? start + t.size(d) : start, 1, r);
}

Tensor narrow_copy(const Tensor& t, int64_t dim, int64_t start, int64_t length, const Tensor& out) {
  if (autograd::should_record(t)) return derivatives::narrow_copy(t, dim, start, length, out);
  return native::narrow_copy(t, dim, start, length, out);
}

Tensor slice(const Tensor& t, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
             int64_t step) {
  Tensor r = native::slice(t, dim, start, end, step);  // validates step and dim
  if (!autograd::should_record(t)) return r;
  // The node takes the wrapped dim and the start clamped into [0, size], as native computes them.
  const int64_t d = wrap_dim(dim, t.dim(), "slice");
  const int64_t size = t.size(d);
  int64_t s = start.value_or(0);
  if (s < 0) s += size;
  return derivatives::slice(t, d, std::clamp<int64_t>(s, 0, size), step, r);
}

Tensor unflatten(const Tensor& t, int64_t dim, IntArrayRef sizes) {
  Tensor r = native::unflatten(t, dim, sizes);  // a view of t with the dim split
  return autograd::should_record(t) ? derivatives::view_like_reshape("ViewBackward0", t, r) : r;
}

Tensor matrix_t(const Tensor& t) {
  Tensor r = native::matrix_t(t);
  return autograd::should_record(t) ? derivatives::matrix_t(t, r) : r;
}

Tensor& matrix_t_(Tensor& t) {
  // Native raises for more than 2 dims, before any in-place check.
  if (t.dim() <= 2 && autograd::should_record(t)) return derivatives::matrix_t_(t);
  return native::matrix_t_(t);
}

Tensor diagonal(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2) {
  Tensor r = native::diagonal(t, offset, dim1, dim2);  // validates the dims
  if (!autograd::should_record(t)) return r;
  const int64_t d1 = wrap_dim(dim1, t.dim(), "diagonal"), d2 = wrap_dim(dim2, t.dim(), "diagonal");
  return derivatives::diagonal(t, offset, d1, d2, r);
}

Tensor unfold(const Tensor& t, int64_t dimension, int64_t size, int64_t step) {
  Tensor r = native::unfold(t, dimension, size, step);  // validates
  if (!autograd::should_record(t)) return r;
  return derivatives::unfold(t, wrap_dim(dimension, t.dim(), "unfold"), size, step, r);
}

// ---- composite views ----

Tensor numpy_T(const Tensor& t) {
  DimVector dims(t.dim());
  for (int64_t i = 0; i < t.dim(); ++i) dims[i] = t.dim() - 1 - i;
  return ember::permute(t, dims);
}

Tensor mT(const Tensor& t) {
  if (t.dim() < 2) return native::mT(t);  // a 0-d t itself; raises for 1-d
  return ember::transpose(t, -2, -1);
}

Tensor matrix_H(const Tensor& t) {
  EMBER_CHECK(t.dim() == 2 || t.dim() == 0,
              "[H] tensor.H is only supported on matrices (2-D "
              "tensors). Got ",
              t.dim(), "-D tensor.",
              t.dim() > 2 ? " For batches of matrices, consider using tensor.mH" : "");
  if (t.dim() == 0) return conj_if_complex(t);  // PyTorch returns a real 0-d t itself
  return conj_if_complex(ember::transpose(t, 0, 1));
}

Tensor mH(const Tensor& t) {
  if (t.dim() == 1) return native::mH(t);  // raises
  // A 0-d tensor is its own (conjugate) transpose, as in PyTorch (deprecated there).
  return conj_if_complex(t.dim() == 0 ? t : ember::transpose(t, -2, -1));
}

Tensor adjoint(const Tensor& t) {
  if (t.dim() == 1) return native::adjoint(t);  // raises
  return conj_if_complex(t.dim() == 0 ? t : ember::transpose(t, -2, -1));
}

Tensor movedim(const Tensor& t, IntArrayRef source, IntArrayRef destination) {
  const DimVector order = native::movedim_permutation(t, source, destination);
  return t.dim() == 0 ? ember::alias(t) : ember::permute(t, order);
}

Tensor broadcast_to(const Tensor& t, IntArrayRef shape) {
  return ember::expand(t, shape);
}

std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& tensors) {
  DimVector shape;
  for (const Tensor& t : tensors) shape = broadcast_shapes(shape, t.sizes(), "broadcast_tensors");
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(ember::expand(t, shape));
  return out;
}

// ---- splitting: unbind / split / split_with_sizes share one multi-output node for all their
// pieces (UnbindBackward0, SplitBackward0, SplitWithSizesBackward0); tensor_split and h/v/dsplit
// pieces are separate slices (SliceBackward0 each), as PyTorch ----

std::vector<Tensor> unbind(const Tensor& t, int64_t dim) {
  std::vector<Tensor> pieces = native::unbind(t, dim);  // validates dim
  if (!autograd::should_record(t)) return pieces;
  return derivatives::unbind(t, wrap_dim(dim, t.dim(), "unbind"), std::move(pieces));
}

std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim) {
  std::vector<Tensor> pieces = native::split(t, split_size, dim);  // validates
  if (!autograd::should_record(t)) return pieces;
  return derivatives::split_views("SplitBackward0", t, wrap_dim(dim, t.dim(), "split"),
                                  std::move(pieces));
}

std::vector<Tensor> split_with_sizes(const Tensor& t, IntArrayRef split_sizes, int64_t dim) {
  std::vector<Tensor> pieces = native::split_with_sizes(t, split_sizes, dim);  // validates
  if (!autograd::should_record(t)) return pieces;
  return derivatives::split_views("SplitWithSizesBackward0", t,
                                  wrap_dim(dim, t.dim(), "split_with_sizes"), std::move(pieces));
}

std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim) {
  EMBER_CHECK(t.dim() != 0, "[chunk] chunk expects at least a 1-dimensional tensor");
  EMBER_CHECK(chunks > 0, "[chunk] chunk expects `chunks` to be greater than 0, got: ", chunks);
  int64_t d = wrap_dim(dim, t.dim(), "chunk");
  const int64_t size = t.size(d);
  const int64_t split_size = (size + chunks - 1) / chunks;
  // An empty dim still yields `chunks` empty pieces, as PyTorch does.
  if (split_size == 0 && size == 0) {
    DimVector sizes(chunks, 0);
    return ember::split_with_sizes(t, sizes, d);
  }
  return ember::split(t, split_size, d);
}

std::vector<Tensor> tensor_split(const Tensor& t, int64_t sections, int64_t dim) {
  EMBER_CHECK(t.dim() > 0,
              "[tensor_split] tensor_split expected at least a 1-dimensional "
              "tensor, but got a tensor with ",
              t.dim(), " dims");
  EMBER_CHECK(sections > 0, "[tensor_split] number of sections must be larger than 0, got ",
              sections);
  int64_t d = wrap_dim(dim, t.dim(), "tensor_split");
  const int64_t size = t.size(d);
  // The first size % sections pieces get one extra element.
  const int64_t min_size = size / sections, extra = size % sections;
  std::vector<Tensor> out;
  out.reserve(sections);
  int64_t start = 0;
  for (int64_t i = 0; i < sections; ++i) {
    int64_t len = min_size + (i < extra ? 1 : 0);
    out.push_back(ember::slice(t, d, start, start + len, 1));
    start += len;
  }
  return out;
}

std::vector<Tensor> tensor_split_indices(const Tensor& t, IntArrayRef indices, int64_t dim) {
  EMBER_CHECK(t.dim() > 0,
              "[tensor_split] tensor_split expected at least a 1-dimensional "
              "tensor, but got a tensor with ",
              t.dim(), " dims");
  int64_t d = wrap_dim(dim, t.dim(), "tensor_split");
  std::vector<Tensor> out;
  out.reserve(indices.size() + 1);
  // Each piece is the Python slice [previous index : index] (negative indices wrap, bounds clamp).
  std::optional<int64_t> start = 0;
  for (int64_t idx : indices) {
    out.push_back(ember::slice(t, d, start, idx, 1));
    start = idx;
  }
  out.push_back(ember::slice(t, d, start, std::nullopt, 1));
  return out;
}

std::vector<Tensor> tensor_split(const Tensor& t, const Tensor& indices_or_sections, int64_t dim) {
  const Tensor& ios = indices_or_sections;
  EMBER_CHECK(ios.device().is_cpu(),
              "[tensor_split] tensor_split expected "
              "tensor_indices_or_sections to be on cpu, but it's on ",
              ios.device().str());
  EMBER_CHECK(ios.dtype() == ScalarType::Int64,
              "[tensor_split] tensor_split expected "
              "tensor_indices_or_sections to have dtype of long, but got ",
              dtype_name(ios.dtype()));
  EMBER_CHECK(ios.dim() <= 1,
              "[tensor_split] tensor_split expected tensor_indices_or_sections to "
              "be a zero-dimensional or one-dimensional tensor, but got a tensor with ",
              ios.dim(), " dims");
  if (ios.dim() == 0) return ember::tensor_split(t, *ios.data<int64_t>(), dim);
  DimVector indices(ios.size(0));
  for (int64_t i = 0; i < ios.size(0); ++i) indices[i] = ios.data<int64_t>()[i * ios.stride(0)];
  return ember::tensor_split_indices(t, indices, dim);
}

std::vector<Tensor> directional_split(const Tensor& t, char which, int64_t sections) {
  int64_t d = directional_dim(t, which);
  const char* name = split_name(which);
  EMBER_CHECK(sections != 0 && t.size(d) % sections == 0, "[", name, "] torch.", name,
              " attempted to split along dimension ", d, ", but the size of the dimension ",
              t.size(d), " is not divisible by the split_size ", sections, "!");
  return ember::tensor_split(t, sections, d);
}

std::vector<Tensor> directional_split_indices(const Tensor& t, char which, IntArrayRef indices) {
  return ember::tensor_split_indices(t, indices, directional_dim(t, which));
}

// ---- copies ----

Tensor contiguous(const Tensor& t) {
  if (t.is_contiguous()) return t;  // no copy, so no node
  if (autograd::should_record(t)) return derivatives::contiguous(t);
  return native::contiguous(t);
}

Tensor clone(const Tensor& t) {
  if (autograd::should_record(t)) return derivatives::clone(t);
  return native::clone(t);
}

Tensor to_dtype(const Tensor& t, ScalarType dtype, bool copy) {
  // Returning t itself records nothing.
  if ((t.dtype() != dtype || copy) && autograd::should_record(t)) {
    return derivatives::to_dtype(t, dtype, copy);
  }
  return native::to_dtype(t, dtype, copy);
}

Tensor& copy_(Tensor& dst, const Tensor& src) {
  // dst.copy_(dst) changes nothing and records nothing.
  if (!dst.is_same(src) && autograd::should_record(dst, src)) return derivatives::copy_(dst, src);
  return native::copy_(dst, src);
}

}  // namespace ember
