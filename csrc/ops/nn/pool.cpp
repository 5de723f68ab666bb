// Windowed pooling: max_pool1d/2d (with indices) and avg_pool1d/2d, PyTorch's argument checks
// and output sizes (pooling_output_shape: floor or ceil mode, the last window starting inside
// the input or its left padding), and max_pool_backward shared with adaptive max pooling.
#include "ops/nn/pool.h"

#include "core/factory.h"
#include "kernels/nn/pool_stubs.h"
#include "ops/nn/conv_util.h"
#include "ops/quantized/elementwise.h"
#include "ops/quantized/quantize.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(max_pool2d_stub, MaxPoolFn);
EMBER_DEFINE_STUB(max_pool_backward_stub, MaxPoolBackwardFn);
EMBER_DEFINE_STUB(avg_pool2d_stub, AvgPoolFn);
EMBER_DEFINE_STUB(avg_pool2d_backward_stub, AvgPoolBackwardFn);
EMBER_DEFINE_STUB(adaptive_avg_pool2d_stub, AdaptiveAvgPoolFn);
EMBER_DEFINE_STUB(adaptive_avg_pool2d_backward_stub, AdaptiveAvgPoolBackwardFn);
EMBER_DEFINE_STUB(adaptive_max_pool2d_stub, AdaptiveMaxPoolFn);

namespace {

// floor division (PyTorch's div_rtn)
int64_t div_floor(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t pooling_output_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil,
                            bool ceil_mode, const char* op) {
  EMBER_CHECK(stride != 0, "[", op, "] stride should not be zero");
  EMBER_CHECK(pad >= 0, "[", op, "] pad must be non-negative, but got pad: ", pad);
  EMBER_CHECK(pad <= ((k - 1) * dil + 1) / 2, "[", op,
              "] pad should be at most half of effective kernel size, but got pad=", pad,
              ", kernel_size=", k, " and dilation=", dil);
  int64_t out =
      div_floor(in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0), stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// kernel_size / stride / padding / dilation with one or two entries each (stride may be empty).
struct PoolArgs {
  DimVector k, s, p, d;
};

DimVector two(IntArrayRef v, const char* what, const char* op, bool may_be_empty) {
  const bool ok = v.size() == 1 || v.size() == 2 || (may_be_empty && v.empty());
  EMBER_CHECK(ok, "[", op, "] ", op, ": ", what);
  if (v.size() == 2) return DimVector(v);
  return v.empty() ? DimVector() : DimVector{v[0], v[0]};
}

PoolArgs pool_args(IntArrayRef kernel, IntArrayRef stride, IntArrayRef padding,
                   IntArrayRef dilation, const char* op) {
  PoolArgs a;
  a.k = two(kernel, "kernel_size must either be a single int, or a tuple of two ints", op, false);
  a.s =
      two(stride, "stride must either be omitted, a single int, or a tuple of two ints", op, true);
  if (a.s.empty()) a.s = a.k;
  a.p = two(padding, "padding must either be a single int, or a tuple of two ints", op, false);
  a.d = two(dilation, "dilation must be either a single int, or a tuple of two ints", op, false);
  return a;
}

// Checks the input and arguments as PyTorch's pool2d_shape_check and returns the geometry over
// the input's planes (all dims but the last two).
PoolGeometry pool_geometry(IntArrayRef sizes, const PoolArgs& a, bool ceil_mode, const char* op) {
  const int64_t dim = static_cast<int64_t>(sizes.size());
  EMBER_CHECK(dim == 3 || dim == 4, "[", op,
              "] non-empty 3D or 4D (batch mode) tensor expected for input, but got input of "
              "size ",
              sizes_list(sizes));
  PoolGeometry g;
  for (int i = 0; i < 2; ++i) {
    g.in[i] = sizes[dim - 2 + i];
    g.kernel[i] = a.k[i];
    g.stride[i] = a.s[i];
    g.pad[i] = a.p[i];
    g.dilation[i] = a.d[i];
    g.out[i] = pooling_output_size(g.in[i], a.k[i], a.p[i], a.s[i], a.d[i], ceil_mode, op);
  }
  EMBER_CHECK(a.k[0] > 0 && a.k[1] > 0, "[", op, "] kernel size should be greater than zero, ",
              "but got kH: ", a.k[0], " kW: ", a.k[1]);
  EMBER_CHECK(a.s[0] > 0 && a.s[1] > 0, "[", op, "] stride should be greater than zero, but got ",
              "dH: ", a.s[0], " dW: ", a.s[1]);
  EMBER_CHECK(a.d[0] > 0 && a.d[1] > 0, "[", op, "] dilation should be greater than zero, but ",
              "got dilationH: ", a.d[0], " dilationW: ", a.d[1]);
  bool valid = sizes[dim - 3] != 0 && g.in[0] != 0 && g.in[1] != 0;
  EMBER_CHECK(valid, "[", op, "] Expected 3D or 4D (batch mode) tensor with optional 0 dim ",
              "batch size for input, but got:", sizes_list(sizes));
  const int64_t planes_c = sizes[dim - 3];
  EMBER_CHECK(g.out[0] >= 1 && g.out[1] >= 1, "[", op, "] Given input size: (", planes_c, "x",
              g.in[0], "x", g.in[1], "). Calculated output size: (", planes_c, "x", g.out[0], "x",
              g.out[1], "). Output size is too small");
  g.planes = dim == 4 ? sizes[0] * planes_c : planes_c;
  return g;
}

DimVector pooled_shape(IntArrayRef sizes, const PoolGeometry& g) {
  DimVector shape = dims_slice(sizes, 0, -2);
  shape.push_back(g.out[0]);
  shape.push_back(g.out[1]);
  return shape;
}

void check_pool_dtype(const Tensor& input, const char* op) {
  const ScalarType t = input.dtype();
  EMBER_CHECK_T(NotImplementedError, t != ScalarType::Bool && !is_complex(t), "[", op, "] \"", op,
                "\" not implemented for '", dtype_name(t), "'");
}

std::tuple<Tensor, Tensor> max_pool2d_impl(const Tensor& input, const PoolGeometry& g,
                                           bool with_indices, const char* op) {
  const DimVector shape = pooled_shape(input.sizes(), g);
  Tensor out = empty_tensor(shape, input.dtype(), input.device(), op);
  Tensor indices =
      with_indices ? empty_tensor(shape, ScalarType::Int64, input.device(), op) : Tensor();
  if (out.numel() > 0) max_pool2d_stub(input.device(), g, contiguous(input), out, indices);
  return {out, indices};
}

}  // namespace

DimVector pool1d_param(IntArrayRef v, int64_t height_value, const char* what, const char* op) {
  EMBER_CHECK(v.size() == 1, "[", op, "] ", op, "() ", what,
              " must be an int, list of ints or tuple of ints of size 1 but got size ", v.size());
  return {height_value, v[0]};
}

void check_pool1d_input(const Tensor& input, const char* op) {
  const int64_t dim = input.dim();
  bool ok = dim == 2 || dim == 3;
  for (int64_t i = dim == 3 ? 1 : 0; ok && i < dim; ++i) ok = input.size(i) > 0;
  EMBER_CHECK(ok, "[", op, "] ", op, ": Expected 2D or 3D (batch mode) tensor with optional 0 ",
              "dim batch size for input, but got:", sizes_list(input.sizes()));
}

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride, IntArrayRef padding,
                                                   IntArrayRef dilation, bool ceil_mode) {
  const char* op = "max_pool2d";
  const PoolArgs a = pool_args(kernel_size, stride, padding, dilation, op);
  const PoolGeometry g = pool_geometry(input.sizes(), a, ceil_mode, op);
  check_pool_dtype(input, op);
  return max_pool2d_impl(input, g, true, op);
}

Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  const char* op = "max_pool2d";
  const PoolArgs a = pool_args(kernel_size, stride, padding, dilation, op);
  const PoolGeometry g = pool_geometry(input.sizes(), a, ceil_mode, op);
  if (is_quantized(input.dtype())) {  // exact: the maximum of the integers
    const Quantizer& q = quantizer_of(input, op);
    if (q.per_channel()) {
      return quantized_via_float(input, op, [&](const Tensor& real) {
        return max_pool2d(real, kernel_size, stride, padding, dilation, ceil_mode);
      });
    }
    return quantized_max_pool2d(input, g.kernel, g.stride, g.pad, g.dilation, g.out[0], g.out[1]);
  }
  check_pool_dtype(input, op);
  return std::get<0>(max_pool2d_impl(input, g, false, op));
}

Tensor max_pool_backward(const Tensor& grad_output, IntArrayRef input_sizes, const Tensor& indices,
                         const char* name) {
  EMBER_CHECK(grad_output.sizes().equals(indices.sizes()), "[", name,
              "_backward] expected grad_output and indices of one size, but got ",
              sizes_list(grad_output.sizes()), " and ", sizes_list(indices.sizes()));
  EMBER_CHECK(indices.dtype() == ScalarType::Int64, "[", name,
              "_backward] expected int64 indices, but got ", dtype_name(indices.dtype()));
  EMBER_CHECK(
      grad_output.dim() == static_cast<int64_t>(input_sizes.size()) && grad_output.dim() >= 2, "[",
      name, "_backward] grad_output of size ", sizes_list(grad_output.sizes()),
      " does not match the input size ", sizes_list(input_sizes));
  const int64_t nd = static_cast<int64_t>(input_sizes.size());
  int64_t planes = 1;
  for (int64_t i = 0; i + 2 < nd; ++i) planes *= input_sizes[i];
  const int64_t in_plane = input_sizes[nd - 2] * input_sizes[nd - 1];
  const int64_t out_plane = grad_output.size(nd - 2) * grad_output.size(nd - 1);
  Tensor grad_input = empty_tensor(input_sizes, grad_output.dtype(), grad_output.device(), name);
  if (grad_input.numel() > 0) {
    max_pool_backward_stub(grad_output.device(), view(contiguous(grad_output), {planes, out_plane}),
                           view(contiguous(indices), {planes, out_plane}),
                           view(grad_input, {planes, in_plane}));
  }
  return grad_input;
}

// ---- average pooling ----------------------------------------------------------------------

namespace {

PoolGeometry avg_geometry(IntArrayRef sizes, IntArrayRef kernel_size, IntArrayRef stride,
                          IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                          std::optional<int64_t> divisor_override, const char* op) {
  const PoolArgs a = pool_args(kernel_size, stride, padding, {1}, op);
  EMBER_CHECK(!divisor_override || *divisor_override != 0, "[", op, "] divisor must be not zero");
  PoolGeometry g = pool_geometry(sizes, a, ceil_mode, op);
  g.count_include_pad = count_include_pad;
  g.divisor_override = divisor_override.value_or(0);
  return g;
}

}  // namespace

Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool2d";
  if (is_quantized(input.dtype())) {
    return quantized_via_float(input, op, [&](const Tensor& real) {
      return avg_pool2d(real, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override);
    });
  }
  const PoolGeometry g = avg_geometry(input.sizes(), kernel_size, stride, padding, ceil_mode,
                                      count_include_pad, divisor_override, op);
  check_pool_dtype(input, op);
  Tensor out = empty_tensor(pooled_shape(input.sizes(), g), input.dtype(), input.device(), op);
  if (out.numel() > 0) avg_pool2d_stub(input.device(), g, contiguous(input), out);
  return out;
}

Tensor avg_pool2d_backward(const Tensor& grad_output, IntArrayRef input_sizes,
                           IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                           bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool2d_backward";
  const PoolGeometry g = avg_geometry(input_sizes, kernel_size, stride, padding, ceil_mode,
                                      count_include_pad, divisor_override, op);
  const DimVector expected = pooled_shape(input_sizes, g);
  EMBER_CHECK(grad_output.sizes().equals(expected), "[", op, "] expected grad_output of size ",
              sizes_list(expected), ", but got ", sizes_list(grad_output.sizes()));
  Tensor grad_input = empty_tensor(input_sizes, grad_output.dtype(), grad_output.device(), op);
  if (grad_input.numel() > 0) {
    avg_pool2d_backward_stub(grad_output.device(), g, contiguous(grad_output), grad_input);
  }
  return grad_input;
}

}  // namespace native
}  // namespace ember
