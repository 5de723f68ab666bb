// The im2col + GEMM convolution: every dtype the GEMM takes (float64, float16, integers,
// complex) and any geometry oneDNN declines. Per group, the forward pass is one batched GEMM
// W_g (OCg x K) @ cols_g (K x L) with K = Cg * kh * kw and L = out_h * out_w; backward data is
// W_g^T @ grad followed by col2im, backward weights sums grad_g @ cols_g^T over the batch.
// The batch is processed in chunks so that the columns buffer stays bounded.
#include <algorithm>

#include "core/factory.h"
#include "ops/creation.h"
#include "ops/matmul_common.h"
#include "ops/nn/conv_gemm.h"
#include "ops/views.h"

namespace ember {
namespace native {

namespace {

constexpr int64_t kColumnsBudgetBytes = int64_t(64) << 20;

Im2ColGeometry im2col_geometry(const ConvGeometry& g) {
  Im2ColGeometry c;
  c.channels = g.in_channels;
  for (int d = 0; d < 2; ++d) {
    c.in[d] = g.in[d];
    c.out[d] = g.out[d];
    c.kernel[d] = g.kernel[d];
    c.stride[d] = g.stride[d];
    c.pad[d] = g.pad[d];
    c.dilation[d] = g.dilation[d];
  }
  return c;
}

struct Sizes {
  int64_t k, l, ocg, cols_per_sample, chunk;
};

Sizes sizes_of(const ConvGeometry& g, size_t itemsize) {
  Sizes s;
  s.k = g.in_channels / g.groups * g.kernel[0] * g.kernel[1];
  s.l = g.out[0] * g.out[1];
  s.ocg = g.out_channels / g.groups;
  s.cols_per_sample = g.groups * s.k * s.l;
  const int64_t per = std::max<int64_t>(1, s.cols_per_sample * static_cast<int64_t>(itemsize));
  s.chunk = std::clamp<int64_t>(kColumnsBudgetBytes / per, 1, std::max<int64_t>(g.batch, 1));
  return s;
}

// The (OCg, K) weight matrix of group gi, as a (b, OCg, K) batch of one broadcast matrix.
Tensor group_weight(const Tensor& w2, int64_t gi, int64_t b, const Sizes& s) {
  Tensor wg = narrow(w2, 0, gi * s.ocg, s.ocg);  // (OCg, K)
  return make_view(wg, {b, s.ocg, s.k}, {0, wg.stride(0), wg.stride(1)}, wg.storage_offset());
}

}  // namespace

void conv_forward_gemm(const ConvGeometry& g, const Tensor& input, const Tensor& weight,
                       const Tensor& bias, const Tensor& output) {
  const Sizes s = sizes_of(g, input.itemsize());
  const Im2ColGeometry ig = im2col_geometry(g);
  Tensor w2 = view(weight, {g.out_channels, s.k});
  Tensor out4 = view(output, {g.batch, g.groups, s.ocg, s.l});
  for (int64_t b0 = 0; b0 < g.batch; b0 += s.chunk) {
    const int64_t b = std::min(s.chunk, g.batch - b0);
    Tensor cols = empty_tensor({b, g.groups, s.k, s.l}, input.dtype(), input.device(), "conv");
    im2col_stub(input.device(), ig, narrow(input, 0, b0, b), cols);
    Tensor out_chunk = narrow(out4, 0, b0, b);
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      gemm_into(select(out_chunk, 1, gi), group_weight(w2, gi, b, s), select(cols, 1, gi), 1, 0,
                "conv");
    }
  }
  if (bias.defined()) {
    add_channel_bias_stub(output.device(), view(output, {g.batch, g.out_channels, s.l}), bias);
  }
}

void conv_backward_data_gemm(const ConvGeometry& g, const Tensor& grad_output, const Tensor& weight,
                             const Tensor& grad_input) {
  const Sizes s = sizes_of(g, grad_output.itemsize());
  const Im2ColGeometry ig = im2col_geometry(g);
  Tensor w2 = view(weight, {g.out_channels, s.k});
  Tensor grad4 = view(grad_output, {g.batch, g.groups, s.ocg, s.l});
  for (int64_t b0 = 0; b0 < g.batch; b0 += s.chunk) {
    const int64_t b = std::min(s.chunk, g.batch - b0);
    Tensor cols =
        empty_tensor({b, g.groups, s.k, s.l}, grad_output.dtype(), grad_output.device(), "conv");
    Tensor grad_chunk = narrow(grad4, 0, b0, b);
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      gemm_into(select(cols, 1, gi), transpose(group_weight(w2, gi, b, s), 1, 2),
                select(grad_chunk, 1, gi), 1, 0, "conv");
    }
    col2im_stub(grad_output.device(), ig, cols, narrow(grad_input, 0, b0, b));
  }
}

void conv_backward_weights_gemm(const ConvGeometry& g, const Tensor& grad_output,
                                const Tensor& input, const Tensor& grad_weight) {
  const Sizes s = sizes_of(g, input.itemsize());
  const Im2ColGeometry ig = im2col_geometry(g);
  Tensor gw = view(grad_weight, {g.groups, s.ocg, s.k});
  Tensor gw_mut = gw;
  zero_(gw_mut);
  Tensor grad4 = view(grad_output, {g.batch, g.groups, s.ocg, s.l});
  for (int64_t b0 = 0; b0 < g.batch; b0 += s.chunk) {
    const int64_t b = std::min(s.chunk, g.batch - b0);
    Tensor cols = empty_tensor({b, g.groups, s.k, s.l}, input.dtype(), input.device(), "conv");
    im2col_stub(input.device(), ig, narrow(input, 0, b0, b), cols);
    for (int64_t i = 0; i < b; ++i) {
      for (int64_t gi = 0; gi < g.groups; ++gi) {
        // gw[gi] (OCg, K) += grad[b0 + i, gi] (OCg, L) @ cols[i, gi]^T (L, K)
        gemm_into(unsqueeze(select(gw, 0, gi), 0),
                  unsqueeze(select(select(grad4, 0, b0 + i), 0, gi), 0),
                  unsqueeze(transpose(select(select(cols, 0, i), 0, gi), 0, 1), 0), 1, 1, "conv");
      }
    }
  }
}

}  // namespace native
}  // namespace ember
