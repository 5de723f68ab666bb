// Forward kernels of the pointwise activations (ops/nn/activation.h). The transcendental ones
// (elu, gelu, silu, mish, softplus, logsigmoid) run on explicit vectors (vec/vec_loops.h) with
// the formulas of activation_math.h; the piecewise-linear ones are loops the compiler vectorises.
// NaN inputs give NaN (comparisons are written so that NaN falls through to the branch returning
// x).
//
// Every candidate value is computed before the final select (`c ? a : b` on two variables): GCC
// will not evaluate a floating-point operation or conversion that sits inside only one branch for
// all elements (it could raise an exception the scalar code would not), so `x > 0 ? x : x * s`
// stays a branch per element and a mispredicted one for half the inputs; the hoisted form
// becomes a vector blend (leaky_relu: 50x faster).
#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/elementwise_helpers.h"
#include "kernels/cpu/nn/activation_math.h"
#include "kernels/cpu/vec/vec_loops.h"
#include "kernels/nn/activation_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

using namespace act_math;

// A Python-number parameter in the compute type: integers convert through int64 (so that -1
// becomes 255 for uint8, as PyTorch's conversion, instead of undefined behaviour).
template <typename V>
inline V param(double v) {
  if constexpr (std::is_integral_v<V>) {
    return static_cast<V>(static_cast<int64_t>(v));
  } else {
    return V(v);
  }
}

void activation_kernel(TensorIterator& iter, Activation act, const ActivationArgs& p) {
  const char* name = activation_name(act);
  switch (act) {
    case Activation::Relu:
      return unary_kernel<kRealTypes>(iter, name, [](auto x) {
        using V = decltype(x);
        return x < V(0) ? V(0) : x;
      });
    case Activation::Threshold:
      return unary_kernel<kRealTypes>(iter, name, [p](auto x) {
        using V = decltype(x);
        const V th = param<V>(p.a), value = param<V>(p.b);
        return x <= th ? value : x;
      });
    case Activation::Hardtanh:
      return unary_kernel<kRealTypes>(iter, name, [p](auto x) {
        using V = decltype(x);
        const V lo = param<V>(p.a), hi = param<V>(p.b);
        const V y = x < lo ? lo : x;
        return y > hi ? hi : y;
      });
    case Activation::LeakyRelu:
      return unary_kernel<kFloatingTypes>(iter, name, [slope = p.a](auto x) {
        using V = decltype(x);
        const V neg = x * V(slope);  // computed unconditionally: see the note at the top
        return x > V(0) ? x : neg;
      });
    case Activation::Elu:
    case Activation::Celu:
      return unary_vec_kernel<kFloatingTypes>(iter, name, [p](auto x) {
        using V = decltype(x);
        const V pos = x * V(p.b);
        const V neg = V(p.a) * V(p.b) * vexpm1(x * V(p.c));
        return where(x > V(0), pos, neg);
      });
    case Activation::Gelu:
      return unary_vec_kernel<kFloatingTypes>(iter, name, [](auto x) { return gelu(x); });
    case Activation::GeluTanh:
      return unary_vec_kernel<kFloatingTypes>(iter, name, [](auto x) { return gelu_tanh(x); });
    case Activation::Silu:
      return unary_vec_kernel<kFloatingTypes>(iter, name, [](auto x) { return silu(x); });
    case Activation::Mish:
      return unary_vec_kernel<kFloatingTypes>(iter, name, [](auto x) { return mish(x); });
    case Activation::Hardsigmoid:
      // PyTorch's order of operations: clamp(x + 3, 0, 6) / 6 (exact 0 and 1 at x = -3, 3).
      return unary_kernel<kFloatingTypes>(iter, name, [](auto x) {
        using V = decltype(x);
        const V y = x + V(3);
        const V lo = y < V(0) ? V(0) : y;
        return (lo > V(6) ? V(6) : lo) / V(6);
      });
    case Activation::Hardswish:
      return unary_kernel<kFloatingTypes>(iter, name, [](auto x) {
        using V = decltype(x);
        const V y = x + V(3);
        const V lo = y < V(0) ? V(0) : y;
        return x * (lo > V(6) ? V(6) : lo) / V(6);
      });
    case Activation::Softplus:
      return unary_vec_kernel<kFloatingTypes>(iter, name, [beta = p.a, th = p.b](auto x) {
        using V = decltype(x);
        const V bx = x * V(beta);
        const V soft = softplus1(bx) / V(beta);
        return where(bx > V(th), x, soft);
      });
    case Activation::LogSigmoid:
      return unary_vec_kernel<kFloatingTypes>(iter, name, [](auto x) { return log_sigmoid(x); });
    case Activation::Softshrink:
      return unary_kernel<kFloatingTypes>(iter, name, [l = p.a](auto x) {
        using V = decltype(x);
        const V lambd = V(l);
        const V down = x - lambd, up = x + lambd, zero = x * V(0);
        return x > lambd ? down : (x < -lambd ? up : zero);
      });
    case Activation::Hardshrink:
      return unary_kernel<kFloatingTypes>(iter, name, [l = p.a](auto x) {
        using V = decltype(x);
        const V lambd = V(l);
        return (x >= -lambd && x <= lambd) ? V(0) : x;
      });
  }
}

}  // namespace

EMBER_REGISTER_KERNEL(activation_stub, CPU, activation_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
