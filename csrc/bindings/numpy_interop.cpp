// Zero-copy exchange with NumPy: ember.from_numpy shares the array's memory and keeps the array
// alive; Tensor.numpy() returns an array viewing the tensor's memory with the tensor as its base.
#include "api/conversion.h"
#include "api/views.h"
#include "bindings/pybind_ember.h"
#include "core/factory.h"

namespace ember {

std::optional<ScalarType> scalar_type_from_numpy(const py::dtype& dt) {
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  switch (kind) {
    case 'b':
      return ScalarType::Bool;
    case 'u':
      if (size == 1) return ScalarType::UInt8;
      break;
    case 'i':
      if (size == 1) return ScalarType::Int8;
      if (size == 2) return ScalarType::Int16;
      if (size == 4) return ScalarType::Int32;
      if (size == 8) return ScalarType::Int64;
      break;
    case 'f':
      if (size == 2) return ScalarType::Float16;
      if (size == 4) return ScalarType::Float32;
      if (size == 8) return ScalarType::Float64;
      break;
    case 'c':
      if (size == 8) return ScalarType::Complex64;
      if (size == 16) return ScalarType::Complex128;
      break;
    default:
      break;
  }
  return std::nullopt;
}

namespace {

void release_pyobject(void* ctx, void*) noexcept {
  // The last reference may drop on a thread without the GIL (autograd, a worker).
  py::gil_scoped_acquire gil;
  Py_DECREF(static_cast<PyObject*>(ctx));
}

}  // namespace

py::dtype numpy_dtype_for(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return py::dtype("bool");
    case ScalarType::UInt8:
      return py::dtype("uint8");
    case ScalarType::Int8:
      return py::dtype("int8");
    case ScalarType::Int16:
      return py::dtype("int16");
    case ScalarType::Int32:
      return py::dtype("int32");
    case ScalarType::Int64:
      return py::dtype("int64");
    case ScalarType::Float16:
      return py::dtype("float16");
    case ScalarType::Float32:
      return py::dtype("float32");
    case ScalarType::Float64:
      return py::dtype("float64");
    case ScalarType::Complex64:
      return py::dtype("complex64");
    case ScalarType::Complex128:
      return py::dtype("complex128");
    default:
      if (is_quantized(t)) {
        EMBER_THROW(TypeError, "[numpy] Got unsupported ScalarType ", dtype_name(t),
                    ": NumPy has no quantized dtypes (use .dequantize() or .int_repr() first)");
      }
      EMBER_THROW(TypeError, "[numpy] Got unsupported ScalarType ", dtype_name(t),
                  ": NumPy has no such dtype (convert with .float() first)");
  }
}

Tensor tensor_from_numpy(py::handle obj, bool warn_if_not_writeable) {
  if (!py::isinstance<py::array>(obj)) {
    throw py::type_error(
        str_cat("[from_numpy] expected np.ndarray (got ", Py_TYPE(obj.ptr())->tp_name, ")"));
  }
  py::array arr = py::reinterpret_borrow<py::array>(obj);
  py::dtype dt = arr.dtype();
  auto st = scalar_type_from_numpy(dt);
  if (!st) {
    throw py::type_error(
        str_cat("[from_numpy] can't convert np.ndarray of type ", py::str(dt).cast<std::string>(),
                ". The only supported types are: float64, float32, float16, complex64, complex128, "
                "int64, int32, int16, int8, uint8, and bool."));
  }
  if (!dt.attr("isnative").cast<bool>()) {
    throw py::value_error(
        "[from_numpy] given numpy array has byte order different from the "
        "native byte order. Conversion between byte orders is currently not "
        "supported.");
  }
  const int64_t nd = arr.ndim();
  const int64_t isz = static_cast<int64_t>(element_size(*st));
  DimVector sizes(nd), strides(nd);
  int64_t extent = isz;
  bool empty = false;
  for (int64_t d = 0; d < nd; ++d) {
    sizes[d] = arr.shape(d);
    int64_t sb = arr.strides(d);
    if (sizes[d] == 0) empty = true;
    if (sb < 0 && sizes[d] > 1) {
      throw py::value_error(
          "[from_numpy] At least one stride in the given numpy array is "
          "negative, and tensors with negative strides are not currently "
          "supported. (You can probably work around this by making a copy "
          "of your array with array.copy().)");
    }
    if (sb % isz != 0) {
      throw py::value_error(
          str_cat("[from_numpy] given numpy array strides not a multiple of "
                  "the element byte size (stride ",
                  sb, ", itemsize ", isz, "). Copy the numpy array to reallocate the memory."));
    }
    strides[d] = sizes[d] > 1 ? sb / isz : (sb >= 0 ? sb / isz : 0);
    extent += (sizes[d] - 1) * std::max<int64_t>(sb, 0);
  }
  if (empty) extent = 0;
  bool writeable = arr.attr("flags").attr("writeable").cast<bool>();
  if (!writeable && warn_if_not_writeable) {
    if (PyErr_WarnEx(PyExc_UserWarning,
                     "The given NumPy array is not writable. The tensor shares its memory and "
                     "Ember refuses writes to it (in-place ops raise RuntimeError); copy the "
                     "array first if you need to modify it.",
                     1) < 0) {
      throw py::error_already_set();
    }
  }
  PyObject* owner = arr.ptr();
  Py_INCREF(owner);
  auto storage =
      make_intrusive<StorageImpl>(const_cast<void*>(arr.data()), static_cast<size_t>(extent),
                                  Device(), &release_pyobject, owner);
  storage->set_read_only(!writeable);
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), *st, sizes, strides, 0));
}

py::array tensor_to_numpy(py::object self, bool force) {
  Tensor t = self.cast<Tensor>();
  if (!t.device().is_cpu()) {
    EMBER_CHECK_T(TypeError, force, "[numpy] can't convert ", t.device().str(),
                  " device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host "
                  "memory first.");
    t = to(t, t.dtype(), Device(), /*copy=*/true);
    self = py::cast(t);
  }
  py::dtype dt = numpy_dtype_for(t.dtype());  // bfloat16 raises TypeError
  const int64_t isz = static_cast<int64_t>(t.itemsize());
  std::vector<py::ssize_t> shape(t.dim()), strides(t.dim());
  for (int64_t d = 0; d < t.dim(); ++d) {
    shape[d] = t.size(d);
    strides[d] = t.stride(d) * isz;
  }
  // The array's base is the tensor object, which keeps the storage alive.
  py::array out(dt, shape, strides, t.data_ptr(), self);
  if (t.storage()->read_only()) out.attr("flags").attr("writeable") = false;
  return out;
}

void init_numpy_interop(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  m.def(
      "from_numpy", [](py::handle a) { return tensor_from_numpy(a, true); }, py::arg("ndarray"),
      "Shares the memory of a NumPy array (zero-copy); the array stays alive while the tensor "
      "lives.");
  cls.def("numpy", &tensor_to_numpy, py::kw_only(), py::arg("force") = false,
          "A NumPy array sharing this tensor's memory.");

  // NumPy protocol: np.asarray(t) shares memory; ufuncs on tensors return tensors.
  cls.def(
      "__array__",
      [](py::object self, py::object dtype, py::object copy) -> py::object {
        py::array arr = tensor_to_numpy(self, false);
        const bool force_copy = !copy.is_none() && py_truthy(copy);
        const bool no_copy = !copy.is_none() && !py_truthy(copy);
        if (!dtype.is_none()) {
          py::dtype want = py::dtype::from_args(dtype);
          if (!want.equal(arr.dtype())) {
            EMBER_CHECK_T(ValueError, !no_copy,
                          "[__array__] Unable to avoid copy while creating "
                          "an array as requested (dtype ",
                          py::str(arr.dtype()).cast<std::string>(), " -> ",
                          py::str(want).cast<std::string>(), ").");
            return arr.attr("astype")(want);
          }
        }
        if (force_copy) return arr.attr("copy")();
        return arr;
      },
      py::arg("dtype") = py::none(), py::kw_only(), py::arg("copy") = py::none());
  cls.def(
      "__array_wrap__",
      [](py::object self, py::object array, py::object, py::object) -> py::object {
        if (!py::isinstance<py::array>(array)) return array;
        py::array arr = py::reinterpret_borrow<py::array>(array);
        if (!scalar_type_from_numpy(arr.dtype()) || !arr.dtype().attr("isnative").cast<bool>()) {
          return array;  // no Ember dtype for it: hand NumPy's result back unchanged
        }
        return py::cast(tensor_from_numpy(array, /*warn_if_not_writeable=*/false));
      },
      py::arg("array"), py::arg("context") = py::none(), py::arg("return_scalar") = false);
}

}  // namespace ember
