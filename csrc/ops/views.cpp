#include "ops/views.h"

#include <algorithm>

#include "core/factory.h"
#include "core/shape.h"
#include "dispatch/copy.h"
#include "ops/creation.h"

namespace ember {
namespace native {

Tensor alias(const Tensor& t) {
  return make_view(t, t.sizes(), t.strides(), t.storage_offset());
}

Tensor as_strided(const Tensor& t, IntArrayRef sizes, IntArrayRef strides,
                  std::optional<int64_t> storage_offset) {
  const char* op = "as_strided";
  EMBER_CHECK(sizes.size() == strides.size(), "[", op, "] mismatch in length of strides (",
              strides.size(), ") and shape (", sizes.size(), ")");
  int64_t offset = storage_offset.value_or(t.storage_offset());
  EMBER_CHECK(offset >= 0, "[", op, "] Tensor: invalid storage offset ", offset);
  checked_numel(sizes, op);
  // The view must stay inside the storage.
  int64_t last = offset;
  bool empty = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    EMBER_CHECK(strides[i] >= 0, "[", op, "] negative strides are not supported, got ", strides[i],
                " at dim ", i);
    if (sizes[i] == 0) empty = true;
    int64_t span;
    EMBER_CHECK(!__builtin_mul_overflow(sizes[i] - 1, strides[i], &span) &&
                    !__builtin_add_overflow(last, span, &last),
                "[", op, "] size ", shape_str(sizes), " with strides ", shape_str(strides),
                " overflows");
  }
  if (!empty) {
    int64_t avail = static_cast<int64_t>(t.storage()->nbytes() / t.itemsize());
    EMBER_CHECK(last < avail, "[", op, "] setStorage: sizes ", shape_str(sizes), ", strides ",
                shape_str(strides), ", storage offset ", offset, " and itemsize ", t.itemsize(),
                " requiring a storage size of ", (last + 1) * int64_t(t.itemsize()),
                " are out of bounds for storage of size ", t.storage()->nbytes());
  }
  return make_view(t, sizes, strides, offset);
}

std::optional<DimVector> compute_view_strides(IntArrayRef sizes, IntArrayRef strides,
                                              IntArrayRef shape, int64_t* bad_dim) {
  // Groups of input dims that are mutually contiguous ("chunks") can be re-split freely; a view
  // exists when every target dim falls inside one chunk.
  DimVector out(shape.size());
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  if (numel == 0 || sizes.empty()) {
    if (sizes.equals(shape)) return DimVector(strides);
    DimVector cs = contiguous_strides(shape);
    return cs;
  }
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base_stride = strides.back();
  int64_t chunk_end = static_cast<int64_t>(sizes.size()) - 1;  // innermost dim of this chunk
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= sizes[d];
    // A chunk ends where the next-outer dim is not laid out right after this one.
    if (d == 0 || (sizes[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) {
        // The target shape straddles a chunk boundary: report the dim on its inner side.
        if (bad_dim) *bad_dim = d > 0 ? d : chunk_end + 1;
        return std::nullopt;
      }
      if (d > 0) {
        chunk_end = d - 1;
        chunk_base_stride = strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) {
    if (bad_dim) *bad_dim = 1;
    return std::nullopt;
  }
  return out;
}

Tensor view(const Tensor& t, IntArrayRef shape) {
  const char* op = "view";
  DimVector target = infer_size(shape, t.numel(), op);
  int64_t bad = -1;
  auto strides = compute_view_strides(t.sizes(), t.strides(), target, &bad);
  if (!strides) {
    bad = std::clamp<int64_t>(bad, 1, t.dim() - 1);
    EMBER_THROW(Error,
                "[view] view size is not compatible with input tensor's size and stride "
                "(at least one dimension spans across two contiguous subspaces): a tensor of "
                "shape ",
                shape_str(t.sizes()), " and strides ", shape_str(t.strides()),
                " cannot be viewed as shape ", shape_str(target), " because dimension ", bad - 1,
                " (stride ", t.stride(bad - 1), ") is not contiguous with dimension ", bad,
                " (size ", t.size(bad), ", stride ", t.stride(bad),
                "). Use .reshape(...) instead.");
  }
  return make_view(t, target, *strides, t.storage_offset());
}

Tensor reshape(const Tensor& t, IntArrayRef shape) {
  DimVector target = infer_size(shape, t.numel(), "reshape");
  if (auto strides = compute_view_strides(t.sizes(), t.strides(), target)) {
    return make_view(t, target, *strides, t.storage_offset());
  }
  Tensor c = contiguous(t);
  return make_view(c, target, contiguous_strides(target), c.storage_offset());
}

Tensor flatten(const Tensor& t, int64_t start_dim, int64_t end_dim) {
  const char* op = "flatten";
  if (t.dim() == 0) return reshape(t, {1});
  int64_t s = wrap_dim(start_dim, t.dim(), op), e = wrap_dim(end_dim, t.dim(), op);
  EMBER_CHECK_T(ValueError, s <= e, "[flatten] start_dim (", start_dim,
                ") cannot come after end_dim (", end_dim, ")");
  if (s == e) return alias(t);
  DimVector shape;
  for (int64_t d = 0; d < s; ++d) shape.push_back(t.size(d));
  int64_t prod = 1;
  for (int64_t d = s; d <= e; ++d) prod *= t.size(d);
  shape.push_back(prod);
  for (int64_t d = e + 1; d < t.dim(); ++d) shape.push_back(t.size(d));
  return reshape(t, shape);
}

Tensor transpose(const Tensor& t, int64_t dim0, int64_t dim1) {
  int64_t n = t.dim();
  int64_t a = wrap_dim(dim0, n, "transpose"), b = wrap_dim(dim1, n, "transpose");
  if (n == 0) return alias(t);
  DimVector sizes(t.sizes()), strides(t.strides());
  std::swap(sizes[a], sizes[b]);
  std::swap(strides[a], strides[b]);
  return make_view(t, sizes, strides, t.storage_offset());
}

Tensor permute(const Tensor& t, IntArrayRef dims) {
  const char* op = "permute";
  int64_t n = t.dim();
  EMBER_CHECK(static_cast<int64_t>(dims.size()) == n,
              "[permute] number of dims don't match in "
              "permute: input has ",
              n, " dims but ", dims.size(), " were given");
  DimVector sizes(n), strides(n);
  std::vector<bool> seen(n, false);
  for (int64_t i = 0; i < n; ++i) {
    int64_t d = wrap_dim(dims[i], n, op);
    EMBER_CHECK(!seen[d], "[permute] repeated dim ", dims[i], " in dims ", shape_str(dims));
    seen[d] = true;
    sizes[i] = t.size(d);
    strides[i] = t.stride(d);
  }
  return make_view(t, sizes, strides, t.storage_offset());
}

Tensor expand(const Tensor& t, IntArrayRef sizes) {
  const int64_t n = static_cast<int64_t>(sizes.size());
  EMBER_CHECK(n >= t.dim(), "[expand] the number of sizes provided (", n,
              ") must be greater or "
              "equal to the number of dimensions in the tensor (",
              t.dim(), ")");
  DimVector out_sizes(n), out_strides(n);
  for (int64_t i = n - 1; i >= 0; --i) {
    int64_t td = i - (n - t.dim());
    int64_t want = sizes[i];
    if (td < 0) {
      EMBER_CHECK(want >= 0, "[expand] the expanded size of the tensor (", want,
                  ") isn't allowed in a leading, non-existing dimension ", i);
      out_sizes[i] = want;
      out_strides[i] = 0;
      continue;
    }
    int64_t have = t.size(td);
    if (want == -1) want = have;
    if (have == want) {
      out_sizes[i] = have;
      out_strides[i] = t.stride(td);
    } else {
      EMBER_CHECK(have == 1, "[expand] The expanded size of the tensor (", want,
                  ") must match the existing size (", have, ") at non-singleton dimension ", i,
                  ".  Target sizes: ", shape_str(sizes), ".  Tensor sizes: ", shape_str(t.sizes()));
      EMBER_CHECK(want >= 0, "[expand] invalid size ", want, " at dim ", i);
      out_sizes[i] = want;
      out_strides[i] = 0;
    }
  }
  return make_view(t, out_sizes, out_strides, t.storage_offset());
}

Tensor squeeze(const Tensor& t) {
  DimVector sizes, strides;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) != 1) {
      sizes.push_back(t.size(d));
      strides.push_back(t.stride(d));
    }
  }
  return make_view(t, sizes, strides, t.storage_offset());
}

Tensor squeeze(const Tensor& t, IntArrayRef dims) {
  std::vector<bool> drop(std::max<int64_t>(t.dim(), 1), false);
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, t.dim(), "squeeze");
    EMBER_CHECK(!drop[w], "[squeeze] dim ", w, " appears multiple times in the list of dims");
    drop[w] = true;
  }
  DimVector sizes, strides;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (drop[d] && t.size(d) == 1) continue;
    sizes.push_back(t.size(d));
    strides.push_back(t.stride(d));
  }
  return make_view(t, sizes, strides, t.storage_offset());
}

Tensor unsqueeze(const Tensor& t, int64_t dim) {
  int64_t d = wrap_dim(dim, t.dim() + 1, "unsqueeze");
  DimVector sizes(t.sizes()), strides(t.strides());
  int64_t st = d < t.dim() ? t.size(d) * t.stride(d) : 1;
  sizes.insert(d, 1);
  strides.insert(d, st);
  return make_view(t, sizes, strides, t.storage_offset());
}

Tensor select(const Tensor& t, int64_t dim, int64_t index) {
  EMBER_CHECK_T(IndexError, t.dim() > 0, "[select] select() cannot be applied to a 0-dim tensor.");
  int64_t d = wrap_dim(dim, t.dim(), "select");
  int64_t size = t.size(d);
  EMBER_CHECK_T(IndexError, index >= -size && index < size, "[select] index ", index,
                " is out of bounds for dimension ", d, " with size ", size);
  if (index < 0) index += size;
  DimVector sizes(t.sizes()), strides(t.strides());
  sizes.erase(d);
  strides.erase(d);
  return make_view(t, sizes, strides, t.storage_offset() + index * t.stride(d));
}

Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length) {
  EMBER_CHECK_T(IndexError, t.dim() > 0, "[narrow] narrow() cannot be applied to a 0-dim tensor.");
  int64_t d = wrap_dim(dim, t.dim(), "narrow");
  int64_t size = t.size(d);
  EMBER_CHECK_T(IndexError, start >= -size && start <= size, "[narrow] start (", start,
                ") is out of bounds for dimension ", d, " with size ", size);
  if (start < 0) start += size;
  EMBER_CHECK(length >= 0 && start <= size - length, "[narrow] start (", start, ") + length (",
              length, ") exceeds dimension size (", size, ").");
  return slice(t, d, start, start + length, 1);
}

Tensor narrow_copy(const Tensor& t, int64_t dim, int64_t start, int64_t length, const Tensor& out) {
  const char* op = "narrow_copy";
  const Tensor piece = narrow(t, dim, start, length);  // validates, with narrow's messages
  if (out.defined()) {
    EMBER_CHECK(out.dtype() == t.dtype(), "[", op,
                "] Expected self.dtype() == output.dtype() to be true, but got false. (",
                dtype_name(t.dtype()), " vs ", dtype_name(out.dtype()), ")");
  }
  Tensor result = empty_tensor(piece.sizes(), t.dtype(), t.device(), op);
  copy_into(result, piece, op, /*bump_version=*/false);
  if (!out.defined()) return result;
  resize_output(out, result.sizes(), op);
  copy_into(out, result, op);
  return out;
}

Tensor slice(const Tensor& t, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
             int64_t step) {
  EMBER_CHECK_T(ValueError, step > 0, "[slice] step must be greater than zero");
  EMBER_CHECK_T(IndexError, t.dim() > 0, "[slice] slice() cannot be applied to a 0-dim tensor.");
  int64_t d = wrap_dim(dim, t.dim(), "slice");
  int64_t size = t.size(d);
  int64_t s = start.value_or(0), e = end.value_or(size);
  if (s < 0) s += size;
  if (e < 0) e += size;
  s = std::clamp<int64_t>(s, 0, size);
  e = std::clamp<int64_t>(e, s, size);
  DimVector sizes(t.sizes()), strides(t.strides());
  sizes[d] = (e - s + step - 1) / step;
  strides[d] = t.stride(d) * step;
  return make_view(t, sizes, strides, t.storage_offset() + s * t.stride(d));
}

Tensor contiguous(const Tensor& t) {
  if (t.is_contiguous()) return t;
  Tensor out = empty_tensor(t.sizes(), t.dtype(), t.device(), "contiguous");
  copy_into(out, t, "contiguous", /*bump_version=*/false);
  return out;
}

Tensor clone(const Tensor& t) {
  // torch.preserve_format: a dense layout is kept (a transposed tensor clones transposed), any
  // other gets dense strides in its dim order.
  Tensor out = empty_strided_tensor(t.sizes(), preserved_strides(t.sizes(), t.strides()), t.dtype(),
                                    t.device(), "clone");
  copy_into(out, t, "clone", /*bump_version=*/false);
  return out;
}

Tensor to_dtype(const Tensor& t, ScalarType dtype, bool copy) {
  if (t.dtype() == dtype && !copy) return t;
  Tensor out = empty_tensor(t.sizes(), dtype, t.device(), "to");
  copy_into(out, t, "to", /*bump_version=*/false);
  return out;
}

Tensor& copy_(Tensor& dst, const Tensor& src) {
  if (dst.is_same(src)) return dst;
  // src broadcasts to dst's shape (x.copy_(row)); expand raises when it cannot.
  copy_into(dst, src.sizes().equals(dst.sizes()) ? src : expand(src, dst.sizes()), "copy_");
  return dst;
}

}  // namespace native
}  // namespace ember
