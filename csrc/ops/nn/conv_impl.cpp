// aten::convolution and its fused backward: argument checks (PyTorch's messages), output
// shapes, and the mapping of every case onto the three passes of a regular 2-D convolution.
//
// Note [Transposed convolution as backward data]: a transposed convolution from x (N, Ci, X)
// to y (N, Co, Y) with weight (Ci, Co / g, k) is the backward-data pass of the regular
// convolution from Y-space to X-space that has the same weight, stride, padding and dilation
// (its weight layout (out_channels, in_channels / g, k) is exactly (Ci, Co / g, k)). So
//   transposed forward        = regular backward data (grad_output := x, grad_input := y)
//   transposed backward data  = regular forward       (input := grad_y)
//   transposed backward wght  = regular backward weights (grad_output := x, input := grad_y)
// and every case runs on the same three kernels (oneDNN or im2col + GEMM).
// 1-D convolutions are 2-D ones with a 1-high input and kernel (views, no copies).
#include <algorithm>

#include "core/factory.h"
#include "ops/complex.h"
#include "ops/creation.h"
#include "ops/nn/conv.h"
#include "ops/nn/conv_gemm.h"
#include "ops/nn/conv_util.h"
#include "ops/reduce.h"
#include "ops/shape_util.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(conv_fast_forward_stub, ConvForwardFn);
EMBER_DEFINE_STUB(conv_fast_backward_stub, ConvBackwardFn);
EMBER_DEFINE_STUB(conv_fast_backward_data_stub, ConvBackwardDataFn);
EMBER_DEFINE_STUB(conv_fast_backward_weights_stub, ConvBackwardWeightsFn);
EMBER_DEFINE_STUB(im2col_stub, Im2ColFn);
EMBER_DEFINE_STUB(col2im_stub, Col2ImFn);
EMBER_DEFINE_STUB(add_channel_bias_stub, AddChannelBiasFn);

std::string sizes_list(IntArrayRef sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

DimVector expand_conv_param(IntArrayRef values, int64_t n, const char* name, const char* op) {
  if (values.size() == static_cast<size_t>(n)) return DimVector(values);
  EMBER_CHECK(values.size() == 1, "[", op, "] expected ", name,
              " to be a single integer value or a list of ", n,
              " values to match the convolution dimensions, but got ", name, "=",
              sizes_list(values));
  return DimVector(static_cast<size_t>(n), values[0]);
}

namespace {

struct Params {
  int64_t nd = 2;  // spatial dims: 1 or 2
  DimVector stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
};

Params make_params(const Tensor& input, IntArrayRef stride, IntArrayRef padding,
                   IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                   int64_t groups, const char* op) {
  Params p;
  const int64_t dim = input.dim();
  EMBER_CHECK(dim >= 3, "[", op, "] expected a batched input of at least 3 dimensions, but got ",
              "input of size: ", sizes_list(input.sizes()));
  EMBER_CHECK_T(NotImplementedError, dim <= 4, "[", op,
                "] only 1-D and 2-D convolutions are supported, but got input of size: ",
                sizes_list(input.sizes()));
  p.nd = dim - 2;
  p.stride = expand_conv_param(stride, p.nd, "stride", op);
  p.padding = expand_conv_param(padding, p.nd, "padding", op);
  p.dilation = expand_conv_param(dilation, p.nd, "dilation", op);
  p.output_padding = expand_conv_param(output_padding, p.nd, "output_padding", op);
  p.transposed = transposed;
  p.groups = groups;
  for (int64_t i = 0; i < p.nd; ++i) {
    EMBER_CHECK(p.padding[i] >= 0, "[", op, "] negative padding is not supported");
    EMBER_CHECK(p.output_padding[i] >= 0, "[", op, "] negative output_padding is not supported");
    EMBER_CHECK(p.stride[i] > 0, "[", op, "] non-positive stride is not supported");
    EMBER_CHECK(p.dilation[i] > 0, "[", op, "] dilation should be greater than zero");
  }
  EMBER_CHECK(groups > 0, "[", op, "] non-positive groups is not supported");
  if (transposed) {
    for (int64_t i = 0; i < p.nd; ++i) {
      const bool ok = p.output_padding[i] < p.stride[i] || p.output_padding[i] < p.dilation[i];
      if (ok) continue;
      EMBER_THROW(Error, "[", op,
                  "] output padding must be smaller than either stride or dilation, but got "
                  "output_padding=",
                  sizes_list(p.output_padding), " stride=", sizes_list(p.stride),
                  " dilation=", sizes_list(p.dilation));
    }
  }
  return p;
}

void check_shapes(const Tensor& input, const Tensor& weight, const Tensor& bias, const Params& p,
                  const char* op) {
  const IntArrayRef ws = weight.sizes();
  const int64_t k = input.dim(), groups = p.groups;
  EMBER_CHECK(weight.dim() == k, "[", op, "] Expected ", weight.dim(), "-dimensional input for ",
              weight.dim(), "-dimensional weight ", sizes_list(ws), ", but got ", k,
              "-dimensional input of size ", sizes_list(input.sizes()), " instead");
  EMBER_CHECK(ws[0] >= groups, "[", op, "] Given groups=", groups,
              ", expected weight to be at least ", groups,
              " at dimension 0, but got weight of size ", sizes_list(ws), " instead");
  EMBER_CHECK(ws[0] % groups == 0, "[", op, "] Given groups=", groups,
              ", expected weight to be divisible by ", groups,
              " at dimension 0, but got weight of size ", sizes_list(ws), " instead");
  if (!p.transposed) {
    EMBER_CHECK(input.size(1) == ws[1] * groups, "[", op, "] Given groups=", groups,
                ", weight of size ", sizes_list(ws), ", expected input", sizes_list(input.sizes()),
                " to have ", ws[1] * groups, " channels, but got ", input.size(1),
                " channels instead");
    EMBER_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == ws[0]), "[", op,
                "] Given weight of size ", sizes_list(ws),
                ", expected bias to be 1-dimensional with ", ws[0],
                " elements, but got bias of size ", sizes_list(bias.sizes()), " instead");
    bool fits = true;
    std::string in_s, k_s;
    for (int64_t i = 0; i < p.nd; ++i) {
      const int64_t padded = input.size(2 + i) + 2 * p.padding[i];
      const int64_t extent = p.dilation[i] * (ws[2 + i] - 1) + 1;
      fits = fits && padded >= extent;
      in_s += (i ? " x " : "") + std::to_string(padded);
      k_s += (i ? " x " : "") + std::to_string(extent);
    }
    EMBER_CHECK(fits, "[", op, "] Calculated padded input size per channel: (", in_s,
                "). Kernel size: (", k_s, "). Kernel size can't be greater than actual input size");
  } else {
    EMBER_CHECK(input.size(1) == ws[0], "[", op, "] Given transposed=1, weight of size ",
                sizes_list(ws), ", expected input", sizes_list(input.sizes()), " to have ", ws[0],
                " channels, but got ", input.size(1), " channels instead");
    EMBER_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == ws[1] * groups), "[", op,
                "] Given transposed=1, weight of size ", sizes_list(ws),
                ", expected bias to be 1-dimensional with ", ws[1] * groups,
                " elements, but got bias of size ", sizes_list(bias.sizes()), " instead");
  }
  if (input.numel() == 0) {
    bool spatial_empty = false;
    for (int64_t i = 2; i < k; ++i) spatial_empty = spatial_empty || input.size(i) == 0;
    EMBER_CHECK(!spatial_empty, "[", op,
                "] Only zero batch or zero channel inputs are supported, but got input shape: ",
                sizes_list(input.sizes()));
  }
}

void check_dtypes(const Tensor& input, const Tensor& weight, const Tensor& bias, const char* op) {
  EMBER_CHECK(input.dtype() == weight.dtype(), "[", op, "] expected scalar type ",
              torch_type_name(input.dtype()), " but found ", torch_type_name(weight.dtype()),
              " (input ", dtype_name(input.dtype()), ", weight ", dtype_name(weight.dtype()), ")");
  EMBER_CHECK(!bias.defined() || bias.dtype() == input.dtype(), "[", op, "] Input type (",
              torch_cpp_type_name(input.dtype()), ") and bias type (",
              torch_cpp_type_name(bias.dtype()), ") should be the same");
  EMBER_CHECK_T(NotImplementedError, input.dtype() != ScalarType::Bool, "[", op,
                "] \"slow_conv2d_cpu\" not implemented for 'Bool'");
}

// Output spatial sizes; a transposed convolution must produce at least one element per dim
// (PyTorch's "Output size is too small").
DimVector output_sizes(const Tensor& input, const Tensor& weight, const Params& p) {
  DimVector out{input.size(0), p.transposed ? weight.size(1) * p.groups : weight.size(0)};
  bool too_small = false;
  std::string in_s, out_s;
  for (int64_t i = 0; i < p.nd; ++i) {
    const int64_t in = input.size(2 + i), k = weight.size(2 + i);
    const int64_t extent = p.dilation[i] * (k - 1) + 1;
    int64_t size;
    if (p.transposed) {
      size = (in - 1) * p.stride[i] - 2 * p.padding[i] + extent + p.output_padding[i];
      too_small = too_small || size <= 0;
    } else {
      size = (in + 2 * p.padding[i] - extent) / p.stride[i] + 1;
    }
    in_s += (i ? " x " : "") + std::to_string(in);
    out_s += (i ? " x " : "") + std::to_string(size);
    out.push_back(size);
  }
  EMBER_CHECK(!too_small || input.numel() == 0, "[convolution] Given input size per channel: (",
              in_s, "). Calculated output size per channel: (", out_s,
              "). Output size is too small");
  return out;
}

// A contiguous 4-D view (or copy) of a 3- or 4-D tensor: 1-D convolutions get a 1-high dim.
Tensor as_4d(const Tensor& t) {
  Tensor c = contiguous(t);
  return c.dim() == 4 ? c : unsqueeze(c, 2);
}

// The regular-convolution geometry: `in_space` is the regular input (X for a regular conv, the
// transposed conv's output Y), `out_space` its output.
ConvGeometry geometry(const Tensor& weight, IntArrayRef in_space, IntArrayRef out_space,
                      const Params& p) {
  ConvGeometry g;
  g.batch = in_space[0];
  g.in_channels = in_space[1];
  g.out_channels = out_space[1];
  g.groups = p.groups;
  const int64_t off = 2 - p.nd;  // 1-D: the height dims are 1 / unit
  for (int64_t i = 0; i < p.nd; ++i) {
    g.in[off + i] = in_space[2 + i];
    g.out[off + i] = out_space[2 + i];
    g.kernel[off + i] = weight.size(2 + i);
    g.stride[off + i] = p.stride[i];
    g.pad[off + i] = p.padding[i];
    g.dilation[off + i] = p.dilation[i];
  }
  return g;
}

void run_forward(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& b,
                 const Tensor& out) {
  if (!conv_fast_forward_stub(x.device(), g, x, w, b, out)) conv_forward_gemm(g, x, w, b, out);
}
void run_backward_data(const ConvGeometry& g, const Tensor& grad, const Tensor& w,
                       const Tensor& grad_input) {
  if (!conv_fast_backward_data_stub(grad.device(), g, grad, w, grad_input)) {
    conv_backward_data_gemm(g, grad, w, grad_input);
  }
}
void run_backward_weights(const ConvGeometry& g, const Tensor& grad, const Tensor& x,
                          const Tensor& grad_weight, const Tensor& grad_bias) {
  if (conv_fast_backward_weights_stub(grad.device(), g, grad, x, grad_weight, grad_bias)) return;
  conv_backward_weights_gemm(g, grad, x, grad_weight);
  if (grad_bias.defined()) {
    Tensor gb = grad_bias;
    sum(view(grad, {g.batch, g.out_channels, -1}), std::vector<int64_t>{0, 2}, false, grad.dtype(),
        gb);
  }
}

// Whether the regular-convolution geometry does any multiply-adds (no empty dims).
bool has_work(const ConvGeometry& g) {
  return g.batch > 0 && g.in_channels > 0 && g.out_channels > 0 && g.in[0] > 0 && g.in[1] > 0 &&
         g.out[0] > 0 && g.out[1] > 0;
}

Tensor convolution_impl(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        const Params& p) {
  const DimVector out_shape = output_sizes(input, weight, p);
  Tensor out = empty_tensor(out_shape, input.dtype(), input.device(), "convolution");
  Tensor x = as_4d(input), w = as_4d(weight), out4 = out.dim() == 4 ? out : unsqueeze(out, 2);
  Tensor b = bias.defined() ? contiguous(bias) : Tensor();
  const ConvGeometry g = p.transposed ? geometry(weight, out_shape, input.sizes(), p)
                                      : geometry(weight, input.sizes(), out_shape, p);
  if (!has_work(g)) {
    Tensor o = out;
    zero_(o);
    if (b.defined() && out.numel() > 0) {
      add_channel_bias_stub(out.device(), view(out, {out_shape[0], out_shape[1], -1}), b);
    }
    return out;
  }
  if (!p.transposed) {
    run_forward(g, x, w, b, out4);
  } else {
    run_backward_data(g, x, w, out4);  // Note [Transposed convolution as backward data]
    if (b.defined()) {
      add_channel_bias_stub(out.device(), view(out, {out_shape[0], out_shape[1], -1}), b);
    }
  }
  out.bump_version();
  return out;
}

}  // namespace

Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor& bias,
                   IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                   IntArrayRef output_padding, int64_t groups) {
  const char* op = "convolution";
  const Params p =
      make_params(input, stride, padding, dilation, transposed, output_padding, groups, op);
  check_shapes(input, weight, bias, p, op);
  check_dtypes(input, weight, bias, op);
  return convolution_impl(input, weight, bias, p);
}

std::tuple<Tensor, Tensor, Tensor> convolution_backward(const Tensor& grad_output,
                                                        const Tensor& input, const Tensor& weight,
                                                        IntArrayRef stride, IntArrayRef padding,
                                                        IntArrayRef dilation, bool transposed,
                                                        IntArrayRef output_padding, int64_t groups,
                                                        std::array<bool, 3> output_mask) {
  const char* op = "convolution_backward";
  const Params p =
      make_params(input, stride, padding, dilation, transposed, output_padding, groups, op);
  check_shapes(input, weight, Tensor(), p, op);
  check_dtypes(input, weight, Tensor(), op);
  EMBER_CHECK(grad_output.dtype() == input.dtype(), "[", op, "] expected grad_output of dtype ",
              dtype_name(input.dtype()), ", but got ", dtype_name(grad_output.dtype()));
  const DimVector out_shape = output_sizes(input, weight, p);
  EMBER_CHECK(grad_output.sizes().equals(out_shape), "[", op, "] expected grad_output of size ",
              sizes_list(out_shape), ", but got ", sizes_list(grad_output.sizes()));
  // Complex: the gradients are those of the conjugated operands (grad * conj(f')).
  const bool cplx = is_complex(input.dtype());
  Tensor x = as_4d(cplx ? conj(input) : input), w = as_4d(cplx ? conj(weight) : weight);
  Tensor gy = as_4d(grad_output);
  Tensor grad_input, grad_weight, grad_bias;
  const TensorOptions opts(input.dtype(), input.device());
  if (output_mask[0]) grad_input = empty(input.sizes(), opts);
  if (output_mask[1]) grad_weight = empty(weight.sizes(), opts);
  if (output_mask[2]) grad_bias = empty({out_shape[1]}, opts);
  auto as4 = [](const Tensor& t) { return t.dim() == 4 ? t : unsqueeze(t, 2); };
  const ConvGeometry g = p.transposed ? geometry(weight, out_shape, input.sizes(), p)
                                      : geometry(weight, input.sizes(), out_shape, p);
  if (!has_work(g)) {
    for (Tensor* t : {&grad_input, &grad_weight, &grad_bias}) {
      if (t->defined()) zero_(*t);
    }
    if (grad_bias.defined() && grad_output.numel() > 0) {
      sum(view(grad_output, {out_shape[0], out_shape[1], -1}), std::vector<int64_t>{0, 2}, false,
          gy.dtype(), grad_bias);
    }
    return {grad_input, grad_weight, grad_bias};
  }
  if (!p.transposed) {
    const bool both = grad_input.defined() && grad_weight.defined();
    if (both && conv_fast_backward_stub(gy.device(), g, gy, x, w, as4(grad_input), as4(grad_weight),
                                        grad_bias)) {
      // One call computed all requested gradients (sharing grad_output's reorder).
    } else if (grad_weight.defined()) {
      if (grad_input.defined()) run_backward_data(g, gy, w, as4(grad_input));
      run_backward_weights(g, gy, x, as4(grad_weight), grad_bias);
    } else {
      if (grad_input.defined()) run_backward_data(g, gy, w, as4(grad_input));
      if (grad_bias.defined()) {
        sum(view(gy, {g.batch, g.out_channels, -1}), std::vector<int64_t>{0, 2}, false,
            grad_output.dtype(), grad_bias);
      }
    }
  } else {
    // Note [Transposed convolution as backward data]
    if (grad_input.defined()) run_forward(g, gy, w, Tensor(), as4(grad_input));
    if (grad_weight.defined()) run_backward_weights(g, x, gy, as4(grad_weight), Tensor());
    if (grad_bias.defined()) {
      sum(view(gy, {out_shape[0], out_shape[1], -1}), std::vector<int64_t>{0, 2}, false,
          grad_output.dtype(), grad_bias);
    }
  }
  for (Tensor* t : {&grad_input, &grad_weight, &grad_bias}) {
    if (t->defined()) t->bump_version();
  }
  return {grad_input, grad_weight, grad_bias};
}

}  // namespace native
}  // namespace ember
