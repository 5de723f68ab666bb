#include "api/memory_format.h"

#include "api/views.h"

namespace ember {

Tensor contiguous_as(const Tensor& t, native::MemoryFormat format) {
  using native::MemoryFormat;
  if (format == MemoryFormat::Preserve) return t;
  if (format == MemoryFormat::Contiguous) return contiguous(t);
  native::check_memory_format_rank(t, format, "contiguous");
  if (native::is_contiguous_as(t, format)) return t;
  const int64_t rank = t.dim();
  return permute(contiguous(permute(t, native::channels_last_order(rank))),
                 native::channels_first_order(rank));
}

}  // namespace ember
