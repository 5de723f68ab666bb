// pybind11 glue shared by every binding file: type casters for Tensor (identity-preserving, via
// the intrusive holder), dtype and Scalar, plus argument parsers for shapes and dims.
// Bindings hold no logic beyond converting arguments (docs/design/architecture.md, "Layers").
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <type_traits>
#include <vector>

#include "core/scalar.h"
#include "core/tensor.h"

PYBIND11_DECLARE_HOLDER_TYPE(T, ember::intrusive_ptr<T>, true)

static_assert(std::is_same_v<int64_t, long>, "the int64 caster below is for LP64 platforms");

namespace pybind11::detail {
// Every int64_t argument of every binding (and std::optional<int64_t>, h.cast<int64_t>()) is
// converted here, with PyTorch's rules rather than pybind11's: a Python int or any object with
// __index__ (NumPy integers, one-element integer tensors); never bool or float, and never a float
// tensor truncated through __int__ (pybind11's fallback). A refused value is a TypeError listing
// the signature; an int beyond int64 is ValueError("Overflow when unpacking long long"), as
// PyTorch's. A full specialization, so it replaces pybind11's generic arithmetic caster in every
// translation unit that includes this header (all of csrc/bindings).
template <>
class type_caster<long> {
 public:
  PYBIND11_TYPE_CASTER(long, const_name("int"));

  bool load(handle src, bool /*convert*/) {
    PyObject* o = src.ptr();
    if (o == nullptr || PyBool_Check(o) || PyFloat_Check(o)) return false;
    if (!PyLong_Check(o) && !PyIndex_Check(o)) return false;
    object index = reinterpret_steal<object>(PyNumber_Index(o));
    if (!index) {
      PyErr_Clear();
      return false;
    }
    int overflow = 0;
    value = PyLong_AsLongAndOverflow(index.ptr(), &overflow);
    if (overflow != 0) throw value_error("Overflow when unpacking long long");
    if (value == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    return true;
  }

  static handle cast(long v, return_value_policy /*policy*/, handle /*parent*/) {
    return PyLong_FromLong(v);
  }
};

}  // namespace pybind11::detail

namespace ember {

// Python truthiness that raises what __bool__ raised (PyObject_IsTrue returns -1 and leaves the
// error set, which pybind11 would later report as a SystemError).
inline bool py_truthy(pybind11::handle h) {
  const int truth = PyObject_IsTrue(h.ptr());
  if (truth < 0) throw pybind11::error_already_set();
  return truth != 0;
}
namespace py = pybind11;

using TensorImplPtr = intrusive_ptr<TensorImpl>;

// The Python object for a dtype; exactly one exists per ScalarType (ember.float32 is ember.float).
struct DTypeObject {
  ScalarType type;
};
py::object dtype_object(ScalarType t);
// Parses a dtype argument: an ember.dtype, or Python's bool/int/float/complex types.
std::optional<ScalarType> try_parse_dtype(py::handle h);

// Parses a Python number (bool, int, float, complex, NumPy scalar) into a Scalar.
std::optional<Scalar> try_parse_scalar(py::handle h);

// The Python type object of ember.Tensor (set once at module init).
extern PyTypeObject* g_tensor_type;
inline bool is_tensor(py::handle h) {
  return Py_TYPE(h.ptr()) == g_tensor_type || PyObject_TypeCheck(h.ptr(), g_tensor_type);
}

// A shape given as varargs (2, 3), a sequence ((2, 3) or [2, 3]) or a torch.Size.
DimVector parse_shape(const py::args& args, const char* op);
DimVector parse_int_sequence(py::handle h, const char* op, const char* what);
// One int argument, as PyTorch parses it: a Python int or NumPy integer, an integer tensor of
// one element, or another object with __index__; bool, float and other tensors raise TypeError
// and ints beyond int64 RuntimeError, naming the op and the argument `what`.
int64_t parse_int(py::handle h, const char* op, const char* what);
// dim=None / int / sequence of ints.
std::optional<std::vector<int64_t>> parse_dims(py::handle h, const char* op);

// An operand that may be a Tensor or a Python number (wrapped as a 0-d tensor for promotion)
// or a NumPy array / nested sequence (converted to a tensor).
Tensor to_operand(py::handle h, const char* op);

Device parse_device(py::handle h, const char* op);

// Runs f with the GIL released when `work` (elements touched) is large enough for other Python
// threads to benefit; tiny ops keep the GIL because releasing it costs more than they do.
// f must not touch Python objects.
constexpr int64_t kReleaseGilWork = int64_t(1) << 16;
template <typename F>
auto with_gil_released_if(int64_t work, F&& f) -> decltype(f()) {
  if (work < kReleaseGilWork) return f();
  py::gil_scoped_release release;
  return f();
}

// A Python number as a wrapped 0-d tensor (cached for the common small values).
Tensor wrap_scalar_for_binding(const Scalar& s);

}  // namespace ember

namespace ember {
// Factories called with requires_grad=True: the flag is set when the factory's binding returns
// normally (RequiresGradRequest in factory_args.h) and consumed by the Tensor caster on the
// returned tensor.
const char*& pending_requires_grad();
void apply_pending_requires_grad(const Tensor& t);
}  // namespace ember

namespace pybind11::detail {

// Fast Tensor caster: reads the intrusive holder straight out of the pybind11 instance and creates
// new instances with a cached type_info, avoiding pybind11's per-call type-registry hash lookups
// (which cost more than the tiny ops themselves).
template <>
struct type_caster<ember::Tensor> {
 public:
  PYBIND11_TYPE_CASTER(ember::Tensor, const_name("Tensor"));

  bool load(handle src, bool) {
    if (!ember::is_tensor(src)) return false;
    auto vh = reinterpret_cast<instance*>(src.ptr())->get_value_and_holder();
    if (!vh.holder_constructed()) return false;  // a subclass whose __init__ has not run
    value = ember::Tensor(vh.holder<ember::TensorImplPtr>());
    return true;
  }
  static handle cast(const ember::Tensor& t, return_value_policy, handle) {
    if (!t.defined()) return none().release();
    // The backstop of the quantized tensor model: an op without quantized support that still
    // produced a quantized-dtype result (an empty input reaches no kernel, so no dtype check)
    // must not hand Python a tensor without parameters.
    if (ember::is_quantized(t.dtype()) && !t.impl()->quantizer()) {
      EMBER_THROW(NotImplementedError, "[", ember::dtype_name(t.dtype()),
                  "] this op does not take quantized tensors: call .dequantize() for a float "
                  "tensor first");
    }
    if (ember::pending_requires_grad()) ember::apply_pending_requires_grad(t);
    static const type_info* tinfo = get_type_info(typeid(ember::TensorImpl));
    return type_caster_generic::cast(t.impl(), return_value_policy::take_ownership, {}, tinfo,
                                     nullptr, nullptr, &t.impl_ptr());
  }
};

template <>
struct type_caster<ember::ScalarType> {
 public:
  PYBIND11_TYPE_CASTER(ember::ScalarType, const_name("dtype"));
  bool load(handle src, bool) {
    auto t = ember::try_parse_dtype(src);
    if (!t) return false;
    value = *t;
    return true;
  }
  static handle cast(ember::ScalarType t, return_value_policy, handle) {
    return ember::dtype_object(t).release();
  }
};

template <>
struct type_caster<ember::Scalar> {
 public:
  PYBIND11_TYPE_CASTER(ember::Scalar, const_name("Number"));
  bool load(handle src, bool) {
    auto s = ember::try_parse_scalar(src);
    if (!s) return false;
    value = *s;
    return true;
  }
  static handle cast(const ember::Scalar& s, return_value_policy, handle) {
    switch (s.kind()) {
      case ember::Scalar::Kind::Bool:
        return bool_(s.to_bool()).release();
      case ember::Scalar::Kind::Int:
        return int_(s.to_int64()).release();
      case ember::Scalar::Kind::Float:
        return float_(s.to_double()).release();
      default: {
        auto c = s.to_complex();
        return PyComplex_FromDoubles(c.real(), c.imag());
      }
    }
  }
};

}  // namespace pybind11::detail

namespace ember {
// Binding entry points, one per file (module.cpp calls them in order).
void init_errors(py::module_& m);
void init_forward_ad(py::module_& m);
void init_dtypes(py::module_& m);
void init_tensor_class(py::module_& m);
void init_numpy_interop(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
void init_creation(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
void init_views(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
void init_elementwise(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
void init_reductions(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
void init_indexing(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
void init_join(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
void init_join_sort(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
void init_matmul(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
void init_linalg_solve(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
// Convolutions, linear layers, pooling, padding and resampling (bindings/nn/conv.cpp).
void init_nn_conv(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
void init_nn_linear(py::module_& m);
void init_indexing_ops(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
void init_view_extras(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
void init_config(py::module_& m);
void init_deterministic(py::module_& m);  // ember.use_deterministic_algorithms
void init_optim(py::module_& m);          // ember._C._optim
void init_nn_activation(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
void init_nn_dropout(py::module_& m);
void init_nn_attention(py::module_& m);
void init_nn_transformer(py::module_& m);
void init_device_loader(py::module_& m);
void init_nn_embedding(py::module_& m);
void init_nn_rnn(py::module_& m);
void init_quantized(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);  // _C._quantized
void init_data(py::module_& m);         // _C._data (ember.data's tar shards and decoders)
void init_distributed(py::module_& m);  // _C._distributed (stores, Gloo process groups)
void init_tensor_new(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
void init_random(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
void init_random_sampling(py::module_& m);  // poisson, binomial, _standard_gamma, ...
void init_conversion(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
void init_dlpack(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
void init_nn_norm(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
void init_nn_loss(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
void init_linalg_misc(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);  // _C._linalg
void init_autograd(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
void init_autograd_function(py::module_& m);
// ember._C._linalg_spectral (ember.linalg's eigh, svd, qr, lstsq, norms, ...) and the top-level
// aliases ember.svd, ember.qr, ember.pinverse with their Tensor methods.
void init_linalg_spectral(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
// ember._C._autocast: autocast's thread-local state (bindings/autocast.cpp).
void init_autocast(py::module_& m);
// After every binding: bool arguments accept only True/False and NumPy bools (strict_bool_args).
void make_bool_arguments_strict(py::module_& m, py::handle tensor_class);
// NumPy keyword names (axis=, keepdims=, x=, ...) as PyTorch accepts them (numpy_arg_aliases.cpp).
void add_numpy_argument_aliases(py::module_& m, py::handle tensor_class);
py::dtype numpy_dtype_for(ScalarType t);
std::optional<ScalarType> scalar_type_from_numpy(const py::dtype& dt);
// A tensor sharing a NumPy array's memory (ember.from_numpy).
Tensor tensor_from_numpy(py::handle array, bool warn_if_not_writeable = true);
// A tensor sharing the memory of a DLPack producer or capsule (ember.from_dlpack).
Tensor tensor_from_dlpack(py::handle obj);
// ember.tensor's conversion of Python data (copies; dtype inferred when not given).
Tensor tensor_from_data(py::handle data, std::optional<ScalarType> dtype, Device device,
                        bool warn_on_tensor, const char* op);
py::class_<TensorImpl, TensorImplPtr>& tensor_class();
}  // namespace ember
