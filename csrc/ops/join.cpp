// cat and the *stack family, combinations. meshgrid and cartesian_prod are composites, public
// ops only (api/join.cpp).
#include "ops/join.h"

#include <algorithm>
#include <limits>

#include "core/factory.h"
#include "core/shape.h"
#include "dispatch/copy.h"
#include "dispatch/mem_overlap.h"
#include "ops/creation.h"
#include "ops/quantized/quantize.h"
#include "ops/shape_util.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(cat_contiguous_stub, CatContiguousFn);

namespace {

// PyTorch's legacy rule: a 1-D tensor of shape (0,) joins any concatenation and is skipped.
bool is_skipped_in_cat(const Tensor& t) {
  return t.dim() == 1 && t.size(0) == 0;
}

bool shares_memory(const Tensor& a, const Tensor& b) {
  return a.storage().get() == b.storage().get() && a.numel() > 0 && b.numel() > 0;
}

Tensor cat_impl(const std::vector<Tensor>& tensors, int64_t dim, const Tensor& out,
                const char* op) {
  EMBER_CHECK_T(ValueError, !tensors.empty(), "[", op, "] expected a non-empty list of Tensors");
  if (is_quantized(tensors[0].dtype())) {  // the integers, with the shared parameters
    EMBER_CHECK(!out.defined(), "[", op, "] out= is not supported for quantized tensors");
    return on_quantized_integers(tensors, op, [&](const std::vector<Tensor>& ints) {
      return cat_impl(ints, dim, Tensor(), op);
    });
  }
  ScalarType dtype = tensors[0].dtype();
  const Tensor* ref = nullptr;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    EMBER_CHECK(t.dim() > 0, "[", op, "] zero-dimensional tensor (at position ", i,
                ") cannot be concatenated");
    EMBER_CHECK(t.device() == tensors[0].device(), "[", op,
                "] Expected all tensors to be on the "
                "same device, but found ",
                tensors[0].device().str(), " and ", t.device().str());
    dtype = promote_types(dtype, t.dtype());
    if (!ref && !is_skipped_in_cat(t)) ref = &t;
  }
  DimVector shape;
  int64_t d = 0;
  if (ref) {
    d = wrap_dim(dim, ref->dim(), op);
    shape = DimVector(ref->sizes());
    int64_t total = 0;
    for (size_t i = 0; i < tensors.size(); ++i) {
      const Tensor& t = tensors[i];
      if (is_skipped_in_cat(t)) continue;
      EMBER_CHECK(t.dim() == ref->dim(), "[", op,
                  "] Tensors must have same number of "
                  "dimensions: got ",
                  ref->dim(), " and ", t.dim());
      for (int64_t k = 0; k < t.dim(); ++k) {
        if (k == d) continue;
        EMBER_CHECK(t.size(k) == ref->size(k), "[", op,
                    "] Sizes of tensors must match except "
                    "in dimension ",
                    d, ". Expected size ", ref->size(k), " but got size ", t.size(k),
                    " for tensor number ", i, " in the list.");
      }
      EMBER_CHECK(!__builtin_add_overflow(total, t.size(d), &total), "[", op,
                  "] the concatenated size overflows int64");
    }
    shape[d] = total;
  } else {
    shape = DimVector{0};
  }
  Tensor result;
  if (out.defined()) {
    EMBER_CHECK_T(TypeError, can_cast(dtype, out.dtype()), "[", op,
                  "] input types can't be "
                  "cast to the desired output type ",
                  torch_type_name(out.dtype()));
    assert_no_internal_overlap(out, op);
    for (const Tensor& t : tensors) {
      EMBER_CHECK(!shares_memory(out, t), "[", op,
                  "] unsupported operation: the input tensors "
                  "cannot refer to any of the output memory locations. Found overlap in input "
                  "tensor ",
                  &t - tensors.data());
    }
    resize_output(out, shape, op);
    result = out;
  } else {
    result = empty_tensor(shape, dtype, tensors[0].device(), op);
  }
  if (result.numel() == 0 || !ref) {
    if (out.defined()) out.bump_version();
    return result;
  }
  // Fast path: every piece is contiguous and of the result's dtype, so rows are memcpy-able.
  bool fast = result.is_contiguous();
  for (const Tensor& t : tensors) {
    if (is_skipped_in_cat(t)) continue;
    fast = fast && t.is_contiguous() && t.dtype() == result.dtype();
  }
  if (fast) {
    int64_t outer = 1, inner = 1;
    for (int64_t k = 0; k < d; ++k) outer *= shape[k];
    for (int64_t k = d + 1; k < static_cast<int64_t>(shape.size()); ++k) inner *= shape[k];
    std::vector<const char*> srcs;
    std::vector<int64_t> chunks;
    for (const Tensor& t : tensors) {
      if (is_skipped_in_cat(t)) continue;
      srcs.push_back(static_cast<const char*>(t.data_ptr()));
      chunks.push_back(t.size(d) * inner * int64_t(result.itemsize()));
    }
    cat_contiguous_stub(result.device(), static_cast<char*>(result.data_ptr()), outer, srcs,
                        chunks);
    result.bump_version();
    return result;
  }
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (is_skipped_in_cat(t)) continue;
    const int64_t len = t.size(d);
    if (len > 0) copy_into(narrow(result, d, offset, len), t, op);
    offset += len;
  }
  return result;
}

Tensor atleast_nd(const Tensor& t, int n) {
  if (t.dim() >= n) return t;
  if (n == 1) return reshape(t, {1});
  if (n == 2) return t.dim() == 0 ? reshape(t, {1, 1}) : unsqueeze(t, 0);
  // n == 3: 0-d -> (1, 1, 1); (k,) -> (1, k, 1); (m, k) -> (m, k, 1).
  if (t.dim() == 0) return reshape(t, {1, 1, 1});
  if (t.dim() == 1) return unsqueeze(unsqueeze(t, 0), 2);
  return unsqueeze(t, 2);
}

std::vector<Tensor> atleast_all(const std::vector<Tensor>& tensors, int n, const char* op) {
  EMBER_CHECK(!tensors.empty(), "[", op, "] ", op, " expects a non-empty TensorList");
  std::vector<Tensor> r;
  r.reserve(tensors.size());
  for (const Tensor& t : tensors) r.push_back(atleast_nd(t, n));
  return r;
}

}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim, const Tensor& out) {
  return cat_impl(tensors, dim, out, "cat");
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim, const Tensor& out) {
  const char* op = "stack";
  EMBER_CHECK(!tensors.empty(), "[stack] stack expects a non-empty TensorList");
  const Tensor& ref = tensors[0];
  for (size_t i = 1; i < tensors.size(); ++i) {
    EMBER_CHECK(tensors[i].sizes().equals(ref.sizes()),
                "[stack] stack expects each tensor to "
                "be equal size, but got ",
                torch_shape_str(ref.sizes()), " at entry 0 and ",
                torch_shape_str(tensors[i].sizes()), " at entry ", i);
  }
  const int64_t d = wrap_dim(dim, ref.dim() + 1, op);
  std::vector<Tensor> parts;
  parts.reserve(tensors.size());
  for (const Tensor& t : tensors) parts.push_back(unsqueeze(t, d));
  return cat_impl(parts, d, out, op);
}

Tensor hstack(const std::vector<Tensor>& tensors, const Tensor& out) {
  auto parts = atleast_all(tensors, 1, "hstack");
  return cat_impl(parts, parts[0].dim() == 1 ? 0 : 1, out, "hstack");
}

Tensor vstack(const std::vector<Tensor>& tensors, const Tensor& out) {
  return cat_impl(atleast_all(tensors, 2, "vstack"), 0, out, "vstack");
}

Tensor dstack(const std::vector<Tensor>& tensors, const Tensor& out) {
  return cat_impl(atleast_all(tensors, 3, "dstack"), 2, out, "dstack");
}

Tensor column_stack(const std::vector<Tensor>& tensors, const Tensor& out) {
  EMBER_CHECK(!tensors.empty(), "[column_stack] column_stack expects a non-empty TensorList");
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) parts.push_back(t.dim() <= 1 ? reshape(t, {t.numel(), 1}) : t);
  return cat_impl(parts, 1, out, "column_stack");
}

Tensor combinations(const Tensor& t, int64_t r, bool with_replacement) {
  const char* op = "combinations";
  EMBER_CHECK(t.dim() == 1, "[combinations] Expect a 1D vector, but got shape ",
              torch_shape_str(t.sizes()));
  EMBER_CHECK(r >= 0, "[combinations] Expect a non-negative number, but got ", r);
  if (r == 0) return empty_tensor({0}, t.dtype(), t.device(), op);
  const int64_t n = t.size(0);
  // The number of tuples, C(n, r) or C(n + r - 1, r), checked for overflow before any work.
  EMBER_CHECK(r <= std::numeric_limits<int64_t>::max() - n, "[", op, "] r is too large");
  const int64_t pool = with_replacement ? (n > 0 ? n + r - 1 : 0) : n;
  int64_t count = pool >= r ? 1 : 0;
  for (int64_t i = 1; count > 0 && i <= std::min(r, pool - r); ++i) {
    // count = C(pool, i) from C(pool, i - 1); exact since C(pool, i-1) * (pool-i+1) is divisible
    // by i.
    __int128 next = static_cast<__int128>(count) * (pool - i + 1) / i;
    EMBER_CHECK(next <= std::numeric_limits<int64_t>::max(), "[", op,
                "] the number of "
                "combinations overflows int64");
    count = static_cast<int64_t>(next);
  }
  checked_numel({count, r}, op);
  if (count == 0) return empty_tensor({0, r}, t.dtype(), t.device(), op);
  // Index tuples in lexicographic order: strictly increasing, or non-decreasing with replacement.
  std::vector<int64_t> flat;
  flat.reserve(static_cast<size_t>(count * r));
  std::vector<int64_t> idx(r);
  for (int64_t j = 0; j < r; ++j) idx[j] = with_replacement ? 0 : j;
  for (int64_t c = 0; c < count; ++c) {
    flat.insert(flat.end(), idx.begin(), idx.end());
    // Advance: find the rightmost position that can still grow.
    int64_t j = r - 1;
    while (j >= 0 && idx[j] == (with_replacement ? n - 1 : n - r + j)) --j;
    if (j < 0) break;
    ++idx[j];
    for (int64_t k = j + 1; k < r; ++k) idx[k] = with_replacement ? idx[j] : idx[k - 1] + 1;
  }
  Tensor g = gather_slices(t, 0, flat, op);
  return view(g, {count, r});
}

}  // namespace native
}  // namespace ember
