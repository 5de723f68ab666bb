// ember.dtype objects, ember.device, promotion helpers and global settings.
#include "api/creation.h"
#include "bindings/pybind_ember.h"
#include "core/allocator.h"
#include "core/cpu_capability.h"
#include "core/float_mode.h"
#include "core/parallel.h"
#include "dispatch/tensor_iterator.h"

namespace ember {

void init_dtypes(py::module_& m) {
  py::class_<DTypeObject>(m, "dtype")
      .def_property_readonly("is_floating_point",
                             [](const DTypeObject& d) { return is_floating(d.type); })
      .def_property_readonly("is_complex", [](const DTypeObject& d) { return is_complex(d.type); })
      .def_property_readonly("is_signed", [](const DTypeObject& d) { return is_signed(d.type); })
      .def_property_readonly("itemsize", [](const DTypeObject& d) { return element_size(d.type); })
      .def("to_complex",
           [](const DTypeObject& d) {
             EMBER_CHECK(is_floating(d.type) || is_complex(d.type),
                         "[to_complex] Unknown complex "
                         "dtype for ",
                         dtype_name(d.type));
             return to_complex(d.type);
           })
      .def("to_real", [](const DTypeObject& d) { return to_real(d.type); })
      .def("__repr__",
           [](const DTypeObject& d) { return std::string("ember.") + dtype_name(d.type); })
      .def("__reduce__", [](const DTypeObject& d) { return std::string(dtype_name(d.type)); })
      .def_property_readonly("_name", [](const DTypeObject& d) { return dtype_name(d.type); });
  for (int i = 0; i < kNumScalarTypes; ++i) {
    auto t = static_cast<ScalarType>(i);
    m.attr(dtype_name(t)) = dtype_object(t);
  }

  py::class_<Device>(m, "device")
      .def(py::init([](py::object spec, py::object index) {
             if (py::isinstance<Device>(spec)) return spec.cast<Device>();
             if (PyLong_Check(spec.ptr())) return Device(DeviceType::CUDA, spec.cast<int16_t>());
             Device d = Device::parse(spec.cast<std::string>());
             if (!index.is_none()) {
               EMBER_CHECK(d.index < 0,
                           "[device] type (string) must not include an index "
                           "because index was passed explicitly: ",
                           spec.cast<std::string>());
               d.index = index.cast<int16_t>();
             }
             return d;
           }),
           py::arg("type"), py::arg("index") = py::none())
      .def_property_readonly("type", [](const Device& d) { return device_type_name(d.type); })
      .def_property_readonly("index",
                             [](const Device& d) -> py::object {
                               if (d.index < 0) return py::none();
                               return py::int_(d.index);
                             })
      .def("__str__", &Device::str)
      .def("__repr__",
           [](const Device& d) {
             std::string s = std::string("device(type='") + device_type_name(d.type) + "'";
             if (d.index >= 0) s += ", index=" + std::to_string(d.index);
             return s + ")";
           })
      .def("__eq__",
           [](const Device& a, py::object b) {
             if (py::isinstance<Device>(b)) return a == b.cast<Device>();
             if (PyUnicode_Check(b.ptr())) return a == Device::parse(b.cast<std::string>());
             return false;
           })
      .def("__hash__", [](const Device& d) { return static_cast<int>(d.type) * 1000 + d.index; })
      .def("__reduce__", [](const Device& d) {
        return py::make_tuple(py::module_::import("ember").attr("device"), py::make_tuple(d.str()));
      });
  py::implicitly_convertible<py::str, Device>();

  // ember.memory_format objects: preserve_format keeps a dense input's strides (the default of
  // *_like, to() and clone()), contiguous_format asks for row-major, channels_last (4-D) and
  // channels_last_3d (5-D) for the channels innermost (ops/memory_format.h).
  struct MemoryFormat {
    const char* name;
  };
  static MemoryFormat formats[] = {
      {"preserve_format"}, {"contiguous_format"}, {"channels_last"}, {"channels_last_3d"}};
  py::class_<MemoryFormat>(m, "memory_format")
      .def("__repr__", [](const MemoryFormat& f) { return std::string("ember.") + f.name; })
      .def("__reduce__", [](const MemoryFormat& f) { return std::string(f.name); });
  for (MemoryFormat& f : formats) {
    m.attr(f.name) = py::cast(&f, py::return_value_policy::reference);
  }

  m.def("promote_types", &promote_types, py::arg("type1"), py::arg("type2"));
  m.def("can_cast", &can_cast, py::arg("from_"), py::arg("to"));
  m.def("get_default_dtype", &default_dtype);
  m.def("set_default_dtype", &set_default_dtype, py::arg("d"));
  m.def(
      "result_type",
      [](py::object a, py::object b) {
        return result_type({to_operand(a, "result_type"), to_operand(b, "result_type")});
      },
      py::arg("tensor1"), py::arg("tensor2"));
  m.def("get_num_threads", &get_num_threads);
  m.def("set_num_threads", &set_num_threads, py::arg("int"));
  m.def("set_flush_denormal", &set_flush_denormal, py::arg("mode"));
  // ember.backends.cpu reads these (core/cpu_capability.h).
  m.def("_get_cpu_capability", [] { return std::string(cpu_capability_name(cpu_capability())); });
  m.def("_max_cpu_capability",
        [] { return std::string(cpu_capability_name(max_cpu_capability())); });
  m.def("_cpu_capability_warning", [] { return cpu_capability_warning(); });
  m.def("_allocator_stats", [] {
    AllocatorStats s = cpu_allocator_stats();
    py::dict d;
    d["current_bytes"] = s.current_bytes;
    d["peak_bytes"] = s.peak_bytes;
    d["num_allocs"] = s.num_allocs;
    return d;
  });
  // Peak measurements over one region (checkpointing's memory tests).
  m.def("_reset_allocator_peak", [] { reset_cpu_allocator_peak(); });
}

}  // namespace ember
