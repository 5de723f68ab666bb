#include <complex>

#include "api/creation.h"
#include "bindings/pybind_ember.h"
#include "core/shape.h"

namespace ember {

PyTypeObject* g_tensor_type = nullptr;

namespace {
// Handles, not py::objects: the references are leaked on purpose. A py::object here would be
// released by an exit handler after the interpreter is gone, which crashes Python 3.12 and later
// at exit (their object allocator's state belongs to the interpreter).
py::handle g_dtype_objects[kNumScalarTypes];
}  // namespace

py::object dtype_object(ScalarType t) {
  EMBER_CHECK(t != ScalarType::Undefined, "[dtype] undefined dtype");
  py::handle& o = g_dtype_objects[static_cast<int>(t)];
  if (!o) {
    static DTypeObject storage[kNumScalarTypes];
    storage[static_cast<int>(t)].type = t;
    o = py::cast(&storage[static_cast<int>(t)], py::return_value_policy::reference).release();
  }
  return py::reinterpret_borrow<py::object>(o);
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

namespace {
// A Python int (never bool) as int64. Beyond int64 it raises as PyTorch does: ValueError for a
// single int argument, TypeError for an element of a size or dim list.
enum class Overflow { kValueError, kTypeError };
int64_t long_to_int64(PyObject* o, const char* op, const char* what,
                      Overflow kind = Overflow::kValueError) {
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow != 0) {
    const std::string msg = str_cat("[", op, "] Overflow when unpacking long long: argument '",
                                    what, "' does not fit in int64");
    if (kind == Overflow::kTypeError) throw py::type_error(msg);
    throw py::value_error(msg);
  }
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  return v;
}

// Whether h converts to an index (int64) with PyTorch's rules: Python ints and NumPy integers,
// integer tensors of one element, any other object with __index__; never bool or float.
bool is_int_like(py::handle h) {
  PyObject* o = h.ptr();
  if (PyBool_Check(o) || PyFloat_Check(o)) return false;
  if (PyLong_Check(o)) return true;
  if (is_tensor(h)) {
    const Tensor t = h.cast<Tensor>();
    return t.numel() == 1 && is_integral(t.dtype(), /*include_bool=*/false);
  }
  return PyIndex_Check(o) != 0;
}

// Converts an int-like object (is_int_like) through __index__; a failing __index__ is a
// TypeError naming the op and argument, never a NULL result used as an object.
int64_t index_to_int64(py::handle h, const char* op, const char* what,
                       Overflow kind = Overflow::kValueError) {
  if (PyLong_Check(h.ptr())) return long_to_int64(h.ptr(), op, what, kind);
  PyObject* index = PyNumber_Index(h.ptr());
  if (index == nullptr) {
    PyErr_Clear();
    throw py::type_error(
        str_cat("[", op, "] argument '", what, "' must be int, not ", Py_TYPE(h.ptr())->tp_name));
  }
  py::object owned = py::reinterpret_steal<py::object>(index);
  return long_to_int64(index, op, what, kind);
}

[[noreturn]] void throw_not_int_element(py::handle item, const char* op, const char* what,
                                        size_t pos) {
  throw py::type_error(str_cat("[", op, "] argument '", what,
                               "' must be a tuple of ints, but found element of type ",
                               Py_TYPE(item.ptr())->tp_name, " at pos ", pos));
}
}  // namespace

int64_t parse_int(py::handle h, const char* op, const char* what) {
  if (!is_int_like(h)) {
    throw py::type_error(
        str_cat("[", op, "] argument '", what, "' must be int, not ", Py_TYPE(h.ptr())->tp_name));
  }
  return index_to_int64(h, op, what);
}

DimVector parse_int_sequence(py::handle h, const char* op, const char* what) {
  DimVector out;
  // A lone integer-like object (int, NumPy integer, one-element integer tensor) is a 1-element
  // size. Any other tensor is refused here rather than iterated as a sequence.
  if (is_int_like(h) && (!PySequence_Check(h.ptr()) || is_tensor(h))) {
    out.push_back(index_to_int64(h, op, what, Overflow::kTypeError));
    return out;
  }
  if (is_tensor(h) || !PySequence_Check(h.ptr()) || PyUnicode_Check(h.ptr()) ||
      PyBytes_Check(h.ptr())) {
    throw py::type_error(str_cat("[", op, "] argument '", what, "' must be a tuple of ints, not ",
                                 Py_TYPE(h.ptr())->tp_name));
  }
  py::sequence seq = py::reinterpret_borrow<py::sequence>(h);
  size_t pos = 0;
  for (py::handle item : seq) {
    if (!is_int_like(item)) throw_not_int_element(item, op, what, pos);
    out.push_back(index_to_int64(item, op, what, Overflow::kTypeError));
    ++pos;
  }
  return out;
}

DimVector parse_shape(const py::args& args, const char* op) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr())) {
    return parse_int_sequence(args[0], op, "size");
  }
  DimVector out;
  size_t pos = 0;
  for (py::handle item : args) {
    if (!is_int_like(item)) throw_not_int_element(item, op, "size", pos);
    out.push_back(index_to_int64(item, op, "size", Overflow::kTypeError));
    ++pos;
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
