// Views that rearrange dims: unflatten, t / mT / mH / adjoint, movedim, diagonal, unfold. Each
// returns a tensor sharing the input's storage and version counter (see Note [Version Counter
// Sharing] in core/tensor_impl.h). The composites Tensor.T, Tensor.H, broadcast_to and
// broadcast_tensors are public ops only (api/views.cpp).
#include <algorithm>
#include <numeric>

#include "core/factory.h"
#include "core/shape.h"
#include "dispatch/tensor_iterator.h"
#include "kernels/views_stubs.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(conj_copy_stub, ConjCopyFn);

namespace {

// "[2, 3]": the list format PyTorch uses in these messages.
std::string list_str(IntArrayRef v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(v[i]);
  }
  return s + "]";
}

// Ember has no lazy conjugate bit: mH / adjoint of a complex tensor materialise the conjugate.
Tensor conj_if_complex(const Tensor& t) {
  return t.is_complex() ? conj_copy(t) : t;
}

}  // namespace

Tensor conj_copy(const Tensor& t) {
  Tensor out = empty_tensor(t.sizes(), t.dtype(), t.device(), "conj");
  auto iter = TensorIteratorConfig().name("conj").add_output(out).add_input(t).build();
  if (iter.numel() > 0) conj_copy_stub(t.device(), iter);
  return out;
}

Tensor unflatten(const Tensor& t, int64_t dim, IntArrayRef sizes) {
  const char* op = "unflatten";
  int64_t d = wrap_dim(dim, t.dim(), op);
  EMBER_CHECK(!sizes.empty(), "[unflatten] sizes must be non-empty");
  const int64_t have = t.dim() == 0 ? 1 : t.size(d);
  DimVector resolved(sizes);
  int64_t infer_at = -1, known = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      EMBER_CHECK(infer_at < 0, "[unflatten] only one dimension can be inferred, got sizes ",
                  list_str(sizes));
      infer_at = static_cast<int64_t>(i);
      continue;
    }
    EMBER_CHECK(sizes[i] >= 0, "[unflatten] invalid size ", sizes[i], " in ", list_str(sizes));
    EMBER_CHECK(!__builtin_mul_overflow(known, sizes[i], &known), "[unflatten] sizes ",
                list_str(sizes), " overflow int64");
  }
  if (infer_at >= 0) {
    EMBER_CHECK(known != 0 && have % known == 0, "[unflatten] Provided sizes ", list_str(sizes),
                " don't multiply up to the size of dim ", dim, " (", have, ") in the input tensor");
    resolved[infer_at] = have / known;
  } else {
    EMBER_CHECK(known == have, "[unflatten] Provided sizes ", list_str(sizes),
                " don't multiply up to the size of dim ", dim, " (", have, ") in the input tensor");
  }
  DimVector shape;
  for (int64_t i = 0; i < d; ++i) shape.push_back(t.size(i));
  for (int64_t s : resolved) shape.push_back(s);
  for (int64_t i = d + 1; i < t.dim(); ++i) shape.push_back(t.size(i));
  return view(t, shape);
}

Tensor matrix_t(const Tensor& t) {
  EMBER_CHECK(t.dim() <= 2, "[t] t() expects a tensor with <= 2 dimensions, but self is ", t.dim(),
              "D");
  if (t.dim() < 2) return alias(t);
  return transpose(t, 0, 1);
}

Tensor& matrix_t_(Tensor& t) {
  EMBER_CHECK(t.dim() <= 2, "[t_] t_() expects a tensor with <= 2 dimensions, but self is ",
              t.dim(), "D");
  if (t.dim() == 2) {
    t.impl()->set_geometry({t.size(1), t.size(0)}, {t.stride(1), t.stride(0)}, t.storage_offset());
  }
  return t;
}

Tensor mT(const Tensor& t) {
  // A 0-d tensor is its own (conjugate) transpose, as in PyTorch (deprecated there).
  if (t.dim() == 0) return t;
  EMBER_CHECK(t.dim() >= 2,
              "[mT] tensor.mT is only supported on matrices or batches of matrices. "
              "Got ",
              t.dim(), "-D tensor.");
  return transpose(t, -2, -1);
}

Tensor mH(const Tensor& t) {
  // A 0-d tensor is its own (conjugate) transpose, as in PyTorch (deprecated there).
  if (t.dim() == 0) return conj_if_complex(t);
  EMBER_CHECK(t.dim() >= 2,
              "[mH] tensor.mH is only supported on matrices or batches of matrices. "
              "Got ",
              t.dim(), "-D tensor.");
  return conj_if_complex(transpose(t, -2, -1));
}

Tensor adjoint(const Tensor& t) {
  // A 0-d tensor is its own (conjugate) transpose, as in PyTorch (deprecated there).
  if (t.dim() == 0) return conj_if_complex(t);
  EMBER_CHECK(t.dim() >= 2,
              "[adjoint] tensor.adjoint() is only supported on matrices or batches "
              "of matrices. Got ",
              t.dim(), "-D tensor.");
  return conj_if_complex(transpose(t, -2, -1));
}

DimVector movedim_permutation(const Tensor& t, IntArrayRef source, IntArrayRef destination) {
  const char* op = "movedim";
  const int64_t n = t.dim();
  EMBER_CHECK(source.size() == destination.size(),
              "[movedim] Invalid source or destination dims: "
              "source (",
              list_str(source),
              " dims) should contain the same number of dims as "
              "destination (",
              list_str(destination), " dims)");
  DimVector order(std::max<int64_t>(n, 0), -1);
  std::vector<bool> src_used(std::max<int64_t>(n, 1), false),
      dst_used(std::max<int64_t>(n, 1), false);
  for (size_t i = 0; i < source.size(); ++i) {
    int64_t s = wrap_dim(source[i], n, op), d = wrap_dim(destination[i], n, op);
    EMBER_CHECK(!src_used[s], "[movedim] repeated dim in `source` (", list_str(source), ")");
    EMBER_CHECK(!dst_used[d], "[movedim] repeated dim in `destination` (", list_str(destination),
                ")");
    src_used[s] = dst_used[d] = true;
    if (n > 0) order[d] = s;
  }
  // The dims not moved keep their relative order in the free destination slots.
  int64_t next_src = 0;
  for (int64_t d = 0; d < n; ++d) {
    if (order[d] >= 0) continue;
    while (src_used[next_src]) ++next_src;
    order[d] = next_src++;
  }
  return order;
}

Tensor movedim(const Tensor& t, IntArrayRef source, IntArrayRef destination) {
  DimVector order = movedim_permutation(t, source, destination);
  return t.dim() == 0 ? alias(t) : permute(t, order);
}

Tensor diagonal(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2) {
  const char* op = "diagonal";
  int64_t d1 = wrap_dim(dim1, t.dim(), op), d2 = wrap_dim(dim2, t.dim(), op);
  EMBER_CHECK(d1 != d2, "[diagonal] diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  int64_t size;
  int64_t storage_offset = t.storage_offset();
  if (offset >= 0) {
    size = std::max<int64_t>(std::min(t.size(d1), t.size(d2) - offset), 0);
    if (size > 0) storage_offset += offset * t.stride(d2);
  } else {
    size = std::max<int64_t>(std::min(t.size(d1) + offset, t.size(d2)), 0);
    if (size > 0) storage_offset -= offset * t.stride(d1);
  }
  DimVector sizes, strides;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d == d1 || d == d2) continue;
    sizes.push_back(t.size(d));
    strides.push_back(t.stride(d));
  }
  sizes.push_back(size);
  strides.push_back(t.stride(d1) + t.stride(d2));
  return make_view(t, sizes, strides, storage_offset);
}

Tensor unfold(const Tensor& t, int64_t dimension, int64_t size, int64_t step) {
  int64_t d = wrap_dim(dimension, t.dim(), "unfold");
  const int64_t dim_size = t.dim() == 0 ? 1 : t.size(d);
  EMBER_CHECK(size <= dim_size, "[unfold] maximum size for tensor at dimension ", d, " is ",
              dim_size, " but size is ", size);
  EMBER_CHECK(step > 0, "[unfold] step is ", step, " but must be > 0");
  EMBER_CHECK(size >= 0, "[unfold] size is ", size, " but must be >= 0");
  if (t.dim() == 0) return make_view(t, {size}, {1}, t.storage_offset());
  DimVector sizes(t.sizes()), strides(t.strides());
  sizes[d] = (dim_size - size) / step + 1;
  strides[d] = t.stride(d) * step;
  sizes.push_back(size);
  strides.push_back(t.stride(d));
  return make_view(t, sizes, strides, t.storage_offset());
}

}  // namespace native
}  // namespace ember
