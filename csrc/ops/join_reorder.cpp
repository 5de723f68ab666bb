// Reordering copies: flip, roll, rot90, repeat, repeat_interleave. fliplr, flipud and tile are
// composites, public ops only (api/join.cpp).
#include <algorithm>
#include <cstdlib>

#include "core/factory.h"
#include "core/shape.h"
#include "dispatch/copy.h"
#include "dispatch/dtype_dispatch.h"
#include "ops/creation.h"
#include "ops/join.h"
#include "ops/quantized/quantize.h"
#include "ops/shape_util.h"
#include "ops/views.h"

namespace ember {
namespace native {

namespace {

// Note [Flip through negative strides]: flip is a copy from a view whose flipped dims run
// backwards (negative strides). Such views never leave this file; TensorIterator computes byte
// offsets with signed arithmetic, so the ordinary copy kernel (with its vectorised and parallel
// paths) does the work, as in PyTorch's flip.
Tensor flip_dims(const Tensor& t, const std::vector<bool>& mask) {
  DimVector strides(t.strides());
  int64_t offset = t.storage_offset();
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (!mask[d] || t.size(d) <= 1) continue;
    offset += (t.size(d) - 1) * t.stride(d);
    strides[d] = -strides[d];
  }
  Tensor out = empty_tensor(t.sizes(), t.dtype(), t.device(), "flip");
  if (t.numel() == 0) return out;
  copy_into(out, make_view(t, t.sizes(), strides, offset), "flip");
  return out;
}

Tensor roll_one(const Tensor& t, int64_t shift, int64_t d) {
  Tensor out = empty_tensor(t.sizes(), t.dtype(), t.device(), "roll");
  const int64_t n = t.size(d);
  if (t.numel() == 0) return out;
  const int64_t s = ((shift % n) + n) % n;
  if (s == 0) {
    copy_into(out, t, "roll");
    return out;
  }
  copy_into(narrow(out, d, s, n - s), narrow(t, d, 0, n - s), "roll");
  copy_into(narrow(out, d, 0, s), narrow(t, d, n - s, s), "roll");
  return out;
}

// Copies t repeated `repeats` times along a new dim after d (repeat_interleave with a constant).
Tensor repeat_each(const Tensor& t, int64_t d, int64_t repeats, const char* op) {
  DimVector shape(t.sizes());
  int64_t total;
  EMBER_CHECK(!__builtin_mul_overflow(shape[d], repeats, &total), "[", op,
              "] output size overflows int64");
  shape[d] = total;
  Tensor out = empty_tensor(shape, t.dtype(), t.device(), op);
  if (out.numel() == 0) return out;
  DimVector split(t.sizes());
  split.insert(d + 1, repeats);
  Tensor src = unsqueeze(t, d + 1);
  copy_into(view(out, split), expand(src, split), op);
  return out;
}

}  // namespace

Tensor flip(const Tensor& t, IntArrayRef dims) {
  std::vector<bool> mask(std::max<int64_t>(t.dim(), 1), false);
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, t.dim(), "flip");
    EMBER_CHECK(!mask[w], "[flip] dim ", w, " appears multiple times in the list of dims");
    mask[w] = true;
  }
  return flip_dims(t, mask);
}

Tensor roll(const Tensor& t, IntArrayRef shifts, IntArrayRef dims) {
  if (is_quantized(t.dtype())) {  // the integers, with the same parameters
    return on_quantized_integers(
        {t}, "roll", [&](const std::vector<Tensor>& ints) { return roll(ints[0], shifts, dims); });
  }
  EMBER_CHECK(!shifts.empty(), "[roll] `shifts` required");
  if (dims.empty() && shifts.size() == 1) {
    Tensor flat = reshape(t, {-1});
    return view(roll_one(flat, shifts[0], 0), t.sizes());
  }
  EMBER_CHECK(shifts.size() == dims.size(),
              "[roll] shifts and dimensions must align. shifts: ", shifts.size(),
              ", dims:", dims.size());
  Tensor r = t;
  for (size_t i = 0; i < shifts.size(); ++i) {
    r = roll_one(r, shifts[i], wrap_dim(dims[i], t.dim(), "roll"));
  }
  return r;
}

Tensor rot90(const Tensor& t, int64_t k, IntArrayRef dims) {
  const char* op = "rot90";
  EMBER_CHECK(dims.size() == 2,
              "[rot90] expected total rotation dims == 2, but got dims = ", dims.size());
  EMBER_CHECK(t.dim() >= 2, "[rot90] expected total dims >= 2, but got total dims = ", t.dim());
  EMBER_CHECK(dims[0] != dims[1] && std::abs(dims[0] - dims[1]) != t.dim(),
              "[rot90] expected rotation dims to be different, but got dim0 = ", dims[0],
              " and dim1 = ", dims[1]);
  const int64_t d0 = wrap_dim(dims[0], t.dim(), op), d1 = wrap_dim(dims[1], t.dim(), op);
  switch (((k % 4) + 4) % 4) {
    case 1:
      return transpose(flip(t, {d1}), d0, d1);
    case 2:
      return flip(t, {d0, d1});
    case 3:
      return transpose(flip(t, {d0}), d0, d1);
    default:
      return contiguous(clone(t));
  }
}

Tensor repeat(const Tensor& t, IntArrayRef repeats) {
  if (is_quantized(t.dtype())) {  // the integers, with the same parameters
    return on_quantized_integers(
        {t}, "repeat", [&](const std::vector<Tensor>& ints) { return repeat(ints[0], repeats); });
  }
  const char* op = "repeat";
  const int64_t n = static_cast<int64_t>(repeats.size());
  EMBER_CHECK(n >= t.dim(),
              "[repeat] Number of dimensions of repeat dims can not be smaller "
              "than number of dimensions of tensor");
  DimVector padded(n, 1), target(n);
  for (int64_t i = 0; i < t.dim(); ++i) padded[n - t.dim() + i] = t.size(i);
  for (int64_t i = 0; i < n; ++i) {
    EMBER_CHECK(!__builtin_mul_overflow(padded[i], repeats[i], &target[i]),
                "[repeat] the size of dimension ", i, " (", padded[i], " repeated ", repeats[i],
                " times) overflows int64");
  }
  for (int64_t i = 0; i < n; ++i) {
    EMBER_CHECK(target[i] >= 0 && repeats[i] >= 0,
                "[repeat] Trying to create tensor with "
                "negative dimension ",
                std::min(target[i], repeats[i]), ": ", torch_shape_str(target));
  }
  if (checked_numel(target, op) == 0) return empty_tensor(target, t.dtype(), t.device(), op);
  // One dim at a time, the innermost first: each stage copies runs of everything inside its
  // dim (already repeated), so the big outer stages move long contiguous runs. One copy of a
  // broadcast view over all dims at once ran element by element when the innermost dim was
  // short (a (2, 3, 3) half tensor repeated (256, 3, 65536): 6 s, against PyTorch's 2 s).
  Tensor cur = contiguous(reshape(t, padded));
  bool copied = false;
  for (int64_t i = n - 1; i >= 0; --i) {
    if (repeats[i] == 1) continue;
    DimVector shape(cur.sizes());
    shape[i] *= repeats[i];
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < i; ++d) outer *= shape[d];
    for (int64_t d = i; d < n; ++d) inner *= cur.size(d);
    Tensor next = empty_tensor(shape, t.dtype(), t.device(), op);
    copy_into(view(next, {outer, repeats[i], inner}),
              make_view(cur, {outer, repeats[i], inner}, {inner, 0, 1}, cur.storage_offset()), op);
    cur = next;
    copied = true;
  }
  return copied ? cur : contiguous(clone(cur));
}

Tensor repeat_interleave(const Tensor& t, int64_t repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  const char* op = "repeat_interleave";
  EMBER_CHECK(repeats >= 0, "[repeat_interleave] Repeats must be non-negative");
  Tensor in = (!dim || t.dim() == 0) ? reshape(t, {-1}) : t;
  const int64_t d = dim ? wrap_dim(*dim, t.dim(), op) : 0;
  Tensor out = repeat_each(in, d, repeats, op);
  if (output_size) {
    EMBER_CHECK(*output_size == out.size(d), "[repeat_interleave] Invalid output_size, expected ",
                out.size(d), " but got ", *output_size);
  }
  return out;
}

RepeatInterleavePlan plan_repeat_interleave(const Tensor& t, const Tensor& repeats,
                                            std::optional<int64_t> dim,
                                            std::optional<int64_t> output_size) {
  const char* op = "repeat_interleave";
  EMBER_CHECK(repeats.dim() <= 1, "[repeat_interleave] repeats must be 0-dim or 1-dim tensor");
  EMBER_CHECK_T(NotImplementedError, is_integral(repeats.dtype(), false),
                "[repeat_interleave] \"repeat_interleave_cpu\" not implemented for '",
                torch_type_name(repeats.dtype()), "'");
  RepeatInterleavePlan plan;
  plan.dim = dim ? wrap_dim(*dim, t.dim(), op) : 0;
  // Without dim (or for a 0-d t) the op works on t flattened.
  const int64_t in_size = (!dim || t.dim() == 0) ? t.numel() : t.size(plan.dim);
  if (repeats.numel() == 1) {
    Tensor r64 = to_dtype(repeats, ScalarType::Int64);
    plan.count = *contiguous(r64).data<int64_t>();
    EMBER_CHECK(*plan.count >= 0, "[repeat_interleave] repeats can not be negative");
    return plan;
  }
  EMBER_CHECK(repeats.size(0) == in_size,
              "[repeat_interleave] repeats must have the same "
              "size as input along dim, but got repeats.size(0) = ",
              repeats.size(0), " and input.size(", plan.dim, ") = ", in_size);
  Tensor r64 = contiguous(to_dtype(repeats, ScalarType::Int64));
  const int64_t* rp = r64.data<int64_t>();
  int64_t total = 0;
  for (int64_t i = 0; i < r64.numel(); ++i) {
    EMBER_CHECK(rp[i] >= 0, "[repeat_interleave] repeats can not be negative");
    EMBER_CHECK(!__builtin_add_overflow(total, rp[i], &total), "[", op, "] output size overflows");
  }
  if (output_size) {
    EMBER_CHECK(*output_size == total,
                "[repeat_interleave] allocated size does not match "
                "required size");
  }
  plan.index.reserve(total);
  for (int64_t i = 0; i < r64.numel(); ++i) plan.index.insert(plan.index.end(), rp[i], i);
  return plan;
}

Tensor repeat_interleave(const Tensor& t, const Tensor& repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  const RepeatInterleavePlan plan = plan_repeat_interleave(t, repeats, dim, output_size);
  if (plan.count) return repeat_interleave(t, *plan.count, dim, output_size);
  const Tensor in = (!dim || t.dim() == 0) ? reshape(t, {-1}) : t;
  return gather_slices(in, plan.dim, plan.index, "repeat_interleave");
}

Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> output_size) {
  const char* op = "repeat_interleave";
  EMBER_CHECK(repeats.dim() == 1,
              "[repeat_interleave] repeat_interleave only accept 1D vector "
              "as repeat");
  EMBER_CHECK_T(NotImplementedError,
                repeats.dtype() == ScalarType::Int64 || repeats.dtype() == ScalarType::Int32,
                "[repeat_interleave] \"repeat_interleave_cpu\" not implemented for '",
                torch_type_name(repeats.dtype()), "'");
  Tensor r64 = contiguous(to_dtype(repeats, ScalarType::Int64));
  const int64_t* rp = r64.data<int64_t>();
  std::vector<int64_t> values;
  int64_t total = 0;
  for (int64_t i = 0; i < r64.numel(); ++i) {
    EMBER_CHECK(rp[i] >= 0, "[repeat_interleave] repeats can not be negative");
    EMBER_CHECK(!__builtin_add_overflow(total, rp[i], &total), "[", op, "] output size overflows");
  }
  if (output_size) {
    EMBER_CHECK(*output_size == total,
                "[repeat_interleave] allocated size does not match "
                "required size");
  }
  values.reserve(total);
  for (int64_t i = 0; i < r64.numel(); ++i) values.insert(values.end(), rp[i], i);
  return to_dtype(int64_tensor(values), repeats.dtype());
}

}  // namespace native
}  // namespace ember
