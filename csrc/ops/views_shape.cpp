// Views that rearrange dims: unflatten, t / T / mT / H / mH, movedim, broadcast_to,
// broadcast_tensors, diagonal, unfold. Each returns a tensor sharing the input's storage and
// version counter (see Note [Version Counter Sharing] in core/tensor_impl.h).
#include <algorithm>
#include <numeric>

#include "autograd/derivatives/views.h"
#include "autograd/grad_mode.h"
#include "autograd/variable.h"
#include "core/factory.h"
#include "core/shape.h"
#include "dispatch/tensor_iterator.h"
#include "ops/views.h"
#include "ops/views_stubs.h"

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

Tensor conj_if_complex(const Tensor& t);

Tensor conj_copy(const Tensor& t) {
  Tensor out = empty_tensor(t.sizes(), t.dtype(), t.device(), "conj");
  auto iter = TensorIteratorConfig().name("conj").add_output(out).add_input(t).build();
  if (iter.numel() > 0) conj_copy_stub(t.device(), iter);
  return out;
}

// Ember has no lazy conjugate bit: H / mH / adjoint of a complex tensor materialise the
// conjugate (ConjBackward0 when recording, as PyTorch's conj() node).
Tensor conj_if_complex(const Tensor& t) {
  if (!t.is_complex()) return t;
  if (autograd::should_record(t)) return derivatives::conj_copy(t, conj_if_complex);
  return conj_copy(t);
}

// Runs `compute` with recording off (the view itself) and hands it to `record`.
template <typename Compute, typename Record>
Tensor recorded_view(Compute&& compute, Record&& record) {
  Tensor r;
  {
    autograd::NoGradGuard no_grad;
    r = compute();
  }
  return record(r);
}

}  // namespace

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
  if (autograd::should_record(t)) {
    return recorded_view([&] { return matrix_t(t); },
                         [&](const Tensor& r) { return derivatives::matrix_t(t, r); });
  }
  if (t.dim() < 2) return alias(t);
  return transpose(t, 0, 1);
}

Tensor& matrix_t_(Tensor& t) {
  EMBER_CHECK(t.dim() <= 2, "[t_] t_() expects a tensor with <= 2 dimensions, but self is ",
              t.dim(), "D");
  if (autograd::should_record(t)) return derivatives::matrix_t_(t);
  if (t.dim() == 2) {
    t.impl()->set_geometry({t.size(1), t.size(0)}, {t.stride(1), t.stride(0)}, t.storage_offset());
  }
  return t;
}

Tensor numpy_T(const Tensor& t) {
  DimVector dims(t.dim());
  for (int64_t i = 0; i < t.dim(); ++i) dims[i] = t.dim() - 1 - i;
  return permute(t, dims);
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

Tensor matrix_H(const Tensor& t) {
  EMBER_CHECK(t.dim() == 2 || t.dim() == 0,
              "[H] tensor.H is only supported on matrices (2-D "
              "tensors). Got ",
              t.dim(), "-D tensor.",
              t.dim() > 2 ? " For batches of matrices, consider using tensor.mH" : "");
  if (t.dim() == 0) return t.is_complex() ? conj_if_complex(t) : t;  // PyTorch returns self
  return conj_if_complex(transpose(t, 0, 1));
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

Tensor movedim(const Tensor& t, IntArrayRef source, IntArrayRef destination) {
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
  if (n == 0) return alias(t);
  // The dims not moved keep their relative order in the free destination slots.
  int64_t next_src = 0;
  for (int64_t d = 0; d < n; ++d) {
    if (order[d] >= 0) continue;
    while (src_used[next_src]) ++next_src;
    order[d] = next_src++;
  }
  return permute(t, order);
}

Tensor broadcast_to(const Tensor& t, IntArrayRef shape) {
  return expand(t, shape);
}

std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& tensors) {
  DimVector shape;
  for (const Tensor& t : tensors) shape = broadcast_shapes(shape, t.sizes(), "broadcast_tensors");
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(expand(t, shape));
  return out;
}

Tensor diagonal(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2) {
  const char* op = "diagonal";
  int64_t d1 = wrap_dim(dim1, t.dim(), op), d2 = wrap_dim(dim2, t.dim(), op);
  EMBER_CHECK(d1 != d2, "[diagonal] diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  if (autograd::should_record(t)) {
    return recorded_view(
        [&] { return diagonal(t, offset, d1, d2); },
        [&](const Tensor& r) { return derivatives::diagonal(t, offset, d1, d2, r); });
  }
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
  if (autograd::should_record(t)) {
    return recorded_view([&] { return unfold(t, d, size, step); },
                         [&](const Tensor& r) { return derivatives::unfold(t, d, size, step, r); });
  }
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
