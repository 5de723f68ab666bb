#include <complex>

#include "bindings/pybind_ember.h"
#include "core/shape.h"
#include "ops/creation.h"

namespace ember {

PyTypeObject* g_tensor_type = nullptr;

namespace {
py::object g_dtype_objects[kNumScalarTypes];
}

py::object dtype_object(ScalarType t) {
  EMBER_CHECK(t != ScalarType::Undefined, "[dtype] undefined dtype");
  py::object& o = g_dtype_objects[static_cast<int>(t)];
  if (!o) {
    static DTypeObject storage[kNumScalarTypes];
    storage[static_cast<int>(t)].type = t;
    o = py::cast(&storage[static_cast<int>(t)], py::return_value_policy::reference);
  }
  return o;
}

std::optional<ScalarType> try_parse_dtype(py::handle h) {
  if (py::isinstance<DTypeObject>(h)) return h.cast<DTypeObject&>().type;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) return ScalarType::Float64;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) return ScalarType::Int64;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) return ScalarType::Bool;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyComplex_Type)) return ScalarType::Complex128;
  return std::nullopt;
}

std::optional<Scalar> try_parse_scalar(py::handle h) {
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) return Scalar(o == Py_True);
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow != 0) {
      // Beyond int64: PyTorch accepts up to uint64 range for some ops; we report clearly.
      throw py::value_error("[scalar] Python int too large to convert to int64: " +
                            py::repr(h).cast<std::string>());
    }
    return Scalar(static_cast<int64_t>(v));
  }
  if (PyFloat_Check(o)) return Scalar(PyFloat_AS_DOUBLE(o));
  if (PyComplex_Check(o)) {
    return Scalar(std::complex<double>(PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o)));
  }
  // NumPy scalars (np.float32(1), np.int64(2), np.bool_(True), ...).
  static PyObject* np_generic = [] {
    py::object numpy = py::module_::import("numpy");
    return py::object(numpy.attr("generic")).release().ptr();
  }();
  if (PyObject_IsInstance(o, np_generic) == 1) {
    py::object item = h.attr("item")();
    if (PyLong_Check(item.ptr()) || PyFloat_Check(item.ptr()) || PyBool_Check(item.ptr()) ||
        PyComplex_Check(item.ptr())) {
      return try_parse_scalar(item);
    }
  }
  return std::nullopt;
}

DimVector parse_int_sequence(py::handle h, const char* op, const char* what) {
  DimVector out;
  if (PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr())) {
    out.push_back(h.cast<int64_t>());
    return out;
  }
  // A lone integer-like object (NumPy integer, one-element integer tensor) is a 1-element size.
  if (PyIndex_Check(h.ptr()) && !PyBool_Check(h.ptr()) && !PyFloat_Check(h.ptr()) &&
      (!PySequence_Check(h.ptr()) || is_tensor(h))) {
    PyObject* index = PyNumber_Index(h.ptr());
    if (!index) throw py::error_already_set();
    out.push_back(py::reinterpret_steal<py::object>(index).cast<int64_t>());
    return out;
  }
  if (!PySequence_Check(h.ptr()) || PyUnicode_Check(h.ptr())) {
    throw py::type_error(str_cat("[", op, "] ", what, " must be a tuple of ints, but got ",
                                 Py_TYPE(h.ptr())->tp_name));
  }
  py::sequence seq = py::reinterpret_borrow<py::sequence>(h);
  for (py::handle item : seq) {
    if (PyLong_Check(item.ptr()) && !PyBool_Check(item.ptr())) {
      out.push_back(item.cast<int64_t>());
    } else if (PyIndex_Check(item.ptr()) && !PyBool_Check(item.ptr())) {
      out.push_back(py::reinterpret_steal<py::object>(PyNumber_Index(item.ptr())).cast<int64_t>());
    } else {
      throw py::type_error(str_cat("[", op, "] ", what,
                                   " must be a tuple of ints, but found "
                                   "element of type ",
                                   Py_TYPE(item.ptr())->tp_name));
    }
  }
  return out;
}

DimVector parse_shape(const py::args& args, const char* op) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr())) {
    return parse_int_sequence(args[0], op, "size");
  }
  DimVector out;
  for (py::handle item : args) {
    if (PyLong_Check(item.ptr()) && !PyBool_Check(item.ptr())) {
      out.push_back(item.cast<int64_t>());
    } else if (PyIndex_Check(item.ptr()) && !PyBool_Check(item.ptr())) {
      out.push_back(py::reinterpret_steal<py::object>(PyNumber_Index(item.ptr())).cast<int64_t>());
    } else {
      throw py::type_error(str_cat("[", op,
                                   "] size must be a tuple of ints, but found element "
                                   "of type ",
                                   Py_TYPE(item.ptr())->tp_name));
    }
  }
  return out;
}

std::optional<std::vector<int64_t>> parse_dims(py::handle h, const char* op) {
  if (h.is_none()) return std::nullopt;
  return parse_int_sequence(h, op, "dim").vec();
}

Tensor to_operand(py::handle h, const char* op) {
  if (is_tensor(h)) return h.cast<Tensor>();
  if (auto s = try_parse_scalar(h)) return wrap_scalar_for_binding(*s);
  // Arrays and nested sequences become tensors through ember.tensor's inference.
  if (PySequence_Check(h.ptr()) || py::hasattr(h, "__array__")) {
    return tensor_from_data(h, std::nullopt, Device(), /*warn_on_tensor=*/false, op);
  }
  throw py::type_error(
      str_cat("[", op, "] expected a Tensor or a number, but got ", Py_TYPE(h.ptr())->tp_name));
}

Tensor wrap_scalar_for_binding(const Scalar& s) {
  return wrap_scalar(s);
}

Device parse_device(py::handle h, const char* op) {
  if (h.is_none()) return Device();
  if (py::isinstance<Device>(h)) return h.cast<Device>();
  if (PyUnicode_Check(h.ptr())) return Device::parse(h.cast<std::string>());
  if (PyLong_Check(h.ptr())) return Device(DeviceType::CUDA, h.cast<int16_t>());
  throw py::type_error(str_cat("[", op,
                               "] device must be a str, an int or an ember.device, "
                               "but got ",
                               Py_TYPE(h.ptr())->tp_name));
}

}  // namespace ember
