// Splitting a tensor into views along one dim: unbind, split and split_with_sizes. Every piece
// shares the input's storage. chunk, tensor_split and hsplit / vsplit / dsplit are composites of
// these and slice, public ops only (api/views.cpp).
#include <algorithm>

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

}  // namespace

std::vector<Tensor> unbind(const Tensor& t, int64_t dim) {
  EMBER_CHECK_T(IndexError, t.dim() > 0, "[unbind] Dimension specified as ", dim,
                " but tensor has no dimensions");
  int64_t d = wrap_dim(dim, t.dim(), "unbind");
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
  std::vector<Tensor> out;
  out.reserve(split_sizes.size());
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    out.push_back(slice(t, d, start, start + s, 1));
    start += s;
  }
  return out;
}

}  // namespace native
}  // namespace ember
