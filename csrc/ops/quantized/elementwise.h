// Quantized elementwise arithmetic and pooling on uint8 activations (PyTorch's quantized::add,
// add_relu, mul, max_pool2d, adaptive_avg_pool2d). Channels-last inputs (what the quantized
// convolution returns) stay channels-last, so a network never transposes between layers.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace ember {
namespace native {

// quint8 requant(op(dequant(a), dequant(b))) with the given output parameters; a and b per-tensor
// quint8 of broadcastable shapes. `mul` picks the product, else the sum (ReLU'd when `relu`).
Tensor quantized_add(const Tensor& a, const Tensor& b, double scale, int64_t zero_point, bool relu);
Tensor quantized_mul(const Tensor& a, const Tensor& b, double scale, int64_t zero_point, bool relu);

// Max pooling of a per-tensor quantized (N, C, H, W) or (C, H, W) input over the window
// geometry kernel/stride/padding/dilation (2 values each) with `out_h` x `out_w` outputs: the
// maximum of the integers, the input's parameters kept. The result is channels-last in memory.
Tensor quantized_max_pool2d(const Tensor& q, const int64_t (&kernel)[2], const int64_t (&stride)[2],
                            const int64_t (&padding)[2], const int64_t (&dilation)[2],
                            int64_t out_h, int64_t out_w);

// Adaptive average pooling to out_h x out_w: per output the integers' mean over PyTorch's
// adaptive window, rounded once, the input's parameters kept. Channels-last result.
Tensor quantized_adaptive_avg_pool2d(const Tensor& q, int64_t out_h, int64_t out_w);

}  // namespace native
}  // namespace ember
