// Splitting a tensor into views along one dim: unbind, split, split_with_sizes, chunk,
// tensor_split and hsplit / vsplit / dsplit. Every piece shares the input's storage.
#include <algorithm>

#include "autograd/derivatives/views.h"
#include "autograd/grad_mode.h"
#include "autograd/variable.h"
#include "core/shape.h"
#include "ops/views.h"

namespace ember {
namespace native {

namespace {

std::string list_str(IntArrayRef v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(v[i]);
  }
  return s + "]";
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

// unbind / split / split_with_sizes while recording: the pieces are computed with recording off
// and share one multi-output node (UnbindBackward0, SplitBackward0, SplitWithSizesBackward0).
template <typename Compute>
std::vector<Tensor> compute_pieces(Compute&& compute) {
  autograd::NoGradGuard no_grad;
  return compute();
}

}  // namespace

std::vector<Tensor> unbind(const Tensor& t, int64_t dim) {
  EMBER_CHECK_T(IndexError, t.dim() > 0, "[unbind] Dimension specified as ", dim,
                " but tensor has no dimensions");
  int64_t d = wrap_dim(dim, t.dim(), "unbind");
  if (autograd::should_record(t)) {
    return derivatives::unbind(t, d, compute_pieces([&] { return unbind(t, d); }));
  }
  std::vector<Tensor> out;
  out.reserve(t.size(d));
  for (int64_t i = 0; i < t.size(d); ++i) out.push_back(select(t, d, i));
  return out;
}

std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim) {
  EMBER_CHECK(t.dim() != 0, "[split] split expects at least a 1-dimensional tensor");
  EMBER_CHECK(split_size >= 0,
              "[split] split expects split_size be non-negative, but got "
              "split_size=",
              split_size);
  int64_t d = wrap_dim(dim, t.dim(), "split");
  const int64_t size = t.size(d);
  EMBER_CHECK(split_size > 0 || size == 0,
              "[split] split_size can only be 0 if dimension size "
              "is 0, but got dimension size of ",
              size);
  if (autograd::should_record(t)) {
    return derivatives::split_views("SplitBackward0", t, d,
                                    compute_pieces([&] { return split(t, split_size, d); }));
  }
  int64_t num_splits = 1;
  if (split_size > 0) num_splits = std::max<int64_t>((size + split_size - 1) / split_size, 1);
  std::vector<Tensor> out;
  out.reserve(num_splits);
  for (int64_t i = 0; i < num_splits; ++i) {
    int64_t start = i * split_size;
    int64_t length = std::min(split_size, size - start);
    out.push_back(slice(t, d, start, start + length, 1));
  }
  return out;
}

std::vector<Tensor> split_with_sizes(const Tensor& t, IntArrayRef split_sizes, int64_t dim) {
  EMBER_CHECK(t.dim() != 0, "[split_with_sizes] split expects at least a 1-dimensional tensor");
  int64_t d = wrap_dim(dim, t.dim(), "split_with_sizes");
  const int64_t size = t.size(d);
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    EMBER_CHECK(s >= 0,
                "[split_with_sizes] split_with_sizes expects split_sizes have only "
                "non-negative entries, but got split_sizes=",
                list_str(split_sizes));
    EMBER_CHECK(!__builtin_add_overflow(total, s, &total), "[split_with_sizes] split_sizes ",
                list_str(split_sizes), " overflow int64");
  }
  EMBER_CHECK(total == size,
              "[split_with_sizes] split_with_sizes expects split_sizes to sum "
              "exactly to ",
              size, " (input tensor's size at dimension ", d,
              "), but got "
              "split_sizes=",
              list_str(split_sizes));
  if (autograd::should_record(t)) {
    return derivatives::split_views("SplitWithSizesBackward0", t, d, compute_pieces([&] {
                                      return split_with_sizes(t, split_sizes, d);
                                    }));
  }
  std::vector<Tensor> out;
  out.reserve(split_sizes.size());
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    out.push_back(slice(t, d, start, start + s, 1));
    start += s;
  }
  return out;
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
    return split_with_sizes(t, sizes, d);
  }
  return split(t, split_size, d);
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
    out.push_back(slice(t, d, start, start + len, 1));
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
    out.push_back(slice(t, d, start, idx, 1));
    start = idx;
  }
  out.push_back(slice(t, d, start, std::nullopt, 1));
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
  if (ios.dim() == 0) return tensor_split(t, *ios.data<int64_t>(), dim);
  DimVector indices(ios.size(0));
  for (int64_t i = 0; i < ios.size(0); ++i) indices[i] = ios.data<int64_t>()[i * ios.stride(0)];
  return tensor_split_indices(t, indices, dim);
}

std::vector<Tensor> directional_split(const Tensor& t, char which, int64_t sections) {
  int64_t d = directional_dim(t, which);
  const char* name = split_name(which);
  EMBER_CHECK(sections != 0 && t.size(d) % sections == 0, "[", name, "] torch.", name,
              " attempted to split along dimension ", d, ", but the size of the dimension ",
              t.size(d), " is not divisible by the split_size ", sections, "!");
  return tensor_split(t, sections, d);
}

std::vector<Tensor> directional_split_indices(const Tensor& t, char which, IntArrayRef indices) {
  return tensor_split_indices(t, indices, directional_dim(t, which));
}

}  // namespace native
}  // namespace ember
