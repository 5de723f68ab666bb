// Derivative of Tensor.to(): ToCopyBackward0, PyTorch's _to_copy_backward.
#include "autograd/derivatives/conversion.h"

#include "api/complex.h"
#include "api/conversion.h"
#include "api/views.h"
#include "autograd/record.h"
#include "ops/conversion.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

Tensor to_copy(const Tensor& t, ScalarType dtype, Device device, bool copy, bool preserve_strides) {
  const ScalarType in_dtype = t.dtype();
  const Device in_device = t.device();
  auto node = autograd::new_node(
      "ToCopyBackward0", {t}, [in_dtype, in_device](FunctionNode&, const variable_list& g) {
        if (!g[0].defined()) return variable_list{Tensor()};
        // The gradient goes back in the input's dtype and device. A real input converted to a
        // complex dtype gets the real part of its complex gradient; a complex input converted to
        // a real dtype gets the real gradient as a complex one (zero imaginary part).
        const Tensor grad = !is_complex(in_dtype) && g[0].is_complex() ? ember::real(g[0]) : g[0];
        // tensor_to, so that create_graph=True records the backward cast too.
        return variable_list{ember::tensor_to(grad, in_dtype, in_device)};
      });
  if (node->has_forward()) {
    // The tangent converted as the value: the machinery casts it to the result's dtype (the real
    // part for a complex to real conversion); a same-dtype copy copies it.
    node->set_jvp([dtype](FunctionNode&, const variable_list& tan) -> variable_list {
      if (!tan[0].defined()) return {Tensor()};
      return {tan[0].dtype() != dtype ? tan[0] : ember::clone(tan[0])};
    });
  }
  return autograd::record(node, {t}, Tensor(), "to",
                          [&] { return native::to(t, dtype, device, copy, preserve_strides); });
}

}  // namespace derivatives
}  // namespace ember
