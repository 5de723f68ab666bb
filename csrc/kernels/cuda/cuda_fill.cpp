// fill_stub's CUDA kernel: the value is converted on the host (as the CPU kernel converts it),
// and fill_kernel.cu writes its bytes everywhere.
#include <cstring>

#include "dispatch/dtype_dispatch.h"
#include "kernels/creation_stubs.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/fill_launch.h"

namespace ember::native {
namespace {

void fill_cuda(TensorIterator& iter, const Scalar& value) {
  const Tensor& out = iter.output(0);
  alignas(16) unsigned char pattern[16] = {};
  dispatch_dtype<kAllTypes>(out.dtype(), "fill_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = value.to_checked<T>("fill_");
    std::memcpy(pattern, &v, sizeof(T));
  });
  EMBER_CHECK(out.dim() <= cuda::kMaxFillDims, "[fill_] a CUDA tensor of ", out.dim(),
              " dimensions is not supported (at most ", cuda::kMaxFillDims, ")");
  cuda::FillGeometry geometry{};
  geometry.ndim = static_cast<int>(out.dim());
  for (int64_t d = 0; d < out.dim(); ++d) {
    geometry.sizes[d] = out.size(d);
    geometry.strides[d] = out.stride(d);
  }
  cuda::DeviceGuard guard(out.device().index);
  // The legacy default stream orders the fill with Ember's copies and the collectives' waits.
  EMBER_CUDA_CHECK("fill_", cuda::launch_fill(out.impl()->device_data(), geometry, out.numel(),
                                              out.is_contiguous(), pattern,
                                              static_cast<int>(out.itemsize()), cudaStreamLegacy));
}

}  // namespace

EMBER_REGISTER_KERNEL(fill_stub, CUDA, fill_cuda);

}  // namespace ember::native
