// Backward kernels of the pointwise activations: out = grad * f'(x) in one pass (PyTorch's
// *_backward kernels). relu receives its result in place of x (result > 0 exactly where x > 0).
// The masks follow PyTorch's choices at the kinks: relu / threshold / hardtanh / hardshrink pass
// no gradient at the boundary, leaky_relu passes the slope at 0. The transcendental ones (elu,
// gelu, silu, mish, softplus, logsigmoid) run on explicit vectors (vec/vec_loops.h); in the
// others every candidate value is computed before the select so that the loops vectorise.
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

void activation_backward_kernel(TensorIterator& iter, Activation act, const ActivationArgs& p) {
  const char* name = activation_name(act);
  switch (act) {
    case Activation::Relu:
      return binary_kernel<kFloatingTypes>(iter, name, [](auto g, auto y) {
        using V = decltype(g);
        return y <= V(0) ? V(0) : g;
      });
    case Activation::Threshold:
      return binary_kernel<kFloatingTypes>(iter, name, [th = p.a](auto g, auto x) {
        using V = decltype(g);
        const V t = V(th);
        return x <= t ? V(0) : g;
      });
    case Activation::Hardtanh:
      return binary_kernel<kFloatingTypes>(iter, name, [lo = p.a, hi = p.b](auto g, auto x) {
        using V = decltype(g);
        const V l = V(lo), h = V(hi);
        return (x <= l || x >= h) ? V(0) : g;
      });
    case Activation::LeakyRelu:
      return binary_kernel<kFloatingTypes>(iter, name, [slope = p.a](auto g, auto x) {
        using V = decltype(g);
        const V neg = g * V(slope);
        return x > V(0) ? g : neg;
      });
    case Activation::Elu:
    case Activation::Celu:
      return binary_vec_kernel<kFloatingTypes>(iter, name, [p](auto g, auto x) {
        using V = decltype(g);
        const V pos = g * V(p.b);
        const V neg = g * V(p.c) * V(p.a) * V(p.b) * vexp(x * V(p.c));
        return where(x > V(0), pos, neg);
      });
    case Activation::Gelu:
      return binary_vec_kernel<kFloatingTypes>(iter, name,
                                               [](auto g, auto x) { return g * gelu_grad(x); });
    case Activation::GeluTanh:
      return binary_vec_kernel<kFloatingTypes>(
          iter, name, [](auto g, auto x) { return g * gelu_tanh_grad(x); });
    case Activation::Silu:
      return binary_vec_kernel<kFloatingTypes>(iter, name,
                                               [](auto g, auto x) { return g * silu_grad(x); });
    case Activation::Mish:
      return binary_vec_kernel<kFloatingTypes>(iter, name,
                                               [](auto g, auto x) { return g * mish_grad(x); });
    case Activation::Hardsigmoid:
      return binary_kernel<kFloatingTypes>(iter, name, [](auto g, auto x) {
        using V = decltype(g);
        const V mid = g * V(1.0 / 6.0);
        return (x > V(-3) && x < V(3)) ? mid : V(0);
      });
    case Activation::Hardswish:
      return binary_kernel<kFloatingTypes>(iter, name, [](auto g, auto x) {
        using V = decltype(g);
        const V mid = g * (x / V(3) + V(0.5));
        // PyTorch: no gradient at x = -3, a gradient of 1 at x = 3.
        return x <= V(-3) ? V(0) : (x < V(3) ? mid : g);
      });
    case Activation::Softplus:
      return binary_vec_kernel<kFloatingTypes>(iter, name, [beta = p.a, th = p.b](auto g, auto x) {
        using V = decltype(g);
        const V bx = x * V(beta);
        const V soft = g * vsigmoid(bx);
        return where(bx > V(th), g, soft);
      });
    case Activation::LogSigmoid:
      return binary_vec_kernel<kFloatingTypes>(
          iter, name, [](auto g, auto x) { return g * log_sigmoid_grad(x); });
    case Activation::Softshrink:
    case Activation::Hardshrink:
      return binary_kernel<kFloatingTypes>(iter, name, [l = p.a](auto g, auto x) {
        using V = decltype(g);
        const V lambd = V(l);
        return (x >= -lambd && x <= lambd) ? V(0) : g;
      });
  }
}

}  // namespace

EMBER_REGISTER_KERNEL(activation_backward_stub, CPU, activation_backward_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
