// ember.Tensor: the bound TensorImpl class, its properties and the protocol methods that carry
// no op logic.
#include "api/creation.h"
#include "api/views.h"
#include "autograd/variable.h"
#include "bindings/factory_args.h"
#include "bindings/fastcall.h"
#include "bindings/pybind_ember.h"
#include "bindings/size_object.h"
#include "core/shape.h"
#include "ops/memory_format.h"

namespace ember {

namespace {
py::class_<TensorImpl, TensorImplPtr>* g_tensor_class = nullptr;

py::tuple shape_tuple(IntArrayRef sizes) {
  py::tuple t(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    PyTuple_SET_ITEM(t.ptr(), i, PyLong_FromLongLong(sizes[i]));
  }
  return t;
}

// Tensor.shape, dim() and numel() are hand-written (a getter and METH_NOARGS methods): they are
// called in tight loops, and pybind11's generic dispatcher costs several hundred ns per call
// (a.dim() took 320 ns through it against PyTorch's 130 ns; see fastcall.h and
// docs/design/per-op-overhead.md). They take no arguments, so they need no pybind11 fallback.
PyObject* fast_shape(PyObject* self, void*) {
  return fastcall::guarded([&]() -> PyObject* {
    Tensor t;
    if (!fastcall::unwrap(self, t)) throw py::type_error("shape requires an ember.Tensor");
    return size_object(t.sizes()).release().ptr();
  });
}

PyObject* fast_dim(PyObject* self, PyObject*) {
  return fastcall::guarded([&]() -> PyObject* {
    Tensor t;
    if (!fastcall::unwrap(self, t)) throw py::type_error("dim() requires an ember.Tensor");
    return PyLong_FromLongLong(t.dim());
  });
}

PyObject* fast_numel(PyObject* self, PyObject*) {
  return fastcall::guarded([&]() -> PyObject* {
    Tensor t;
    if (!fastcall::unwrap(self, t)) throw py::type_error("numel() requires an ember.Tensor");
    return PyLong_FromLongLong(t.numel());
  });
}

PyGetSetDef g_shape_def = {"shape", fast_shape, nullptr, "The tensor's shape (ember.Size).",
                           nullptr};
PyMethodDef g_dim_def = {"dim", fast_dim, METH_NOARGS, "Number of dimensions."};
PyMethodDef g_numel_def = {"numel", fast_numel, METH_NOARGS, "Number of elements."};

}  // namespace

py::class_<TensorImpl, TensorImplPtr>& tensor_class() {
  return *g_tensor_class;
}

void init_tensor_class(py::module_& m) {
  // Leaked on purpose: a static py::class_ would release its reference from an exit handler,
  // after the interpreter is gone, which crashes Python 3.12 (its allocator state is per
  // interpreter).
  auto& cls = *new py::class_<TensorImpl, TensorImplPtr>(m, "Tensor", py::dynamic_attr());
  g_tensor_class = &cls;
  g_tensor_type = reinterpret_cast<PyTypeObject*>(cls.ptr());

  // ember.Tensor(...) as torch.Tensor(...): sizes give an uninitialised tensor of the default
  // dtype, data gives a copy converted to the default dtype, a Tensor gives an alias, nothing
  // gives an empty 1-D tensor.
  cls.def(py::init([](py::args args) -> TensorImplPtr {
    const ScalarType dt = default_dtype();
    if (args.size() == 0) return empty({0}, dt).impl_ptr();
    if (args.size() == 1 && is_tensor(args[0])) return alias(args[0].cast<Tensor>()).impl_ptr();
    bool all_ints = true;
    for (py::handle a : args)
      all_ints = all_ints && PyLong_Check(a.ptr()) && !PyBool_Check(a.ptr());
    if (all_ints) return empty(parse_shape(args, "Tensor"), dt).impl_ptr();
    if (args.size() == 1) {
      py::object made = py::module_::import("ember").attr("tensor")(args[0], py::arg("dtype") = dt);
      return made.cast<Tensor>().impl_ptr();
    }
    throw py::type_error("[Tensor] expected sizes (ints), a sequence of data, or a Tensor");
  }));
  fastcall::add_getter(cls, g_shape_def);  // Tensor.shape (fast_shape)
  cls.def(
         "size",
         [](const Tensor& t, py::object dim) -> py::object {
           if (dim.is_none()) return size_object(t.sizes());
           return py::int_(t.size(wrap_dim(parse_int(dim, "size", "dim"), t.dim(), "size")));
         },
         py::arg("dim") = py::none())
      .def(
          "stride",
          [](const Tensor& t, py::object dim) -> py::object {
            if (dim.is_none()) return shape_tuple(t.strides());
            return py::int_(t.stride(wrap_dim(parse_int(dim, "stride", "dim"), t.dim(), "stride")));
          },
          py::arg("dim") = py::none())
      .def_property_readonly("dtype", [](const Tensor& t) { return t.dtype(); })
      .def_property_readonly("device", [](const Tensor& t) { return t.device(); })
      .def_property_readonly("ndim", [](const Tensor& t) { return t.dim(); });
  fastcall::add_method(cls, g_dim_def);  // Tensor.dim() (fast_dim)
  cls.def("ndimension", [](const Tensor& t) { return t.dim(); });
  fastcall::add_method(cls, g_numel_def);  // Tensor.numel() (fast_numel)
  cls.def("nelement", [](const Tensor& t) { return t.numel(); })
      .def("element_size", [](const Tensor& t) { return t.itemsize(); })
      .def_property_readonly("itemsize", [](const Tensor& t) { return t.itemsize(); })
      .def_property_readonly("nbytes",
                             [](const Tensor& t) { return t.numel() * int64_t(t.itemsize()); })
      .def("storage_offset", [](const Tensor& t) { return t.storage_offset(); })
      // An address on the tensor's device, as in PyTorch (never dereferenced here).
      .def("data_ptr",
           [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.impl()->device_data()); })
      .def("untyped_storage_nbytes", [](const Tensor& t) { return t.storage()->nbytes(); })
      .def("_storage_ptr",
           [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.storage()->data()); })
      .def(
          "is_contiguous",
          [](const Tensor& t, py::object memory_format) {
            return native::is_contiguous_as(t,
                                            parse_memory_format(memory_format, "is_contiguous",
                                                                native::MemoryFormat::Contiguous));
          },
          py::arg("memory_format") = py::none())
      .def("is_floating_point", [](const Tensor& t) { return t.is_floating_point(); })
      .def("is_complex", [](const Tensor& t) { return t.is_complex(); })
      .def_property_readonly("is_cpu", [](const Tensor& t) { return t.device().is_cpu(); })
      .def_property_readonly("is_cuda", [](const Tensor& t) { return !t.device().is_cpu(); })
      // Every Ember tensor is dense and strided (ember/_layout.py).
      .def_property_readonly(
          "layout",
          [](const Tensor&) { return py::module_::import("ember._layout").attr("strided"); })
      .def_property_readonly("is_sparse", [](const Tensor&) { return false; })
      .def_property_readonly("is_sparse_csr", [](const Tensor&) { return false; })
      .def_property_readonly("_version", [](const Tensor& t) { return t.impl()->version(); })
      .def("_is_view_of",
           [](const Tensor& a, const Tensor& b) { return a.storage() == b.storage(); })
      .def("__len__",
           [](const Tensor& t) {
             EMBER_CHECK_T(TypeError, t.dim() > 0, "len() of a 0-d tensor");
             return t.size(0);
           })
      .def("__hash__",
           [](py::object self) {
             return py::hash(py::int_(reinterpret_cast<uintptr_t>(self.ptr())));
           })
      .def_property_readonly_static("__array_priority__", [](py::object) { return 1000; });

  // Tensor.data: an alias outside autograd with its own version counter (as PyTorch's
  // variable_data()); assigning replaces storage, dtype and geometry in place (set_data), so
  // an nn.Parameter keeps its identity through Module.to(dtype).
  cls.def_property(
      "data",
      [](const Tensor& t) {
        auto impl = make_intrusive<TensorImpl>(t.storage(), t.dtype(), t.sizes(), t.strides(),
                                               t.storage_offset());
        impl->set_quantizer(t.impl()->quantizer());
        return Tensor(std::move(impl));
      },
      [](const Tensor& self, py::object src) {
        if (!is_tensor(src)) {
          throw py::type_error(
              str_cat("Variable data has to be a tensor, but got ", Py_TYPE(src.ptr())->tp_name));
        }
        const Tensor s = src.cast<Tensor>();
        if (s.impl() == self.impl()) return;
        // A new device or dtype is allowed, as in PyTorch: Module.to / .cuda() move parameters
        // this way, keeping their identity.
        if (s.dtype() != self.dtype() || s.device() != self.device()) {
          // The leaf's gradient accumulator was made for the old dtype and device: a new one is
          // created on next use.
          if (auto* m = autograd::meta_of(self)) m->grad_accumulator.reset();
        }
        self.impl()->set_data_from(*s.impl());
      });

  // Tensor._make_subclass(cls, data, require_grad=False): an instance of the Python subclass
  // `cls` (nn.Parameter) around a detached alias of `data` (shared storage and version
  // counter, no history), as torch.Tensor._make_subclass. The instance is allocated by the
  // pybind11 base type's tp_new, so cls.__new__ is not re-entered, and its holder is set here;
  // the subclass must define an __init__ that does not call ember.Tensor.__init__.
  cls.def_static(
      "_make_subclass",
      [](py::object subclass, const Tensor& data, bool require_grad) {
        if (!PyType_Check(subclass.ptr()) ||
            !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(subclass.ptr()), g_tensor_type)) {
          throw py::type_error("[_make_subclass] cls must be a subclass of ember.Tensor");
        }
        TensorImplPtr impl = autograd::detach(data).impl_ptr();
        auto* type = reinterpret_cast<PyTypeObject*>(subclass.ptr());
        py::tuple no_args(0);
        PyObject* raw = g_tensor_type->tp_new(type, no_args.ptr(), nullptr);
        if (!raw) throw py::error_already_set();
        py::object obj = py::reinterpret_steal<py::object>(raw);
        auto* inst = reinterpret_cast<py::detail::instance*>(raw);
        const py::detail::type_info* tinfo = py::detail::get_type_info(typeid(TensorImpl));
        py::detail::value_and_holder vh = inst->get_value_and_holder(tinfo);
        vh.value_ptr() = impl.get();
        tinfo->init_instance(inst, &impl);  // copies the holder, registers the instance
        if (require_grad) autograd::set_requires_grad(Tensor(impl), true, "_make_subclass");
        return obj;
      },
      py::arg("cls"), py::arg("data"), py::arg("require_grad") = false);
}

}  // namespace ember
