#include "ops/memory_format.h"

#include <vector>

#include "core/error.h"
#include "core/shape.h"
#include "ops/conversion.h"
#include "ops/creation.h"
#include "ops/views.h"

namespace ember {
namespace native {
namespace {

int64_t channels_last_rank(MemoryFormat format) {
  return format == MemoryFormat::ChannelsLast ? 4 : 5;
}

}  // namespace

std::vector<int64_t> channels_last_order(int64_t rank) {
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < rank; ++d) dims.push_back(d);
  dims.push_back(1);
  return dims;
}

std::vector<int64_t> channels_first_order(int64_t rank) {
  std::vector<int64_t> dims{0, rank - 1};
  for (int64_t d = 1; d < rank - 1; ++d) dims.push_back(d);
  return dims;
}

void check_memory_format_rank(const Tensor& t, MemoryFormat format, const char* op) {
  const int64_t rank = channels_last_rank(format);
  EMBER_CHECK(t.dim() == rank, "[", op, "] required rank ", rank, " tensor to use ",
              memory_format_name(format), " format, got shape ", shape_str(t.sizes()));
}

const char* memory_format_name(MemoryFormat format) {
  switch (format) {
    case MemoryFormat::Preserve:
      return "preserve_format";
    case MemoryFormat::Contiguous:
      return "contiguous_format";
    case MemoryFormat::ChannelsLast:
      return "channels_last";
    default:
      return "channels_last_3d";
  }
}

bool is_contiguous_as(const Tensor& t, MemoryFormat format) {
  if (format == MemoryFormat::Preserve || format == MemoryFormat::Contiguous) {
    return t.is_contiguous();
  }
  const int64_t rank = channels_last_rank(format);
  if (t.dim() != rank) return false;
  // Innermost first: C, then the spatial dims from the last, then N.
  std::vector<int64_t> order{1};
  for (int64_t d = rank - 1; d >= 2; --d) order.push_back(d);
  order.push_back(0);
  int64_t expected = 1;
  for (int64_t d : order) {
    if (t.size(d) == 1) continue;
    if (t.stride(d) != expected) return false;
    expected *= t.size(d);
  }
  return true;
}

Tensor empty_like_as(const Tensor& t, TensorOptions options, MemoryFormat format) {
  if (format == MemoryFormat::Preserve || format == MemoryFormat::Contiguous) {
    return empty_like(t, options, format == MemoryFormat::Preserve);
  }
  check_memory_format_rank(t, format, "empty_like");
  const Tensor last = permute(t, channels_last_order(t.dim()));  // only its shape is used
  return permute(empty(last.sizes(), options), channels_first_order(t.dim()));
}

}  // namespace native
}  // namespace ember
