// Argument parsing shared by the factory bindings (creation, random, tensor_new): the
// dtype / device / out / requires_grad / memory_format / generator keywords, and the out=
// convention for factories. Conversion only; the ops live in csrc/ops.
#pragma once
#include <initializer_list>

#include "api/creation.h"
#include "bindings/pybind_ember.h"
#include "core/generator.h"
#include "ops/memory_format.h"

namespace ember {

// dtype=None / device=None resolve to Undefined / CPU. A device that cannot hold tensors in this
// build raises RuntimeError naming `op`.
TensorOptions parse_options(py::handle dtype, py::handle device, const char* op);

// requires_grad=True: the tensor the factory returns becomes a leaf that requires grad. Declare
// one at the start of a factory binding; it takes effect only if the binding returns normally.
class RequiresGradRequest {
 public:
  RequiresGradRequest(py::handle requires_grad, const char* op);
  ~RequiresGradRequest();
  RequiresGradRequest(const RequiresGradRequest&) = delete;
  RequiresGradRequest& operator=(const RequiresGradRequest&) = delete;

 private:
  const char* op_;
  bool on_;
  int uncaught_;
};

// memory_format=None / ember.preserve_format -> true; ember.contiguous_format -> false.
// An ember.memory_format argument; None gives `if_none`.
native::MemoryFormat parse_memory_format(
    py::handle memory_format, const char* op,
    native::MemoryFormat if_none = native::MemoryFormat::Preserve);

// generator=None -> nullptr (the default generator); else an ember.Generator.
Generator* parse_generator(py::handle generator, const char* op);

// The keywords every factory accepts, parsed from **kwargs. Unknown keywords raise TypeError
// like Python ("zeros() got an unexpected keyword argument 'foo'"); `extra` names op-specific
// keywords left in `rest` for the caller.
struct FactoryKwargs {
  py::object dtype = py::none(), device = py::none(), out = py::none();
  py::object requires_grad = py::none(), memory_format = py::none(), generator = py::none();
  py::object size;  // set when size= was given
  py::dict rest;
};
FactoryKwargs parse_factory_kwargs(const py::kwargs& kw, const char* op,
                                   std::initializer_list<const char*> extra = {});

// A factory's `layout` argument: None or ember.strided, else TypeError naming the op.
void check_layout(py::handle layout, const char* op);

// Options for a factory that may write to out=: with out given, dtype=None means out's dtype and
// a different explicit dtype raises RuntimeError (as PyTorch).
TensorOptions factory_options(py::handle dtype, py::handle device, py::handle out, const char* op);

// Returns result, or resizes out= to result's shape, copies result into it and returns out.
py::object finish_factory(const Tensor& result, py::handle out, const char* op);

}  // namespace ember

namespace ember {
// A number argument that may also be a one-element tensor (arange(torch.tensor(3))).
Scalar parse_number(py::handle h, const char* op, const char* name);
}  // namespace ember
