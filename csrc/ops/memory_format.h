// Memory formats (PyTorch's torch.memory_format): the dense stride orders a 4-D (N, C, H, W) or
// 5-D (N, C, D, H, W) tensor may have. A tensor's shape never changes with its format; only
// the order its elements lie in memory: channels-last puts each pixel's channels together
// (strides of an (N, H, W, C) tensor, permuted back to the NCHW shape).
#pragma once
#include <vector>

#include "core/tensor.h"
#include "ops/creation.h"

namespace ember {
namespace native {

enum class MemoryFormat { Preserve, Contiguous, ChannelsLast, ChannelsLast3d };

const char* memory_format_name(MemoryFormat format);

// PyTorch's is_contiguous(memory_format=...): row-major for Contiguous; for the channels-last
// formats, a 4-D (5-D) tensor whose strides are those of the permuted dense layout (dims of
// size 1 may have any stride); any other rank is not channels-last.
bool is_contiguous_as(const Tensor& t, MemoryFormat format);

// The rank a channels-last format needs (4 or 5), checked (RuntimeError naming `op`).
void check_memory_format_rank(const Tensor& t, MemoryFormat format, const char* op);

// (N, C, *spatial) -> (N, *spatial, C) and back: the permutations a channels-last layout is a
// dense tensor of. (contiguous_as, which makes one with autograd, is api/memory_format.h.)
std::vector<int64_t> channels_last_order(int64_t rank);
std::vector<int64_t> channels_first_order(int64_t rank);

// An uninitialised tensor of t's shape with `options` laid out in `format` (Preserve: t's
// strides when t is dense, else row-major).
Tensor empty_like_as(const Tensor& t, TensorOptions options, MemoryFormat format);

}  // namespace native
}  // namespace ember
