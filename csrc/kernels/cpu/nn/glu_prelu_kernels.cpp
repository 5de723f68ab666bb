// glu and prelu kernels. The forward passes are plain binary kernels; the backward passes write
// two outputs in one loop (multi_output_kernel below).
#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/elementwise_helpers.h"
#include "kernels/cpu/vec_math.h"
#include "kernels/nn/activation_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

// Runs f(in[NIn], out[NOut]) over the iterator's elements, in the compute type A of T. Operands:
// NOut outputs then NIn inputs, all of dtype T.
template <typename T, int NOut, int NIn, typename F>
void multi_output_kernel(TensorIterator& iter, const F& f) {
  using A = acc_type<T>;
  iter.for_each([&](char** data, const int64_t* strides, int64_t n) {
    for (int64_t k = 0; k < n; ++k) {
      A in[NIn];
      A out[NOut];
      for (int i = 0; i < NIn; ++i) {
        in[i] = A(*reinterpret_cast<const T*>(data[NOut + i] + k * strides[NOut + i]));
      }
      f(in, out);
      for (int o = 0; o < NOut; ++o) {
        *reinterpret_cast<T*>(data[o] + k * strides[o]) = T(out[o]);
      }
    }
  });
}

void glu_kernel(TensorIterator& iter) {
  binary_kernel<kFloatingTypes>(iter, "glu", [](auto a, auto b) { return a * vmath::sigmoid(b); });
}

// out0 = grad * sigmoid(b), out1 = grad * a * sigmoid(b) * (1 - sigmoid(b)).
void glu_backward_kernel(TensorIterator& iter) {
  dispatch_dtype<kFloatingTypes>(iter.common_dtype(), "glu_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    multi_output_kernel<T, 2, 3>(iter, [](const auto* in, auto* out) {
      using V = std::remove_const_t<std::remove_reference_t<decltype(in[0])>>;
      const V g = in[0], a = in[1], s = vmath::sigmoid(in[2]);
      out[0] = g * s;
      out[1] = g * a * s * (V(1) - s);
    });
  });
}

void prelu_kernel(TensorIterator& iter) {
  binary_kernel<kFloatingTypes>(iter, "prelu", [](auto x, auto w) {
    using V = decltype(x);
    const V neg = w * x;  // hoisted out of the select so that the loop vectorises
    return x > V(0) ? x : neg;
  });
}

// out0 = d/dx (grad), out1 = the weight's gradient per element (summed by the op).
void prelu_backward_kernel(TensorIterator& iter) {
  dispatch_dtype<kFloatingTypes>(iter.common_dtype(), "prelu_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    multi_output_kernel<T, 2, 3>(iter, [](const auto* in, auto* out) {
      using V = std::remove_const_t<std::remove_reference_t<decltype(in[0])>>;
      const V g = in[0], x = in[1], w = in[2];
      const bool pos = x > V(0);
      out[0] = pos ? g : w * g;
      out[1] = pos ? V(0) : x * g;
    });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(glu_stub, CPU, glu_kernel);
EMBER_REGISTER_KERNEL(glu_backward_stub, CPU, glu_backward_kernel);
EMBER_REGISTER_KERNEL(prelu_stub, CPU, prelu_kernel);
EMBER_REGISTER_KERNEL(prelu_backward_stub, CPU, prelu_backward_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
