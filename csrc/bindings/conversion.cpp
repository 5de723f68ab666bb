// Tensor <-> Python conversions and protocol methods: to() and the dtype shorthands, item /
// tolist / bool / int / float / complex / index, iteration and membership, __format__, detach,
// type(), untyped_storage and pickling (__reduce_ex__).
#include <cstring>
#include <optional>

#include "api/conversion.h"
#include "api/memory_format.h"
#include "api/views.h"
#include "bindings/factory_args.h"
#include "core/shape.h"
#include "dispatch/dtype_dispatch.h"
#include "ops/quantized/quantize.h"

namespace ember {

namespace {

// --- to() -------------------------------------------------------------------------------------

struct ToArgs {
  std::optional<ScalarType> dtype;
  std::optional<Device> device;
  bool copy = false;
  native::MemoryFormat format = native::MemoryFormat::Preserve;
};

// A conversion's result laid out in a channels-last format when one was asked for.
Tensor converted(const Tensor& t, native::MemoryFormat format) {
  return format == native::MemoryFormat::ChannelsLast ||
                 format == native::MemoryFormat::ChannelsLast3d
             ? contiguous_as(t, format)
             : t;
}

[[noreturn]] void throw_to_signature(const py::args& args) {
  throw py::type_error(str_cat(
      "[to] received an invalid combination of arguments - got ",
      py::repr(args).cast<std::string>(),
      ", but expected one of: (ember.device device=None, ember.dtype dtype=None, "
      "bool non_blocking=False, bool copy=False, *, memory_format=None), (ember.dtype dtype, "
      "bool non_blocking=False, bool copy=False, *, memory_format=None), (Tensor other, "
      "bool non_blocking=False, bool copy=False, *, memory_format=None)"));
}

bool is_device_like(py::handle h) {
  return py::isinstance<Device>(h) || PyUnicode_Check(h.ptr()) ||
         (PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr()));
}

ToArgs parse_to(const py::args& args, const py::kwargs& kw) {
  ToArgs r;
  size_t i = 0;
  if (i < args.size()) {
    py::handle a = args[i];
    if (is_tensor(a)) {
      const Tensor other = a.cast<Tensor>();
      r.dtype = other.dtype();
      r.device = other.device();
      ++i;
    } else if (auto dt = try_parse_dtype(a)) {
      r.dtype = *dt;
      ++i;
    } else if (is_device_like(a)) {
      r.device = parse_device(a, "to");
      ++i;
      if (i < args.size()) {
        if (auto dt2 = try_parse_dtype(args[i])) {
          r.dtype = *dt2;
          ++i;
        }
      }
    } else if (!a.is_none()) {
      throw_to_signature(args);
    } else {
      ++i;  // to(None, ...): the device form with no device
    }
  }
  // Trailing positionals: non_blocking, copy.
  const size_t rest = args.size() - i;
  if (rest > 2) throw_to_signature(args);
  if (rest == 2) r.copy = py_truthy(args[i + 1]);
  if (kw) {
    for (auto item : kw) {
      const std::string key = item.first.cast<std::string>();
      py::handle v = item.second;
      if (key == "dtype") {
        if (r.dtype && !v.is_none()) throw_to_signature(args);
        if (!v.is_none()) {
          auto dt = try_parse_dtype(v);
          if (!dt) throw_to_signature(args);
          r.dtype = *dt;
        }
      } else if (key == "device") {
        if (r.device && !v.is_none()) throw_to_signature(args);
        if (!v.is_none()) r.device = parse_device(v, "to");
      } else if (key == "copy") {
        r.copy = py_truthy(v);
      } else if (key == "memory_format") {
        r.format = parse_memory_format(v, "to");
      } else if (key != "non_blocking") {
        throw py::type_error(str_cat("to() got an unexpected keyword argument '", key, "'"));
      }
    }
  }
  return r;
}

// --- Python numbers ----------------------------------------------------------------------------

py::object scalar_to_py(const Scalar& s) {
  return py::cast(s);
}

template <typename T>
PyObject* element_to_py(const char* p) {
  const T v = *reinterpret_cast<const T*>(p);
  if constexpr (std::is_same_v<T, bool>) {
    return PyBool_FromLong(v);
  } else if constexpr (std::is_integral_v<T>) {
    return PyLong_FromLongLong(static_cast<long long>(v));
  } else if constexpr (is_complex_v<T>) {
    return PyComplex_FromDoubles(v.real(), v.imag());
  } else {
    return PyFloat_FromDouble(static_cast<double>(static_cast<acc_type<T>>(v)));
  }
}

template <typename T>
PyObject* nested_list(const char* p, IntArrayRef sizes, IntArrayRef strides, size_t dim) {
  if (dim == sizes.size()) return element_to_py<T>(p);
  const int64_t n = sizes[dim];
  PyObject* list = PyList_New(n);
  if (!list) throw py::error_already_set();
  const int64_t step = strides[dim] * static_cast<int64_t>(sizeof(T));
  for (int64_t i = 0; i < n; ++i) {
    PyObject* item = nested_list<T>(p + i * step, sizes, strides, dim + 1);
    if (!item) {
      Py_DECREF(list);
      throw py::error_already_set();
    }
    PyList_SET_ITEM(list, i, item);
  }
  return list;
}

py::object tolist(const Tensor& t) {
  return dispatch_dtype<kAllTypes>(t.dtype(), "tolist", [&](auto tag) {
    using T = typename decltype(tag)::type;
    PyObject* r = nested_list<T>(static_cast<const char*>(t.data_ptr()), t.sizes(), t.strides(), 0);
    if (!r) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(r);
  });
}

Scalar single_element(const Tensor& t) {
  EMBER_CHECK_T(ValueError, t.numel() == 1,
                "only one element tensors can be converted to Python scalars (got a tensor with ",
                t.numel(), " elements)");
  return item(t);
}

// --- type() ----------------------------------------------------------------------------------

const char* legacy_type_name(ScalarType t) {
  static const char* names[] = {
      "Bool",  "Byte",   "Char",         "Short",         "Int",   "Long",   "Half",   "BFloat16",
      "Float", "Double", "ComplexFloat", "ComplexDouble", "QInt8", "QUInt8", "QInt32", "QUInt4x2"};
  static_assert(sizeof(names) / sizeof(names[0]) == kNumScalarTypes);
  return names[static_cast<int>(t)];
}

std::optional<ScalarType> parse_legacy_type_name(const std::string& s) {
  for (const char* prefix : {"ember.", "torch."}) {
    const std::string p(prefix);
    if (s.rfind(p, 0) != 0) continue;
    for (int i = 0; i < kNumScalarTypes; ++i) {
      auto t = static_cast<ScalarType>(i);
      if (s == p + legacy_type_name(t) + "Tensor") return t;
    }
  }
  return std::nullopt;
}

// --- pickling ---------------------------------------------------------------------------------

// Rebuilds a tensor over an unpickled storage after checking that the geometry stays inside it
// (a pickle is untrusted input).
Tensor rebuild_tensor(const Storage& storage, ScalarType dtype, py::handle size, py::handle stride,
                      int64_t offset) {
  const char* op = "_rebuild_tensor";
  EMBER_CHECK_T(TypeError, !is_quantized(dtype), "[", op, "] cannot rebuild a ", dtype_name(dtype),
                " tensor from raw storage: quantized tensors pickle through "
                "_make_per_tensor_quantized_tensor / _make_per_channel_quantized_tensor");
  const DimVector sizes = parse_int_sequence(size, op, "size");
  const DimVector strides = parse_int_sequence(stride, op, "stride");
  EMBER_CHECK(sizes.size() == strides.size(), "[", op, "] size and stride lengths differ");
  EMBER_CHECK(offset >= 0, "[", op, "] negative storage offset ", offset);
  checked_numel(sizes, op);
  int64_t last = offset;
  bool empty = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    EMBER_CHECK(strides[d] >= 0, "[", op, "] negative stride ", strides[d]);
    if (sizes[d] == 0) empty = true;
    int64_t span;
    EMBER_CHECK(!__builtin_mul_overflow(sizes[d] > 0 ? sizes[d] - 1 : 0, strides[d], &span) &&
                    !__builtin_add_overflow(last, span, &last),
                "[", op, "] geometry overflows");
  }
  const int64_t capacity = static_cast<int64_t>(storage->nbytes() / element_size(dtype));
  EMBER_CHECK(empty || last < capacity, "[", op, "] sizes ", shape_str(sizes), " and strides ",
              shape_str(strides), " at offset ", offset, " do not fit a storage of ",
              storage->nbytes(), " bytes");
  return Tensor(make_intrusive<TensorImpl>(storage, dtype, sizes, strides, offset));
}

Storage storage_from_bytes(py::bytes data) {
  char* buffer = nullptr;
  Py_ssize_t n = 0;
  if (PyBytes_AsStringAndSize(data.ptr(), &buffer, &n) < 0) throw py::error_already_set();
  auto s = make_intrusive<StorageImpl>(static_cast<size_t>(n), Device(), "_storage_from_bytes");
  if (n > 0) std::memcpy(s->data(), buffer, static_cast<size_t>(n));
  return s;
}

py::bytes storage_bytes(const StorageImpl& s) {
  EMBER_CHECK(s.device().is_cpu(), "[UntypedStorage] cannot read bytes of a ", s.device().str(),
              " storage");
  return py::bytes(static_cast<const char*>(s.data()), s.nbytes());
}

}  // namespace

void init_conversion(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  // to(dtype) / to(device, dtype) / to(other), with non_blocking, copy, memory_format. Every
  // converting method goes through tensor_to, which records ToCopyBackward0 (api/conversion.h).
  cls.def("to", [](const Tensor& self, py::args args, py::kwargs kw) {
    ToArgs a = parse_to(args, kw);
    if (a.device && a.device->is_cpu()) a.device->index = -1;
    return converted(
        tensor_to(self, a.dtype.value_or(self.dtype()), a.device.value_or(self.device()), a.copy,
                  a.format == native::MemoryFormat::Preserve),
        a.format);
  });
  const std::pair<const char*, ScalarType> shorthands[] = {
      {"float", ScalarType::Float32},    {"double", ScalarType::Float64},
      {"half", ScalarType::Float16},     {"bfloat16", ScalarType::BFloat16},
      {"int", ScalarType::Int32},        {"long", ScalarType::Int64},
      {"short", ScalarType::Int16},      {"char", ScalarType::Int8},
      {"byte", ScalarType::UInt8},       {"bool", ScalarType::Bool},
      {"cfloat", ScalarType::Complex64}, {"cdouble", ScalarType::Complex128}};
  for (const auto& [name, dtype] : shorthands) {
    const ScalarType dt = dtype;
    const char* op = name;
    cls.def(
        name,
        [dt, op](const Tensor& self, py::object memory_format) {
          const native::MemoryFormat format = parse_memory_format(memory_format, op);
          return converted(
              tensor_to(self, dt, self.device(), false, format == native::MemoryFormat::Preserve),
              format);
        },
        py::kw_only(), py::arg("memory_format") = py::none());
  }
  cls.def(
      "cpu",
      [](const Tensor& self, py::object memory_format) {
        const native::MemoryFormat format = parse_memory_format(memory_format, "cpu");
        return converted(tensor_to(self, self.dtype(), Device(), false,
                                   format == native::MemoryFormat::Preserve),
                         format);
      },
      py::kw_only(), py::arg("memory_format") = py::none());
  cls.def(
      "cuda",
      [](const Tensor& self, py::object device, bool, py::object) -> Tensor {
        Device d = device.is_none() ? Device(DeviceType::CUDA) : parse_device(device, "cuda");
        if (d.is_cpu()) d = Device(DeviceType::CUDA, d.index);
        return tensor_to(self, self.dtype(), d);
      },
      py::arg("device") = py::none(), py::arg("non_blocking") = false, py::kw_only(),
      py::arg("memory_format") = py::none());
  cls.def(
      "type_as",
      [](const Tensor& self, const Tensor& other) {
        return tensor_to(self, other.dtype(), self.device());
      },
      py::arg("other"));
  cls.def(
      "type",
      [](const Tensor& self, py::object dtype, bool, py::kwargs) -> py::object {
        if (dtype.is_none())
          return py::str(str_cat("ember.", legacy_type_name(self.dtype()), "Tensor"));
        std::optional<ScalarType> t = try_parse_dtype(dtype);
        // A legacy type class (ember.LongTensor): its dtype.
        if (!t && PyType_Check(dtype.ptr()) && py::hasattr(dtype, "dtype")) {
          t = try_parse_dtype(dtype.attr("dtype"));
        }
        if (!t && PyUnicode_Check(dtype.ptr())) {
          t = parse_legacy_type_name(dtype.cast<std::string>());
          EMBER_CHECK_T(ValueError, t.has_value(), "[type] invalid type: '",
                        dtype.cast<std::string>(), "'");
        }
        if (!t) {
          throw py::type_error(
              str_cat("[type] expected an ember.dtype or a type name string, "
                      "got ",
                      Py_TYPE(dtype.ptr())->tp_name));
        }
        return py::cast(tensor_to(self, *t, self.device()));
      },
      py::arg("dtype") = py::none(), py::arg("non_blocking") = false);

  // Python numbers.
  cls.def("item", [](const Tensor& self) { return scalar_to_py(item(self)); });
  cls.def("tolist", [](const Tensor& self) { return tolist(self); });
  cls.def("__bool__", [](const Tensor& self) {
    EMBER_CHECK(self.numel() != 0, "Boolean value of Tensor with no values is ambiguous");
    EMBER_CHECK(self.numel() == 1, "Boolean value of Tensor with more than one value is ambiguous");
    return item(self).to_bool();
  });
  cls.def("__float__", [](const Tensor& self) {
    const Scalar s = single_element(self);
    EMBER_CHECK(!s.is_complex() || s.to_complex().imag() == 0.0,
                "[__float__] value cannot be converted to type float64 without overflow");
    return s.to_double();
  });
  cls.def("__int__", [](const Tensor& self) -> py::object {
    const Scalar s = single_element(self);
    EMBER_CHECK(!s.is_complex() || s.to_complex().imag() == 0.0,
                "[__int__] value cannot be converted to type int64 without overflow");
    if (s.is_floating() || s.is_complex()) {
      // Python's int(float): truncates; raises for nan and inf like int(float('nan')).
      PyObject* r = PyNumber_Long(py::float_(s.to_double()).ptr());
      if (!r) throw py::error_already_set();
      return py::reinterpret_steal<py::object>(r);
    }
    return py::int_(s.to_int64());
  });
  cls.def("__complex__", [](const Tensor& self) { return single_element(self).to_complex(); });
  cls.def("__index__", [](const Tensor& self) {
    EMBER_CHECK_T(TypeError, is_integral(self.dtype(), true) && self.numel() == 1,
                  "only integer tensors of a single element can be converted to an index");
    return item(self).to_int64();
  });
  cls.def("__iter__", [](const Tensor& self) {
    EMBER_CHECK_T(TypeError, self.dim() > 0, "iteration over a 0-d tensor");
    // unbind, as PyTorch: while recording, the rows share one UnbindBackward0 node.
    std::vector<Tensor> parts = unbind(self, 0);
    py::list rows(parts.size());
    for (size_t i = 0; i < parts.size(); ++i) rows[i] = py::cast(parts[i]);
    return rows.attr("__iter__")();
  });
  cls.def("__contains__", [](const Tensor& self, py::handle element) {
    if (is_tensor(element)) return contains(self, element.cast<Tensor>());
    if (auto s = try_parse_scalar(element)) return contains(self, wrap_scalar(*s));
    EMBER_THROW(Error, "Tensor.__contains__ only supports Tensor or scalar, but you passed in a ",
                py::repr(py::type::of(element)).cast<std::string>(), ".");
  });
  cls.def("__format__", [](py::object self, py::str spec) -> py::object {
    const Tensor t = self.cast<Tensor>();
    if (t.dim() == 0) return scalar_to_py(item(t)).attr("__format__")(spec);
    return py::module_::import("builtins").attr("object").attr("__format__")(self, spec);
  });

  cls.def("is_signed", [](const Tensor& self) { return is_signed(self.dtype()); });

  // Storage and pickling. A pickle holds each storage once (pickle's memo sees the same
  // UntypedStorage object for every view of one storage), so views unpickle sharing memory;
  // copy.deepcopy goes through the same path and gives views of one fresh storage.
  py::class_<StorageImpl, Storage>(m, "UntypedStorage")
      .def("nbytes", [](const StorageImpl& s) { return s.nbytes(); })
      .def("size", [](const StorageImpl& s) { return s.nbytes(); })
      .def("__len__", [](const StorageImpl& s) { return s.nbytes(); })
      .def("element_size", [](const StorageImpl&) { return 1; })
      .def("data_ptr", [](const StorageImpl& s) { return reinterpret_cast<uintptr_t>(s.data()); })
      .def_property_readonly("device", [](const StorageImpl& s) { return s.device(); })
      .def("tolist",
           [](const StorageImpl& s) {
             py::list out;
             for (size_t i = 0; i < s.nbytes(); ++i)
               out.append(static_cast<const uint8_t*>(s.data())[i]);
             return out;
           })
      .def("__reduce_ex__",
           [](const StorageImpl& s, int) {
             return py::make_tuple(py::module_::import("ember._C").attr("_storage_from_bytes"),
                                   py::make_tuple(storage_bytes(s)));
           })
      .def("__repr__", [](const StorageImpl& s) {
        return str_cat("<ember.UntypedStorage of ", s.nbytes(), " bytes on ", s.device().str(),
                       ">");
      });
  m.def("_storage_from_bytes", &storage_from_bytes, py::arg("data"));
  m.def("_rebuild_tensor", &rebuild_tensor, py::arg("storage"), py::arg("dtype"), py::arg("size"),
        py::arg("stride"), py::arg("storage_offset"));
  cls.def("untyped_storage", [](const Tensor& self) { return self.storage(); });
  cls.def("__reduce_ex__", [](py::object self, int) {
    const Tensor t = self.cast<Tensor>();
    if (is_quantized(t.dtype())) {
      // The integers and the parameters, rebuilt by the public constructors.
      const Quantizer& q = *t.impl()->quantizer();
      py::module_ ember = py::module_::import("ember");
      const Tensor ints = native::int_repr(t);
      if (q.float_qparams() || t.dtype() == ScalarType::QUInt4x2) {
        std::vector<double> zps;
        for (size_t c = 0; c < q.scales().size(); ++c) zps.push_back(q.zero_point_value(c));
        std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
        return py::make_tuple(py::module_::import("ember._C._quantized").attr("_make_quantized"),
                              py::make_tuple(ints, py::cast(t.dtype()), qscheme_name(q.scheme()),
                                             q.scales(), zps, q.axis(), sizes));
      }
      if (q.per_channel()) {
        return py::make_tuple(ember.attr("_make_per_channel_quantized_tensor"),
                              py::make_tuple(ints, q.scales(), q.zero_points(), q.axis()));
      }
      return py::make_tuple(ember.attr("_make_per_tensor_quantized_tensor"),
                            py::make_tuple(ints, q.scale(), q.zero_point()));
    }
    py::tuple sizes(t.dim()), strides(t.dim());
    for (int64_t d = 0; d < t.dim(); ++d) {
      sizes[d] = t.size(d);
      strides[d] = t.stride(d);
    }
    py::tuple args = py::make_tuple(py::cast(t.storage()), py::cast(t.dtype()), sizes, strides,
                                    t.storage_offset());
    py::object rebuild = py::module_::import("ember._C").attr("_rebuild_tensor");
    py::object dict = py::getattr(self, "__dict__", py::none());
    if (!dict.is_none() && py::len(dict) > 0) return py::make_tuple(rebuild, args, dict);
    return py::make_tuple(rebuild, args);
  });

  m.def(
      "is_tensor", [](py::handle obj) { return is_tensor(obj); }, py::arg("obj"));
  m.def(
      "numel", [](const Tensor& t) { return t.numel(); }, py::arg("input"));
  m.def(
      "is_floating_point", [](const Tensor& t) { return t.is_floating_point(); }, py::arg("input"));
  m.def(
      "is_complex", [](const Tensor& t) { return t.is_complex(); }, py::arg("input"));
}

}  // namespace ember
