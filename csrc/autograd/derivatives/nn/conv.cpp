// Derivatives of convolution, im2col and col2im (see nn_conv.h).
#include "autograd/derivatives/nn/conv.h"

#include <vector>

#include "api/complex.h"
#include "api/join.h"
#include "api/matmul.h"
#include "api/nn/conv.h"
#include "api/nn/conv_util.h"
#include "api/reduce.h"
#include "api/views.h"
#include "autograd/derivatives/jvp.h"
#include "autograd/grad_mode.h"
#include "autograd/record.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

struct ConvArgs {
  DimVector stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
};

// Sum over every dim but the channel dim (1): the bias gradient.
Tensor channel_sum(const Tensor& g) {
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < g.dim(); ++d) dims.push_back(d);
  return ember::sum(g, dims);
}

// The first `sizes` entries of each spatial dim of t (N, C, *).
Tensor crop_spatial(Tensor t, IntArrayRef sizes) {
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (t.size(2 + i) != sizes[i]) t = ember::narrow(t, 2 + i, 0, sizes[i]);
  }
  return t;
}

// d(conv)/d(weight) of the regular convolution from x-space to gy-space, written as a
// convolution (batch and channel dims swapped): gw[o, i, k] = sum_{n, t} gy[n, o, t] *
// x[n, i, t * stride - pad + k * dil], per group. Result (Co, Ci / groups, *kernel).
Tensor weight_grad_as_conv(const Tensor& gy, const Tensor& x, IntArrayRef kernel,
                           const ConvArgs& a) {
  const int64_t nd = x.dim() - 2;
  const int64_t cig = x.size(1) / a.groups, cog = gy.size(1) / a.groups;
  std::vector<Tensor> parts;
  for (int64_t gi = 0; gi < a.groups; ++gi) {
    Tensor xg = ember::transpose(ember::narrow(x, 1, gi * cig, cig), 0, 1);    // (Cig, N, X)
    Tensor gyg = ember::transpose(ember::narrow(gy, 1, gi * cog, cog), 0, 1);  // (Cog, N, Y)
    Tensor r = ember::convolution(xg, gyg, Tensor(), a.dilation, a.padding, a.stride, false,
                                  DimVector(static_cast<size_t>(nd), 0), 1);  // (Cig, Cog, k')
    parts.push_back(ember::transpose(crop_spatial(r, kernel), 0, 1));
  }
  return parts.size() == 1 ? parts[0] : ember::cat(parts, 0);
}

// The three gradients of convolution as recorded convolutions (for create_graph=True).
variable_list conv_backward_composite(const Tensor& gy, const Tensor& x, const Tensor& w,
                                      const ConvArgs& a, const std::array<bool, 3>& mask) {
  variable_list r(3);
  const int64_t nd = x.dim() - 2;
  DimVector kernel = dims_slice(w.sizes(), 2);
  if (!a.transposed) {
    if (mask[0]) {
      // The transposed convolution of gy, with the output padding that restores x's size.
      DimVector op;
      for (int64_t i = 0; i < nd; ++i) {
        const int64_t full = (gy.size(2 + i) - 1) * a.stride[i] - 2 * a.padding[i] +
                             a.dilation[i] * (kernel[i] - 1) + 1;
        op.push_back(x.size(2 + i) - full);
      }
      r[0] = ember::convolution(gy, ember::conj(w), Tensor(), a.stride, a.padding, a.dilation, true,
                                op, a.groups);
    }
    if (mask[1]) r[1] = weight_grad_as_conv(gy, ember::conj(x), kernel, a);
  } else {
    // Note [Transposed convolution as backward data] in ops/nn/conv_impl.cpp.
    if (mask[0]) {
      Tensor gi = ember::convolution(gy, ember::conj(w), Tensor(), a.stride, a.padding, a.dilation,
                                     false, DimVector(static_cast<size_t>(nd), 0), a.groups);
      r[0] = crop_spatial(gi, dims_slice(x.sizes(), 2));
    }
    // The regular convolution maps gy's space to x's: x plays its output gradient.
    if (mask[1]) r[1] = weight_grad_as_conv(ember::conj(x), gy, kernel, a);
  }
  if (mask[2]) r[2] = channel_sum(gy);
  return r;
}

}  // namespace

Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor& bias,
                   IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                   IntArrayRef output_padding, int64_t groups) {
  ConvArgs raw{DimVector(stride),         DimVector(padding), DimVector(dilation),
               DimVector(output_padding), transposed,         groups};
  auto node = autograd::new_node(
      "ConvolutionBackward0", {input, weight, bias},
      [raw](FunctionNode& n, const variable_list& g) -> variable_list {
        if (!g[0].defined()) return variable_list(3);
        Tensor x = n.saved(0), w = n.saved(1);
        const std::array<bool, 3> mask{n.should_compute_output(0), n.should_compute_output(1),
                                       n.should_compute_output(2)};
        if (autograd::GradMode::is_enabled()) {
          const int64_t nd = x.dim() - 2;
          ConvArgs a = raw;
          a.stride = expand_conv_param(raw.stride, nd, "stride", "convolution");
          a.padding = expand_conv_param(raw.padding, nd, "padding", "convolution");
          a.dilation = expand_conv_param(raw.dilation, nd, "dilation", "convolution");
          return conv_backward_composite(g[0], x, w, a, mask);
        }
        auto [gi, gw, gb] =
            ember::convolution_backward(g[0], x, w, raw.stride, raw.padding, raw.dilation,
                                        raw.transposed, raw.output_padding, raw.groups, mask);
        return variable_list{gi, gw, gb};
      });
  node->save(input);
  node->save(weight);
  if (node->has_forward()) {
    // Bilinear in (input, weight): conv(dx, w) + conv(x, dw), plus db on every position.
    node->set_jvp([raw](FunctionNode& n, const variable_list& t) -> variable_list {
      auto conv = [&](const Tensor& x, const Tensor& w) {
        return ember::convolution(x, w, Tensor(), raw.stride, raw.padding, raw.dilation,
                                  raw.transposed, raw.output_padding, raw.groups);
      };
      Tensor r;
      if (t[0].defined()) r = conv(t[0], n.saved(1));
      if (t[1].defined()) r = jvp::add(r, conv(n.saved(0), t[1]));
      if (t[2].defined()) {
        DimVector shape{t[2].numel()};  // (C, 1, ..., 1): broadcasts over the spatial dims
        for (int64_t d = 2; d < n.saved(0).dim(); ++d) shape.push_back(1);
        r = jvp::add(r, ember::reshape(t[2], shape));
      }
      return {r};
    });
  }
  return autograd::record(node, {input, weight, bias}, Tensor(), "convolution", [&] {
    return native::convolution(input, weight, bias, stride, padding, dilation, transposed,
                               output_padding, groups);
  });
}

Tensor im2col(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride) {
  DimVector k(kernel_size), d(dilation), p(padding), s(stride);
  // The forward rejects inputs of fewer than 3 dims.
  DimVector out_size = input.dim() >= 2 ? dims_slice(input.sizes(), -2) : DimVector();
  auto node = autograd::new_node(
      "Im2ColBackward0", {input},
      [k, d, p, s, out_size](FunctionNode&, const variable_list& g) -> variable_list {
        return {ember::col2im(g[0], out_size, k, d, p, s)};
      });
  return autograd::record(node, {input}, Tensor(), "im2col", [&] {
    return native::im2col(input, kernel_size, dilation, padding, stride);
  });
}

Tensor col2im(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size,
              IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride) {
  DimVector k(kernel_size), d(dilation), p(padding), s(stride);
  auto node =
      autograd::new_node("Col2ImBackward0", {input},
                         [k, d, p, s](FunctionNode&, const variable_list& g) -> variable_list {
                           return {ember::im2col(g[0], k, d, p, s)};
                         });
  return autograd::record(node, {input}, Tensor(), "col2im", [&] {
    return native::col2im(input, output_size, kernel_size, dilation, padding, stride);
  });
}

}  // namespace derivatives
}  // namespace ember
