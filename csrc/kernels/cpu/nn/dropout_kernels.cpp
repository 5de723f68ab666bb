// Dropout kernels: the fused mask-and-scale forward (Philox words compared with (1 - p) 2^32,
// the same draw as bernoulli_(1 - p)) and grad * mask * scale.
#include "dispatch/dtype_dispatch.h"
#include "dispatch/tensor_iterator.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/random_utils.h"
#include "kernels/nn/dropout_stubs.h"

namespace ember {
namespace native {
namespace {

void dropout_kernel(const Tensor& out, const Tensor& mask, const Tensor& x, double p, double scale,
                    PhiloxState st) {
  dispatch_dtype<kFloatingTypes>(x.dtype(), "dropout", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_type<T>;
    const T* src = x.data<T>();
    T* dst = out.data<T>();
    bool* keep = mask.data<bool>();
    const double keep_below = (1.0 - p) * 4294967296.0;  // keep when word < (1 - p) 2^32
    const A s = A(scale);
    for_each_block(x.numel(), kDropoutValuesPerBlock, st,
                   [&](int64_t i, int count, const PhiloxBlock& w) {
                     for (int k = 0; k < count; ++k) {
                       const bool kept = double(w[k]) < keep_below;
                       keep[i + k] = kept;
                       dst[i + k] = kept ? T(A(src[i + k]) * s) : T(A(0));
                     }
                   });
  });
}

void dropout_backward_kernel(TensorIterator& iter, double scale) {
  dispatch_dtype<kFloatingTypes>(iter.common_dtype(), "native_dropout_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_type<T>;
    const A s = A(scale);
    // Mixed operand dtypes (T, bool): a plain strided loop (cpu_kernel's scalar paths assume one
    // input dtype).
    iter.for_each([&](char** data, const int64_t* strides, int64_t n) {
      for (int64_t k = 0; k < n; ++k) {
        const T g = *reinterpret_cast<const T*>(data[1] + k * strides[1]);
        const bool m = *reinterpret_cast<const bool*>(data[2] + k * strides[2]);
        *reinterpret_cast<T*>(data[0] + k * strides[0]) = m ? T(A(g) * s) : T(A(0));
      }
    });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(dropout_stub, CPU, dropout_kernel);
EMBER_REGISTER_KERNEL(dropout_backward_stub, CPU, dropout_backward_kernel);

}  // namespace native
}  // namespace ember
