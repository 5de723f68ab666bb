// pixel_shuffle / pixel_unshuffle: a view, a permutation and one copy; one node each (recorded
// by the api layer), whose gradient is the other op.
#include "core/shape.h"
#include "ops/nn/conv_util.h"
#include "ops/nn/sampling.h"
#include "ops/views.h"

namespace ember {
namespace native {

namespace {

void check_factor(const Tensor& input, int64_t factor, const char* op, const char* what) {
  EMBER_CHECK(input.dim() >= 3, "[", op, "] ", op, " expects input to have at least 3 dimensions, ",
              "but got input with ", input.dim(), " dimension(s)");
  EMBER_CHECK(factor > 0, "[", op, "] ", op, " expects a positive ", what, ", but got ", factor);
}

}  // namespace

Tensor pixel_shuffle(const Tensor& input, int64_t upscale_factor) {
  const char* op = "pixel_shuffle";
  check_factor(input, upscale_factor, op, "upscale_factor");
  const int64_t nd = input.dim();
  const int64_t r = upscale_factor, c = input.size(nd - 3);
  int64_t r2;
  EMBER_CHECK_T(ValueError, !__builtin_mul_overflow(r, r, &r2), "[", op,
                "] upscale factor is too large, (upscale_factor)^2 overflowed: upscale_factor=", r);
  EMBER_CHECK(c % r2 == 0, "[", op, "] pixel_shuffle expects its input's 'channel' dimension ",
              "to be divisible by the square of upscale_factor, but input.size(-3)=", c,
              " is not divisible by ", r2);
  const int64_t nb = nd - 3, h = input.size(nd - 2), w = input.size(nd - 1);
  DimVector split = dims_slice(input.sizes(), 0, nb), out(split);
  append_dims(split, {c / r2, r, r, h, w});
  append_dims(out, {c / r2, checked_mul(h, r, op), checked_mul(w, r, op)});
  DimVector perm;
  for (int64_t i = 0; i < nb; ++i) perm.push_back(i);
  append_dims(perm, {nb, nb + 3, nb + 1, nb + 4, nb + 2});  // (C, H, r, W, r)
  return reshape(contiguous(permute(reshape(input, split), perm)), out);
}

Tensor pixel_unshuffle(const Tensor& input, int64_t downscale_factor) {
  const char* op = "pixel_unshuffle";
  check_factor(input, downscale_factor, op, "downscale_factor");
  const int64_t nd = input.dim();
  const int64_t r = downscale_factor, c = input.size(nd - 3), h = input.size(nd - 2),
                w = input.size(nd - 1);
  EMBER_CHECK(h % r == 0, "[", op, "] pixel_unshuffle expects height to be divisible by ",
              "downscale_factor, but input.size(-2)=", h, " is not divisible by ", r);
  EMBER_CHECK(w % r == 0, "[", op, "] pixel_unshuffle expects width to be divisible by ",
              "downscale_factor, but input.size(-1)=", w, " is not divisible by ", r);
  const int64_t nb = nd - 3;
  DimVector split = dims_slice(input.sizes(), 0, nb), out(split);
  append_dims(split, {c, h / r, r, w / r, r});
  append_dims(out, {checked_mul(checked_mul(c, r, op), r, op), h / r, w / r});
  DimVector perm;
  for (int64_t i = 0; i < nb; ++i) perm.push_back(i);
  append_dims(perm, {nb, nb + 2, nb + 4, nb + 1, nb + 3});  // (C, r, r, H, W)
  return reshape(contiguous(permute(reshape(input, split), perm)), out);
}

}  // namespace native
}  // namespace ember
