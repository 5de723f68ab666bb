// torch._C._nn.im2col / col2im: F.unfold and F.fold, over the kernels the convolution
// fallback uses (kernels/cpu/nn/im2col_kernels.cpp).
#include "core/factory.h"
#include "core/shape.h"
#include "kernels/nn/conv_stubs.h"
#include "ops/nn/conv.h"
#include "ops/nn/conv_util.h"
#include "ops/views.h"

namespace ember {
namespace native {

namespace {

struct FoldArgs {
  DimVector k, d, p, s;
};

FoldArgs fold_args(IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
                   IntArrayRef stride, const char* op) {
  FoldArgs a{expand_conv_param(kernel_size, 2, "kernel_size", op),
             expand_conv_param(dilation, 2, "dilation", op),
             expand_conv_param(padding, 2, "padding", op),
             expand_conv_param(stride, 2, "stride", op)};
  EMBER_CHECK(a.k[0] > 0 && a.k[1] > 0, "[", op, "] kernel size should be greater than zero, ",
              "but got kernel_height: ", a.k[0], " kernel_width: ", a.k[1]);
  EMBER_CHECK(a.s[0] > 0 && a.s[1] > 0, "[", op, "] stride should be greater than zero, but got ",
              "stride_height: ", a.s[0], " stride_width: ", a.s[1]);
  EMBER_CHECK(a.d[0] > 0 && a.d[1] > 0, "[", op, "] dilation should be greater than zero, but ",
              "got dilation_height: ", a.d[0], " dilation_width: ", a.d[1]);
  EMBER_CHECK(a.p[0] >= 0 && a.p[1] >= 0, "[", op, "] padding should be non-negative, but got ",
              "pad_height: ", a.p[0], " pad_width: ", a.p[1]);
  return a;
}

void check_fold_dtype(const Tensor& t, const char* op) {
  EMBER_CHECK_T(NotImplementedError, !is_integral(t.dtype(), false), "[", op, "] \"", op,
                "_out_cpu\" not implemented for '", dtype_name(t.dtype()), "'");
}

Im2ColGeometry geometry(const FoldArgs& a, int64_t channels, int64_t ih, int64_t iw, int64_t oh,
                        int64_t ow) {
  Im2ColGeometry g;
  g.channels = channels;
  g.in[0] = ih;
  g.in[1] = iw;
  g.out[0] = oh;
  g.out[1] = ow;
  for (int i = 0; i < 2; ++i) {
    g.kernel[i] = a.k[i];
    g.stride[i] = a.s[i];
    g.pad[i] = a.p[i];
    g.dilation[i] = a.d[i];
  }
  return g;
}

// Sliding positions along one dim, with PyTorch's floor division (a kernel wider than the
// padded input gives 0 or fewer, never 1). 128-bit so that huge arguments cannot wrap around.
int64_t blocks(int64_t in, int64_t k, int64_t d, int64_t p, int64_t s) {
  const __int128 span = static_cast<__int128>(in) + 2 * static_cast<__int128>(p) -
                        (static_cast<__int128>(d) * (k - 1) + 1);
  __int128 q = span / s;
  if (span % s != 0 && span < 0) --q;
  const __int128 n = q + 1;
  EMBER_CHECK(n <= INT64_MAX, "[im2col] the number of sliding blocks overflows int64");
  return n < INT64_MIN ? INT64_MIN : static_cast<int64_t>(n);
}

}  // namespace

Tensor im2col(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride) {
  const char* op = "im2col";
  const FoldArgs a = fold_args(kernel_size, dilation, padding, stride, op);
  const int64_t dim = input.dim();
  bool valid = dim == 3 || dim == 4;
  for (int64_t i = dim == 4 ? 1 : 0; valid && i < dim; ++i) valid = input.size(i) > 0;
  EMBER_CHECK(valid, "[", op, "] Expected 3D or 4D (batch mode) tensor with optional 0 dim ",
              "batch size for input, but got: ", sizes_list(input.sizes()));
  check_fold_dtype(input, op);
  const bool batched = dim == 4;
  Tensor x = contiguous(batched ? input : unsqueeze(input, 0));
  const int64_t n = x.size(0), c = x.size(1), ih = x.size(2), iw = x.size(3);
  const int64_t oh = blocks(ih, a.k[0], a.d[0], a.p[0], a.s[0]);
  const int64_t ow = blocks(iw, a.k[1], a.d[1], a.p[1], a.s[1]);
  EMBER_CHECK(oh >= 1 && ow >= 1, "[", op, "] Given input with spatial size (", ih, ", ", iw,
              "), kernel_size=(", a.k[0], ", ", a.k[1], "), dilation=(", a.d[0], ", ", a.d[1],
              "), padding=(", a.p[0], ", ", a.p[1], "), calculated shape of the array of sliding ",
              "blocks as (", oh, ", ", ow, "), but its components must be at least one.");
  const int64_t rows = checked_mul(checked_mul(c, a.k[0], op), a.k[1], op);
  Tensor cols = empty_tensor({n, rows, checked_mul(oh, ow, op)}, x.dtype(), x.device(), op);
  im2col_stub(x.device(), geometry(a, c, ih, iw, oh, ow), x, cols);
  return batched ? cols : squeeze(cols, {0});
}

Tensor col2im(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size,
              IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride) {
  const char* op = "col2im";
  EMBER_CHECK(output_size.size() == 2, "[", op, "] It is expected output_size equals to 2, but ",
              "got size ", output_size.size());
  const FoldArgs a = fold_args(kernel_size, dilation, padding, stride, op);
  const int64_t dim = input.dim();
  bool valid = dim == 2 || dim == 3;
  for (int64_t i = dim == 3 ? 1 : 0; valid && i < dim; ++i) valid = input.size(i) > 0;
  EMBER_CHECK(
      valid, "[", op, "] Expected 2D or 3D (batch mode) tensor for input with possibly ",
      "0 batch size and non-zero dimensions for input, but got: ", sizes_list(input.sizes()));
  check_fold_dtype(input, op);
  const bool batched = dim == 3;
  const int64_t planes = input.size(batched ? 1 : 0), l = input.size(batched ? 2 : 1);
  const int64_t kk = checked_mul(a.k[0], a.k[1], "col2im");
  EMBER_CHECK(planes % kk == 0, "[", op, "] Expected size of input's dimension 1 to be divisible ",
              "by the product of kernel_size, but got input.size(1)=", planes, " and kernel_size=(",
              a.k[0], ", ", a.k[1], ").");
  const int64_t oh_in = output_size[0], ow_in = output_size[1];
  const int64_t bh = blocks(oh_in, a.k[0], a.d[0], a.p[0], a.s[0]);
  const int64_t bw = blocks(ow_in, a.k[1], a.d[1], a.p[1], a.s[1]);
  EMBER_CHECK(bh >= 1 && bw >= 1 && checked_mul(bh, bw, op) == l, "[", op, "] Given output_size=(",
              oh_in, ", ", ow_in, "), kernel_size=(", a.k[0], ", ", a.k[1], "), dilation=(", a.d[0],
              ", ", a.d[1], "), padding=(", a.p[0], ", ", a.p[1], "), stride=(", a.s[0], ", ",
              a.s[1], "), expected size of input's dimension 2 to match the calculated number of ",
              "sliding blocks ", bh, " * ", bw, " = ", bh * bw, ", but got input.size(2)=", l, ".");
  Tensor cols = contiguous(batched ? input : unsqueeze(input, 0));
  const int64_t n = cols.size(0), c = planes / kk;
  Tensor out = empty_tensor({n, c, oh_in, ow_in}, cols.dtype(), cols.device(), op);
  col2im_stub(cols.device(), geometry(a, c, oh_in, ow_in, bh, bw), cols, out);
  return batched ? out : squeeze(out, {0});
}

}  // namespace native
}  // namespace ember
