// ember.tensor / as_tensor / asarray and Tensor.new_tensor: tensors from Python data.
//
// Nested sequences are read in two walks: the first infers the shape (from the first element at
// each depth, as PyTorch does) and, unless dtype= is given, the dtype (the promotion of every
// leaf's natural dtype); the second checks every length against the shape and writes each leaf
// straight into the result's memory. NumPy arrays nested in the data are copied as blocks.
#include "api/conversion.h"
#include "api/views.h"
#include "bindings/factory_args.h"
#include "core/shape.h"
#include "dispatch/copy.h"
#include "dispatch/dtype_dispatch.h"

namespace ember {

namespace {

constexpr size_t kMaxDims = 64;

bool is_ndarray(py::handle h) {
  return py::isinstance<py::array>(h);
}

bool is_numpy_scalar(py::handle h) {
  static PyObject* generic = [] {
    return py::object(py::module_::import("numpy").attr("generic")).release().ptr();
  }();
  return PyObject_IsInstance(h.ptr(), generic) == 1;
}

bool is_text(py::handle h) {
  return PyUnicode_Check(h.ptr()) || PyBytes_Check(h.ptr());
}

[[noreturn]] void throw_invalid_type(py::handle h, const char* op) {
  throw py::type_error(
      str_cat("[", op, "] new(): invalid data type '", Py_TYPE(h.ptr())->tp_name, "'"));
}

ScalarType numpy_dtype_to_scalar_type(py::handle np_dtype, const char* op) {
  auto st = scalar_type_from_numpy(py::reinterpret_borrow<py::dtype>(np_dtype));
  if (!st) {
    throw py::type_error(str_cat("[", op, "] can't convert np.ndarray of type ",
                                 py::str(np_dtype).cast<std::string>(),
                                 ". The only supported types are: float64, float32, float16, "
                                 "complex64, complex128, int64, int32, int16, int8, uint8, and "
                                 "bool."));
  }
  return *st;
}

// The dtype a leaf contributes to inference (PyTorch's infer_scalar_type).
ScalarType leaf_dtype(py::handle h, const char* op) {
  PyObject* o = h.ptr();
  if (is_tensor(h)) return h.cast<Tensor>().dtype();
  if (is_numpy_scalar(h) || is_ndarray(h)) return numpy_dtype_to_scalar_type(h.attr("dtype"), op);
  if (PyBool_Check(o)) return ScalarType::Bool;
  if (PyLong_Check(o)) return ScalarType::Int64;
  if (PyFloat_Check(o)) return default_dtype();
  if (PyComplex_Check(o)) return default_complex_dtype();
  if (is_text(h)) throw_invalid_type(h, op);
  EMBER_THROW(Error, "[", op, "] Could not infer dtype of ", Py_TYPE(o)->tp_name);
}

// Sequences we descend into: anything with the sequence protocol except text, tensors (leaves,
// as in PyTorch) and NumPy arrays (copied as blocks).
bool is_nested_sequence(py::handle h) {
  return PySequence_Check(h.ptr()) && !is_text(h) && !is_tensor(h) && !is_ndarray(h);
}

DimVector infer_shape(py::handle data, const char* op) {
  DimVector shape;
  py::object cur = py::reinterpret_borrow<py::object>(data);
  while (true) {
    if (is_ndarray(cur)) {
      py::array arr = py::reinterpret_borrow<py::array>(cur);
      for (py::ssize_t d = 0; d < arr.ndim(); ++d) shape.push_back(arr.shape(d));
      break;
    }
    if (!is_nested_sequence(cur)) break;
    const Py_ssize_t n = PySequence_Size(cur.ptr());
    if (n < 0) throw py::error_already_set();
    shape.push_back(n);
    EMBER_CHECK_T(ValueError, shape.size() <= kMaxDims, "[", op, "] too many dimensions '",
                  Py_TYPE(cur.ptr())->tp_name, "'");
    if (n == 0) break;
    PyObject* first = PySequence_GetItem(cur.ptr(), 0);
    if (!first) throw py::error_already_set();
    cur = py::reinterpret_steal<py::object>(first);
  }
  return shape;
}

// Promotes *dtype with every leaf below `h` (no length checks: the fill walk does those).
void infer_dtype(py::handle h, ScalarType* dtype, const char* op) {
  if (is_nested_sequence(h)) {
    py::object fast = py::reinterpret_steal<py::object>(PySequence_Fast(h.ptr(), "not a sequence"));
    if (!fast) throw py::error_already_set();
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(fast.ptr());
    PyObject** items = PySequence_Fast_ITEMS(fast.ptr());
    for (Py_ssize_t i = 0; i < n; ++i) infer_dtype(items[i], dtype, op);
    return;
  }
  *dtype = promote_types(*dtype, leaf_dtype(h, op));
}

// A leaf as a number: Python numbers, NumPy scalars and 0-d arrays, one-element tensors.
Scalar leaf_scalar(py::handle h, ScalarType target, const char* op) {
  if (auto s = try_parse_scalar(h)) return *s;
  if (is_tensor(h)) {
    const Tensor t = h.cast<Tensor>();
    EMBER_CHECK_T(TypeError, t.numel() == 1, "[", op,
                  "] only one element tensors can be converted to Python scalars: found a "
                  "tensor of shape ",
                  shape_str(t.sizes()), " inside the data (use ember.stack to combine tensors)");
    return item(t, op);
  }
  if (is_ndarray(h) && py::reinterpret_borrow<py::array>(h).ndim() == 0) {
    return leaf_scalar(h.attr("item")(), target, op);
  }
  if (is_text(h)) throw_invalid_type(h, op);
  if (is_nested_sequence(h)) {
    throw py::type_error(str_cat("[", op, "] expected a number but found a ",
                                 Py_TYPE(h.ptr())->tp_name,
                                 " deeper than the shape inferred from the first elements"));
  }
  throw py::type_error(str_cat("[", op, "] must be real number, not ", Py_TYPE(h.ptr())->tp_name));
}

[[noreturn]] void throw_overflow(ScalarType t, const char* op) {
  EMBER_THROW(Error, "[", op, "] value cannot be converted to type ", dtype_name(t),
              " without overflow");
}

// PyTorch's checked conversion of a Python number into an element of T: integers must fit
// (negative values may wrap into unsigned types as two's complement), floats into integer types
// must lie in range, complex only into complex or bool; float targets take anything real.
template <typename T>
T scalar_to_element(const Scalar& s, const char* op) {
  if constexpr (std::is_same_v<T, bool>) {
    return s.to_bool();
  } else if constexpr (is_complex_v<T>) {
    return s.to<T>();
  } else {
    if (s.is_complex()) {
      if constexpr (std::is_integral_v<T>) {
        throw py::type_error(str_cat("[", op,
                                     "] 'complex' object cannot be interpreted as an "
                                     "integer"));
      } else {
        throw py::type_error(str_cat("[", op, "] must be real number, not complex"));
      }
    }
    if constexpr (std::is_integral_v<T>) {
      using L = std::numeric_limits<T>;
      if (s.is_floating()) {
        const double d = s.to_double();
        if (!(d >= static_cast<double>(L::lowest()) && d <= static_cast<double>(L::max()))) {
          throw_overflow(scalar_type_of<T>, op);
        }
        return static_cast<T>(static_cast<int64_t>(d));
      }
      const int64_t v = s.to_int64();
      const bool overflow =
          std::is_signed_v<T>
              ? (v < static_cast<int64_t>(L::lowest()) || v > static_cast<int64_t>(L::max()))
              : (v > static_cast<int64_t>(L::max()) ||
                 (v < 0 && static_cast<uint64_t>(0) - static_cast<uint64_t>(v) >
                               static_cast<uint64_t>(L::max())));
      if (overflow) throw_overflow(scalar_type_of<T>, op);
      return static_cast<T>(v);
    } else {
      return s.to<T>();
    }
  }
}

template <typename T>
class Filler {
 public:
  Filler(const Tensor& result, const char* op)
      : result_(result), shape_(result.sizes()), base_(result.data<T>()), op_(op) {}

  void fill(py::handle h, size_t dim, T*& out) {
    if (dim == shape_.size()) {
      *out++ = scalar_to_element<T>(leaf_scalar(h, result_.dtype(), op_), op_);
      return;
    }
    if (is_ndarray(h)) {
      copy_block(h, dim, out);
      return;
    }
    if (!is_nested_sequence(h)) {
      throw py::type_error(str_cat("[", op_, "] not a sequence: expected a sequence of length ",
                                   shape_[dim], " at dim ", dim, " but found ",
                                   Py_TYPE(h.ptr())->tp_name));
    }
    py::object fast = py::reinterpret_steal<py::object>(PySequence_Fast(h.ptr(), "not a sequence"));
    if (!fast) throw py::error_already_set();
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(fast.ptr());
    EMBER_CHECK_T(ValueError, n == shape_[dim], "[", op_, "] expected sequence of length ",
                  shape_[dim], " at dim ", dim, " (got ", n, ")");
    PyObject** items = PySequence_Fast_ITEMS(fast.ptr());
    for (Py_ssize_t i = 0; i < n; ++i) fill(items[i], dim + 1, out);
  }

 private:
  // A NumPy array standing for the dims [dim, ndim): copied (converted) in one go.
  void copy_block(py::handle h, size_t dim, T*& out) {
    py::array arr = py::reinterpret_borrow<py::array>(h);
    const DimVector block(IntArrayRef(shape_.data() + dim, shape_.size() - dim));
    for (size_t d = 0; d < block.size(); ++d) {
      const int64_t got = d < static_cast<size_t>(arr.ndim()) ? arr.shape(d) : -1;
      EMBER_CHECK_T(ValueError,
                    got == block[d] && arr.ndim() == static_cast<py::ssize_t>(block.size()), "[",
                    op_, "] expected sequence of length ", block[d], " at dim ", dim + d, " (got ",
                    got < 0 ? 0 : got, ")");
    }
    bool negative = false;
    for (py::ssize_t d = 0; d < arr.ndim(); ++d) negative = negative || arr.strides(d) < 0;
    if (negative) arr = py::reinterpret_steal<py::array>(arr.attr("copy")().release());
    const Tensor src = tensor_from_numpy(arr, /*warn_if_not_writeable=*/false);
    const Tensor dst = make_view(result_, block, contiguous_strides(block), out - base_);
    copy_into(dst, src, op_);
    out += dst.numel();
  }

  const Tensor& result_;
  IntArrayRef shape_;
  T* base_;
  const char* op_;
};

Tensor tensor_from_sequence(py::handle data, std::optional<ScalarType> dtype, Device device,
                            const char* op) {
  const DimVector shape = infer_shape(data, op);
  ScalarType st;
  if (dtype) {
    st = *dtype;
  } else {
    st = ScalarType::Undefined;
    infer_dtype(data, &st, op);
    if (st == ScalarType::Undefined) st = default_dtype();  // empty sequences
  }
  Tensor result = empty_tensor(shape, st, device, op);
  if (result.numel() == 0) return result;
  dispatch_dtype<kAllTypes>(st, op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* out = result.data<T>();
    Filler<T>(result, op).fill(data, 0, out);
  });
  return result;
}

void warn(const char* message) {
  if (PyErr_WarnEx(PyExc_UserWarning, message, 1) < 0) throw py::error_already_set();
}

constexpr const char* kCopyConstructWarning =
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
    "rather than ember.tensor(sourceTensor).";

std::optional<ScalarType> optional_dtype(const TensorOptions& o) {
  if (o.dtype == ScalarType::Undefined) return std::nullopt;
  return o.dtype;
}

// A tensor viewing the memory of a buffer-protocol object (bytes, bytearray, array.array,
// memoryview): its own element format when dtype is None, else the raw bytes reinterpreted as
// dtype (torch.frombuffer semantics).
Tensor tensor_from_buffer(py::handle obj, std::optional<ScalarType> dtype, const char* op) {
  py::module_ np = py::module_::import("numpy");
  py::object view = py::reinterpret_steal<py::object>(PyMemoryView_FromObject(obj.ptr()));
  if (!view) throw py::error_already_set();
  if (!dtype) return tensor_from_numpy(np.attr("asarray")(view), /*warn_if_not_writeable=*/true);
  const Py_ssize_t nbytes = view.attr("nbytes").cast<Py_ssize_t>();
  const Py_ssize_t isz = static_cast<Py_ssize_t>(element_size(*dtype));
  EMBER_CHECK_T(ValueError, nbytes % isz == 0, "[", op, "] buffer length (", nbytes,
                " bytes) after offset (0 bytes) must be a multiple of element size (", isz, ")");
  // bfloat16 has no NumPy dtype: read the bytes as uint16 and relabel them.
  const ScalarType carrier = *dtype == ScalarType::BFloat16 ? ScalarType::Int16 : *dtype;
  py::object bytes = np.attr("frombuffer")(view, py::arg("dtype") = np.attr("uint8"));
  py::object arr = bytes.attr("view")(numpy_dtype_for(carrier));
  Tensor t = tensor_from_numpy(arr, /*warn_if_not_writeable=*/true);
  if (carrier == *dtype) return t;
  return Tensor(make_intrusive<TensorImpl>(t.storage(), *dtype, t.sizes(), t.strides(),
                                           t.storage_offset(), t.impl()->version_counter()));
}

}  // namespace

Tensor tensor_from_data(py::handle data, std::optional<ScalarType> dtype, Device device,
                        bool warn_on_tensor, const char* op) {
  check_device_available(device, op);
  if (is_tensor(data)) {
    if (warn_on_tensor) warn(kCopyConstructWarning);
    const Tensor t = data.cast<Tensor>();
    return to(t, dtype.value_or(t.dtype()), device, /*copy=*/true);
  }
  if (is_ndarray(data)) {
    const Tensor t = tensor_from_numpy(data, /*warn_if_not_writeable=*/false);
    return to(t, dtype.value_or(t.dtype()), device, /*copy=*/true);
  }
  if (is_text(data)) throw_invalid_type(data, op);
  if (!is_nested_sequence(data) && !is_numpy_scalar(data) && py::hasattr(data, "__array__")) {
    // Array-likes (objects implementing the NumPy protocol) go through their array form.
    py::object arr = py::module_::import("numpy").attr("asarray")(data);
    const Tensor t = tensor_from_numpy(arr, /*warn_if_not_writeable=*/false);
    return to(t, dtype.value_or(t.dtype()), device, /*copy=*/true);
  }
  if (!device.is_cpu()) {
    // Sequences are parsed into host memory, then copied to the device whole.
    const Tensor host = tensor_from_sequence(data, dtype, Device(), op);
    return to(host, host.dtype(), device, /*copy=*/true);
  }
  return tensor_from_sequence(data, dtype, device, op);
}

void init_tensor_new(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  m.def(
      "tensor",
      [](py::handle data, py::object dtype, py::object device, py::object requires_grad,
         py::object) {
        RequiresGradRequest requires_grad_request(requires_grad, "tensor");
        TensorOptions o = parse_options(dtype, device, "tensor");
        return tensor_from_data(data, optional_dtype(o), o.device, true, "tensor");
      },
      py::arg("data"), py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false, py::arg("pin_memory") = false,
      "A new tensor holding a copy of data (nested sequences, numbers, NumPy arrays, tensors), "
      "with PyTorch's dtype inference.");

  m.def(
      "as_tensor",
      [](py::handle data, py::object dtype, py::object device) -> Tensor {
        TensorOptions o = parse_options(dtype, device, "as_tensor");
        if (is_tensor(data) || is_ndarray(data)) {
          const Tensor t = is_tensor(data) ? data.cast<Tensor>() : tensor_from_numpy(data, true);
          return to(t, o.dtype_or(t.dtype()), device.is_none() ? t.device() : o.device);
        }
        return tensor_from_data(data, optional_dtype(o), o.device, false, "as_tensor");
      },
      py::arg("data"), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      "Converts data to a tensor, sharing memory with a tensor or NumPy array when dtype and "
      "device allow.");

  m.def(
      "asarray",
      [](py::handle obj, py::object dtype_h, py::object device_h, py::object copy_h,
         py::object requires_grad) -> Tensor {
        const char* op = "asarray";
        RequiresGradRequest requires_grad_request(requires_grad, op);
        TensorOptions o = parse_options(dtype_h, device_h, op);
        const std::optional<ScalarType> dtype = optional_dtype(o);
        const std::optional<bool> copy =
            copy_h.is_none() ? std::nullopt : std::optional<bool>(py_truthy(copy_h));
        Tensor t;
        if (is_tensor(obj)) {
          t = obj.cast<Tensor>();
        } else if (is_ndarray(obj)) {
          t = tensor_from_numpy(obj, /*warn_if_not_writeable=*/copy == false);
        } else if (is_numpy_scalar(obj)) {
          EMBER_CHECK(copy != false, "[", op,
                      "] can't alias NumPy scalars. Either remove "
                      "copy=False or transform it in a ndarray.");
        } else if (py::hasattr(obj, "__dlpack__")) {
          t = tensor_from_dlpack(obj);
        } else if (PyObject_CheckBuffer(obj.ptr())) {
          t = tensor_from_buffer(obj, dtype, op);
        }
        if (t.defined()) {
          const bool wrong_device = !device_h.is_none() && o.device != t.device();
          const bool wrong_dtype = dtype && *dtype != t.dtype();
          if (copy == true || (!copy && (wrong_device || wrong_dtype))) {
            return to(t, dtype.value_or(t.dtype()), device_h.is_none() ? t.device() : o.device,
                      /*copy=*/true);
          }
          EMBER_CHECK_T(ValueError, !wrong_device, "[", op, "] can't alias tensor from device '",
                        t.device().str(), "' to '", o.device.str(), "'.");
          EMBER_CHECK_T(ValueError, !wrong_dtype, "[", op, "] can't alias tensor with dtype '",
                        dtype_name(t.dtype()), "' into dtype '", dtype_name(*dtype), "'.");
          return t;
        }
        EMBER_CHECK_T(ValueError, copy != false, "[", op,
                      "] can't alias arbitrary sequence into a tensor.");
        return tensor_from_data(obj, dtype, o.device, false, op);
      },
      py::arg("obj"), py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("copy") = py::none(), py::arg("requires_grad") = false,
      "Converts obj to a tensor, sharing memory with tensors, NumPy arrays, DLPack producers and "
      "buffer-protocol objects unless copy=True or a dtype/device change forces a copy.");

  cls.def(
      "new_tensor",
      [](const Tensor& self, py::handle data, py::object dtype, py::object device,
         py::object requires_grad) {
        RequiresGradRequest requires_grad_request(requires_grad, "new_tensor");
        TensorOptions o = parse_options(dtype, device, "new_tensor");
        return tensor_from_data(data, o.dtype_or(self.dtype()),
                                device.is_none() ? self.device() : o.device, true, "new_tensor");
      },
      py::arg("data"), py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false);
}

}  // namespace ember
