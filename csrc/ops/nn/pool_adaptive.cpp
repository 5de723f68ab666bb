// Adaptive pooling: adaptive_avg_pool2d and adaptive_max_pool2d (window o of an output of size
// out over an input of size in covers [floor(o * in / out), ceil((o + 1) * in / out))); the 1-D
// forms are composites in api/nn/pool.cpp.
#include "core/factory.h"
#include "kernels/nn/pool_stubs.h"
#include "ops/nn/conv_util.h"
#include "ops/nn/pool.h"
#include "ops/quantized/elementwise.h"
#include "ops/quantized/quantize.h"
#include "ops/views.h"

namespace ember {
namespace native {

namespace {

PoolGeometry adaptive_geometry(IntArrayRef sizes, IntArrayRef output_size, const char* op) {
  const int64_t dim = static_cast<int64_t>(sizes.size());
  EMBER_CHECK(dim == 3 || dim == 4, "[", op, "] ", op, "(): Expected 3D or 4D tensor, but got ",
              sizes_list(sizes));
  EMBER_CHECK(output_size.size() == 2, "[", op, "] ", op, ": output_size must be 2");
  EMBER_CHECK(output_size[0] >= 0 && output_size[1] >= 0, "[", op, "] ", op,
              ": elements of output_size must be greater than or equal to 0 but received {",
              output_size[0], ", ", output_size[1], "}");
  for (int64_t i = 1; i < dim; ++i) {
    EMBER_CHECK(sizes[i] > 0, "[", op, "] ", op, "(): Expected input to have non-zero size for ",
                "non-batch dimensions, but input has sizes ", sizes_list(sizes), " with dimension ",
                i, " being empty");
  }
  PoolGeometry g;
  g.planes = dim == 4 ? sizes[0] * sizes[1] : sizes[0];
  for (int i = 0; i < 2; ++i) {
    g.in[i] = sizes[dim - 2 + i];
    g.out[i] = output_size[i];
  }
  return g;
}

DimVector adaptive_shape(IntArrayRef sizes, IntArrayRef output_size) {
  DimVector shape = dims_slice(sizes, 0, -2);
  shape.push_back(output_size[0]);
  shape.push_back(output_size[1]);
  return shape;
}

void check_floating(const Tensor& input, const char* op) {
  EMBER_CHECK_T(NotImplementedError, input.is_floating_point(), "[", op, "] \"", op,
                "\" not implemented for '", dtype_name(input.dtype()), "'");
}

}  // namespace

void check_adaptive_pool1d_args(const Tensor& input, IntArrayRef output_size, const char* op) {
  EMBER_CHECK(input.dim() == 2 || input.dim() == 3, "[", op, "] Expected 2 to 3 dimensions, but ",
              "got ", input.dim(), "-dimensional tensor for argument #1 'self' (while checking ",
              "arguments for ", op, ")");
  EMBER_CHECK(output_size.size() == 1, "[", op, "] ", op, ": output_size must be 1");
}

Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size) {
  const char* op = "adaptive_avg_pool2d";
  const PoolGeometry g = adaptive_geometry(input.sizes(), output_size, op);
  if (is_quantized(input.dtype())) {
    if (input.dtype() == ScalarType::QUInt8 && !quantizer_of(input, op).per_channel()) {
      return quantized_adaptive_avg_pool2d(input, g.out[0], g.out[1]);
    }
    return quantized_via_float(
        input, op, [&](const Tensor& real) { return adaptive_avg_pool2d(real, output_size); });
  }
  check_floating(input, op);
  Tensor out =
      empty_tensor(adaptive_shape(input.sizes(), output_size), input.dtype(), input.device(), op);
  if (out.numel() > 0) adaptive_avg_pool2d_stub(input.device(), g, contiguous(input), out);
  return out;
}

Tensor adaptive_avg_pool2d_backward(const Tensor& grad_output, IntArrayRef input_sizes) {
  const char* op = "adaptive_avg_pool2d_backward";
  EMBER_CHECK(
      grad_output.dim() == static_cast<int64_t>(input_sizes.size()) && grad_output.dim() >= 3, "[",
      op, "] grad_output of size ", sizes_list(grad_output.sizes()),
      " does not match the input size ", sizes_list(input_sizes));
  const DimVector out_size = dims_slice(grad_output.sizes(), -2);
  const PoolGeometry g = adaptive_geometry(input_sizes, out_size, op);
  Tensor grad_input = empty_tensor(input_sizes, grad_output.dtype(), grad_output.device(), op);
  if (grad_input.numel() > 0) {
    adaptive_avg_pool2d_backward_stub(grad_output.device(), g, contiguous(grad_output), grad_input);
  }
  return grad_input;
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, IntArrayRef output_size) {
  const char* op = "adaptive_max_pool2d";
  const PoolGeometry g = adaptive_geometry(input.sizes(), output_size, op);
  check_floating(input, op);
  const DimVector shape = adaptive_shape(input.sizes(), output_size);
  Tensor out = empty_tensor(shape, input.dtype(), input.device(), op);
  Tensor indices = empty_tensor(shape, ScalarType::Int64, input.device(), op);
  if (out.numel() > 0) {
    adaptive_max_pool2d_stub(input.device(), g, contiguous(input), out, indices);
  }
  return {out, indices};
}

}  // namespace native
}  // namespace ember
