// pybind11 glue of ember._C_cuda and ember._C_nccl, the CUDA extension modules. They are separate
// from ember._C (which must import on machines without CUDA), so they cannot use _C's fast Tensor
// caster (bindings/pybind_ember.h, whose helpers live in _C). Tensors cross through pybind11's
// shared type registry instead: _C registers TensorImpl with its intrusive holder, Store and Work
// with shared_ptr holders, and its exception translators, and ember.cuda imports _C first.
#pragma once
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "core/tensor.h"

PYBIND11_DECLARE_HOLDER_TYPE(T, ember::intrusive_ptr<T>, true)

namespace pybind11::detail {

template <>
struct type_caster<ember::Tensor> {
 public:
  PYBIND11_TYPE_CASTER(ember::Tensor, const_name("Tensor"));

  bool load(handle src, bool convert) {
    type_caster_generic generic(typeid(ember::TensorImpl));
    if (!generic.load(src, convert) || generic.value == nullptr) return false;
    value = ember::Tensor(
        ember::intrusive_ptr<ember::TensorImpl>(static_cast<ember::TensorImpl*>(generic.value)));
    return true;
  }
  static handle cast(const ember::Tensor& t, return_value_policy, handle) {
    if (!t.defined()) return none().release();
    ember::intrusive_ptr<ember::TensorImpl> holder = t.impl_ptr();
    return type_caster_generic::cast(holder.get(), return_value_policy::take_ownership, {},
                                     get_type_info(typeid(ember::TensorImpl)), nullptr, nullptr,
                                     &holder);
  }
};

}  // namespace pybind11::detail

namespace ember {
namespace py = pybind11;
// Defines ProcessGroupNCCL in `m`, the ember._C_nccl module (bindings/cuda/nccl.cpp).
void init_nccl(py::module_& m);
}  // namespace ember
