#include "bindings/factory_args.h"

#include <cstring>
#include <exception>

#include "autograd/variable.h"

#include "api/conversion.h"
#include "core/shape.h"
#include "dispatch/copy.h"

namespace ember {

TensorOptions parse_options(py::handle dtype, py::handle device, const char* op) {
  TensorOptions o;
  if (!dtype.is_none()) {
    auto t = try_parse_dtype(dtype);
    if (!t) {
      throw py::type_error(str_cat("[", op, "] dtype must be an ember.dtype, but got ",
                                   Py_TYPE(dtype.ptr())->tp_name));
    }
    EMBER_CHECK_T(TypeError, !is_quantized(*t), "[", op, "] cannot make a ", dtype_name(*t),
                  " tensor without quantization parameters: use quantize_per_tensor, "
                  "_make_per_tensor_quantized_tensor or _empty_affine_quantized");
    o.dtype = *t;
  }
  o.device = parse_device(device, op);
  if (o.device.is_cpu()) o.device.index = -1;  // tensors live on "cpu", whatever index was named
  check_device_available(o.device, op);
  return o;
}

// The request is pending from here: the first tensor converted to Python afterwards is the
// factory's result, whether the binding converts it itself (a py::object result) or pybind11
// does on return. An exception cancels it.
RequiresGradRequest::RequiresGradRequest(py::handle requires_grad, const char* op)
    : op_(op),
      on_(!requires_grad.is_none() && py_truthy(requires_grad)),
      uncaught_(std::uncaught_exceptions()) {
  if (on_) pending_requires_grad() = op_;
}

RequiresGradRequest::~RequiresGradRequest() {
  if (on_ && std::uncaught_exceptions() != uncaught_) pending_requires_grad() = nullptr;
}

const char*& pending_requires_grad() {
  thread_local const char* op = nullptr;
  return op;
}

void apply_pending_requires_grad(const Tensor& t) {
  const char* op = pending_requires_grad();
  pending_requires_grad() = nullptr;
  autograd::set_requires_grad(t, true, op);
}

native::MemoryFormat parse_memory_format(py::handle memory_format, const char* op,
                                         native::MemoryFormat if_none) {
  if (memory_format.is_none()) return if_none;
  static const py::handle memory_format_type =
      py::object(py::module_::import("ember._C").attr("memory_format")).release();
  if (!py::isinstance(memory_format, memory_format_type)) {
    throw py::type_error(str_cat("[", op,
                                 "] argument 'memory_format' must be ember.memory_format, not ",
                                 Py_TYPE(memory_format.ptr())->tp_name));
  }
  const std::string name = py::str(memory_format).cast<std::string>();
  if (name == "ember.preserve_format") return native::MemoryFormat::Preserve;
  if (name == "ember.contiguous_format") return native::MemoryFormat::Contiguous;
  if (name == "ember.channels_last") return native::MemoryFormat::ChannelsLast;
  return native::MemoryFormat::ChannelsLast3d;
}

Generator* parse_generator(py::handle generator, const char* op) {
  if (generator.is_none()) return nullptr;
  if (!py::isinstance<Generator>(generator)) {
    throw py::type_error(str_cat("[", op, "] generator must be an ember.Generator, but got ",
                                 Py_TYPE(generator.ptr())->tp_name));
  }
  return generator.cast<Generator*>();
}

FactoryKwargs parse_factory_kwargs(const py::kwargs& kw, const char* op,
                                   std::initializer_list<const char*> extra) {
  FactoryKwargs f;
  if (!kw) return f;
  for (auto item : kw) {
    const std::string key = item.first.cast<std::string>();
    py::object value = py::reinterpret_borrow<py::object>(item.second);
    if (key == "dtype")
      f.dtype = value;
    else if (key == "device")
      f.device = value;
    else if (key == "out")
      f.out = value;
    else if (key == "requires_grad")
      f.requires_grad = value;
    else if (key == "memory_format")
      f.memory_format = value;
    else if (key == "generator")
      f.generator = value;
    else if (key == "size")
      f.size = value;
    else if (key == "layout")
      check_layout(value, op);
    else if (key == "pin_memory")
      continue;  // pinning is a CUDA host-allocation hint; the CPU memory is used as it is
    else {
      bool known = false;
      for (const char* e : extra) known = known || key == e;
      if (!known) {
        throw py::type_error(str_cat(op, "() got an unexpected keyword argument '", key, "'"));
      }
      f.rest[item.first] = value;
    }
  }
  return f;
}

void check_layout(py::handle layout, const char* op) {
  if (layout.is_none()) return;
  // ember.strided, made once by ember/_layout.py and kept for the interpreter's life.
  static const py::handle strided =
      py::object(py::module_::import("ember._layout").attr("strided")).release();
  if (layout.is(strided)) return;
  throw py::type_error(str_cat(
      op, "(): argument 'layout' must be ember.strided (Ember's tensors are ",
      "dense and strided; it has no sparse layouts), not ", py::repr(layout).cast<std::string>()));
}

TensorOptions factory_options(py::handle dtype, py::handle device, py::handle out, const char* op) {
  TensorOptions o = parse_options(dtype, device, op);
  if (!out.is_none()) {
    if (!is_tensor(out)) {
      throw py::type_error(
          str_cat("[", op, "] out must be an ember.Tensor, but got ", Py_TYPE(out.ptr())->tp_name));
    }
    const Tensor t = out.cast<Tensor>();
    EMBER_CHECK(o.dtype == ScalarType::Undefined || o.dtype == t.dtype(), "[", op, "] dtype ",
                dtype_name(o.dtype), " does not match dtype of out parameter (",
                dtype_name(t.dtype()), ")");
    o.dtype = t.dtype();
  }
  return o;
}

py::object finish_factory(const Tensor& result, py::handle out, const char* op) {
  if (out.is_none()) return py::cast(result);
  Tensor o = out.cast<Tensor>();
  resize_output(o, result.sizes(), op);
  copy_into(o, result, op);
  return py::reinterpret_borrow<py::object>(out);
}

}  // namespace ember

namespace ember {

Scalar parse_number(py::handle h, const char* op, const char* name) {
  if (auto s = try_parse_scalar(h)) return *s;
  if (is_tensor(h)) {
    const Tensor t = h.cast<Tensor>();
    EMBER_CHECK_T(TypeError, t.numel() == 1, "[", op, "] argument '", name,
                  "' must be a number or a one-element tensor, got a tensor of shape ",
                  shape_str(t.sizes()));
    return item(t, op);
  }
  throw py::type_error(str_cat("[", op, "] argument '", name, "' must be a number, not ",
                               Py_TYPE(h.ptr())->tp_name));
}

}  // namespace ember
