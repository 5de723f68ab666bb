// Kernel stub of the shared op helpers of ops/shape_util.h (which includes this header): the
// dtype-agnostic gather of slices under gather_slices, registered by
// kernels/cpu/join_kernels.cpp.
#pragma once
#include <cstdint>

#include "dispatch/stub.h"

namespace ember {
namespace native {

// Kernel: dst (outer, n, inner*itemsize bytes) <- src rows picked by index. Both contiguous.
using GatherSlicesFn = void (*)(char* dst, const char* src, int64_t outer, int64_t src_rows,
                                const int64_t* index, int64_t n, int64_t row_bytes);
EMBER_DECLARE_STUB(gather_slices_stub, GatherSlicesFn);

}  // namespace native
}  // namespace ember
