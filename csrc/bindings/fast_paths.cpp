// Fast paths for the hottest Python entry points, installed over the pybind11 bindings.
//
// pybind11's generic dispatcher costs several hundred nanoseconds per call (argument vectors,
// overload loop, caster objects) -- more than a whole add of two 10-element tensors. For the
// operations users call in tight loops, this file installs raw CPython entry points:
//   - number slots (nb_add, nb_subtract, nb_multiply, nb_true_divide and their in-place forms),
//     so `a + b` reaches C++ without any attribute lookup;
//   - mp_subscript for integer and slice indices;
//   - METH_FASTCALL methods (sum, view, dim, numel) and module functions (zeros, ones, empty)
//     that handle the common argument patterns and otherwise call the original pybind11 binding
//     (kept as the fallback), so behaviour and error messages stay those of the full binding.
// See docs/design/per-op-overhead.md.
#include <pybind11/detail/exception_translation.h>

#include "bindings/pybind_ember.h"
#include "bindings/size_object.h"
#include "core/shape.h"
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/reduce.h"
#include "api/views.h"

namespace ember {

namespace {

PyObject* wrap(const Tensor& t) {
  return py::detail::make_caster<Tensor>::cast(t, py::return_value_policy::move, {}).ptr();
}

bool unwrap(PyObject* o, Tensor& out) {
  if (!is_tensor(o)) return false;
  auto vh = reinterpret_cast<py::detail::instance*>(o)->get_value_and_holder();
  if (!vh.holder_constructed()) return false;
  out = Tensor(vh.holder<TensorImplPtr>());
  return true;
}

// Runs f, converting C++ exceptions to Python ones exactly as the pybind11 bindings do.
template <typename F>
PyObject* guarded(F&& f) {
  try {
    return f();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (py::builtin_exception& e) {
    e.set_error();
  } catch (...) {
    py::detail::try_translate_exceptions();
  }
  return nullptr;
}

// Operand of an arithmetic operator: a Tensor or a Python number. Anything else goes to the
// full binding (arrays, sequences) or yields NotImplemented.
enum class Operand { kOk, kSlow, kNotImplemented };
Operand operand(PyObject* o, Tensor& out) {
  if (unwrap(o, out)) return Operand::kOk;
  if (PyFloat_CheckExact(o)) {
    out = wrap_scalar(Scalar(PyFloat_AS_DOUBLE(o)));
    return Operand::kOk;
  }
  if (PyLong_CheckExact(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) return Operand::kSlow;
    out = wrap_scalar(Scalar(static_cast<int64_t>(v)));
    return Operand::kOk;
  }
  if (PyBool_Check(o)) {
    out = wrap_scalar(Scalar(o == Py_True));
    return Operand::kOk;
  }
  return Operand::kSlow;
}

using BinaryOp = Tensor (*)(const Tensor&, const Tensor&, const Tensor& out);
Tensor add_op(const Tensor& a, const Tensor& b, const Tensor& out) {
  return add(a, b, 1, out);
}
Tensor sub_op(const Tensor& a, const Tensor& b, const Tensor& out) {
  return sub(a, b, 1, out);
}
Tensor mul_op(const Tensor& a, const Tensor& b, const Tensor& out) {
  return mul(a, b, out);
}
Tensor div_op(const Tensor& a, const Tensor& b, const Tensor& out) {
  return div(a, b, out);
}

// Fallback for operands the fast path does not take (arrays, sequences, unknown types): the
// full pybind11 dunders, called the way Python's binary-op protocol would. (Calling the saved
// slot function would not work: CPython's generic slot checks that the type still uses it.)
PyObject* call_dunder(PyObject* self, const char* name, PyObject* other) {
  PyObject* key = PyUnicode_InternFromString(name);
  if (!key) return nullptr;
  PyObject* fn = _PyType_Lookup(Py_TYPE(self), key);  // borrowed
  Py_DECREF(key);
  if (!fn) Py_RETURN_NOTIMPLEMENTED;
  Py_INCREF(fn);
  PyObject* args[2] = {self, other};
  PyObject* r = PyObject_Vectorcall(fn, args, 2, nullptr);
  Py_DECREF(fn);
  return r;
}

PyObject* binary_fallback(PyObject* a, PyObject* b, const char* dunder, const char* rdunder) {
  if (is_tensor(a)) {
    PyObject* r = call_dunder(a, dunder, b);
    if (r != Py_NotImplemented || !is_tensor(b)) return r;
    Py_DECREF(r);
  }
  return call_dunder(b, rdunder, a);
}

struct Dunders {
  const char* op;
  const char* rop;
  const char* iop;
};
constexpr Dunders kAdd{"__add__", "__radd__", "__iadd__"};
constexpr Dunders kSub{"__sub__", "__rsub__", "__isub__"};
constexpr Dunders kMul{"__mul__", "__rmul__", "__imul__"};
constexpr Dunders kDiv{"__truediv__", "__rtruediv__", "__itruediv__"};

template <BinaryOp Op, const Dunders* D>
PyObject* fast_binary(PyObject* a, PyObject* b) {
  return guarded([&]() -> PyObject* {
    Tensor x, y;
    Operand ra = operand(a, x), rb = operand(b, y);
    if (ra == Operand::kOk && rb == Operand::kOk) {
      int64_t work = x.numel() > y.numel() ? x.numel() : y.numel();
      return wrap(with_gil_released_if(work, [&] { return Op(x, y, Tensor()); }));
    }
    return binary_fallback(a, b, D->op, D->rop);
  });
}

template <BinaryOp Op, const Dunders* D>
PyObject* fast_inplace(PyObject* a, PyObject* b) {
  return guarded([&]() -> PyObject* {
    Tensor x, y;
    if (unwrap(a, x) && operand(b, y) == Operand::kOk) {
      with_gil_released_if(x.numel(), [&] { return Op(x, y, x); });
      Py_INCREF(a);
      return a;
    }
    return call_dunder(a, D->iop, b);
  });
}

PyObject* fast_subscript(PyObject* self, PyObject* index) {
  return guarded([&]() -> PyObject* {
    Tensor t;
    if (PyLong_CheckExact(index) && unwrap(self, t)) {
      int overflow = 0;
      long long i = PyLong_AsLongLongAndOverflow(index, &overflow);
      if (!overflow && t.dim() > 0) {
        int64_t size = t.size(0);
        EMBER_CHECK_T(IndexError, i >= -size && i < size, "[index] index ", i,
                      " is out of bounds for dimension 0 with size ", size);
        return wrap(select(t, 0, i));
      }
    }
    return call_dunder(self, "__getitem__", index);
  });
}

// --- METH_FASTCALL methods with a pybind11 fallback ---------------------------------------

PyObject* g_fallback_sum = nullptr;
PyObject* g_fallback_view = nullptr;
PyObject* g_fallback_zeros = nullptr;
PyObject* g_fallback_ones = nullptr;
PyObject* g_fallback_empty = nullptr;

PyObject* call_fallback(PyObject* fn, PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                        PyObject* kwnames) {
  // Prepend self to the arguments.
  PyObject* stack[16];
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  if (nargs + nkw + 1 > 16) {
    py::tuple pargs(nargs + 1);
    Py_INCREF(self);
    PyTuple_SET_ITEM(pargs.ptr(), 0, self);
    for (Py_ssize_t i = 0; i < nargs; ++i) {
      Py_INCREF(args[i]);
      PyTuple_SET_ITEM(pargs.ptr(), i + 1, args[i]);
    }
    py::dict kw;
    for (Py_ssize_t i = 0; i < nkw; ++i) kw[PyTuple_GET_ITEM(kwnames, i)] = args[nargs + i];
    return PyObject_Call(fn, pargs.ptr(), kw.ptr());
  }
  stack[0] = self;
  for (Py_ssize_t i = 0; i < nargs + nkw; ++i) stack[i + 1] = args[i];
  return PyObject_Vectorcall(fn, stack, nargs + 1, kwnames);
}

PyObject* fast_sum(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    Tensor t;
    if (nargs == 0 && !kwnames && unwrap(self, t)) {
      return wrap(with_gil_released_if(t.numel(), [&] { return sum(t); }));
    }
    return call_fallback(g_fallback_sum, self, args, nargs, kwnames);
  });
}

// Reads positional ints into `out`; false when any argument is not a plain int.
bool int_args(PyObject* const* args, Py_ssize_t nargs, DimVector& out) {
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    if (!PyLong_CheckExact(args[i])) return false;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(args[i], &overflow);
    if (overflow) return false;
    out.push_back(v);
  }
  return true;
}

PyObject* fast_view(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    Tensor t;
    DimVector shape;
    if (!kwnames && nargs > 0 && int_args(args, nargs, shape) && unwrap(self, t)) {
      return wrap(view(t, shape));
    }
    return call_fallback(g_fallback_view, self, args, nargs, kwnames);
  });
}

PyObject* fast_dim(PyObject* self, PyObject*) {
  return guarded([&]() -> PyObject* {
    Tensor t;
    if (!unwrap(self, t)) throw py::type_error("dim() requires an ember.Tensor");
    return PyLong_FromLongLong(t.dim());
  });
}

PyObject* fast_numel(PyObject* self, PyObject*) {
  return guarded([&]() -> PyObject* {
    Tensor t;
    if (!unwrap(self, t)) throw py::type_error("numel() requires an ember.Tensor");
    return PyLong_FromLongLong(t.numel());
  });
}

template <PyObject** Fallback, Tensor (*Make)(IntArrayRef, TensorOptions)>
PyObject* fast_factory(PyObject* module, PyObject* const* args, Py_ssize_t nargs,
                       PyObject* kwnames) {
  return guarded([&]() -> PyObject* {
    DimVector shape;
    if (!kwnames && nargs > 0 && int_args(args, nargs, shape)) {
      return wrap(Make(shape, TensorOptions()));
    }
    return PyObject_Vectorcall(*Fallback, args, nargs, kwnames);
  });
}

Tensor make_zeros(IntArrayRef s, TensorOptions o) {
  return zeros(s, o);
}
Tensor make_ones(IntArrayRef s, TensorOptions o) {
  return ones(s, o);
}
Tensor make_empty(IntArrayRef s, TensorOptions o) {
  return empty(s, o);
}

PyObject* fast_shape(PyObject* self, void*) {
  return guarded([&]() -> PyObject* {
    Tensor t;
    if (!unwrap(self, t)) throw py::type_error("shape requires an ember.Tensor");
    return size_object(t.sizes()).release().ptr();
  });
}

PyMethodDef g_methods[] = {
    {"sum", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fast_sum)),
     METH_FASTCALL | METH_KEYWORDS, "Sum of elements (see ember.sum)."},
    {"view", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fast_view)),
     METH_FASTCALL | METH_KEYWORDS, "A view with a new shape, sharing storage."},
    {"dim", fast_dim, METH_NOARGS, "Number of dimensions."},
    {"numel", fast_numel, METH_NOARGS, "Number of elements."},
};

PyGetSetDef g_shape_getset = {"shape", fast_shape, nullptr, "The tensor's shape (ember.Size).",
                              nullptr};

PyMethodDef g_module_functions[] = {
    {"zeros",
     reinterpret_cast<PyCFunction>(
         reinterpret_cast<void (*)()>(fast_factory<&g_fallback_zeros, make_zeros>)),
     METH_FASTCALL | METH_KEYWORDS, "A tensor filled with zeros."},
    {"ones",
     reinterpret_cast<PyCFunction>(
         reinterpret_cast<void (*)()>(fast_factory<&g_fallback_ones, make_ones>)),
     METH_FASTCALL | METH_KEYWORDS, "A tensor filled with ones."},
    {"empty",
     reinterpret_cast<PyCFunction>(
         reinterpret_cast<void (*)()>(fast_factory<&g_fallback_empty, make_empty>)),
     METH_FASTCALL | METH_KEYWORDS, "An uninitialised tensor."},
};

}  // namespace

void init_fast_paths(py::module_& m) {
  auto* type = reinterpret_cast<PyHeapTypeObject*>(g_tensor_type);
  PyObject* dict = g_tensor_type->tp_dict;

  for (const char* name :
       {"__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__", "__rmul__",
        "__imul__", "__truediv__", "__rtruediv__", "__itruediv__", "__getitem__"}) {
    EMBER_CHECK(PyDict_GetItemString(dict, name), "[fast_paths] ", name,
                " must be bound before init_fast_paths");
  }
  type->as_number.nb_add = fast_binary<add_op, &kAdd>;
  type->as_number.nb_subtract = fast_binary<sub_op, &kSub>;
  type->as_number.nb_multiply = fast_binary<mul_op, &kMul>;
  type->as_number.nb_true_divide = fast_binary<div_op, &kDiv>;
  type->as_number.nb_inplace_add = fast_inplace<add_op, &kAdd>;
  type->as_number.nb_inplace_subtract = fast_inplace<sub_op, &kSub>;
  type->as_number.nb_inplace_multiply = fast_inplace<mul_op, &kMul>;
  type->as_number.nb_inplace_true_divide = fast_inplace<div_op, &kDiv>;
  type->as_mapping.mp_subscript = fast_subscript;

  g_fallback_sum = PyDict_GetItemString(dict, "sum");
  g_fallback_view = PyDict_GetItemString(dict, "view");
  EMBER_CHECK(g_fallback_sum && g_fallback_view, "[fast_paths] sum/view must be bound first");
  Py_INCREF(g_fallback_sum);
  Py_INCREF(g_fallback_view);
  for (PyMethodDef& def : g_methods) {
    py::object descr = py::reinterpret_steal<py::object>(PyDescr_NewMethod(g_tensor_type, &def));
    if (!descr || PyDict_SetItemString(dict, def.ml_name, descr.ptr()) < 0) {
      throw py::error_already_set();
    }
  }
  py::object getset =
      py::reinterpret_steal<py::object>(PyDescr_NewGetSet(g_tensor_type, &g_shape_getset));
  if (!getset || PyDict_SetItemString(dict, "shape", getset.ptr()) < 0) {
    throw py::error_already_set();
  }
  PyType_Modified(g_tensor_type);

  PyObject** fallbacks[] = {&g_fallback_zeros, &g_fallback_ones, &g_fallback_empty};
  for (size_t i = 0; i < 3; ++i) {
    PyMethodDef& def = g_module_functions[i];
    *fallbacks[i] = py::object(m.attr(def.ml_name)).release().ptr();
    py::object fn = py::reinterpret_steal<py::object>(PyCFunction_NewEx(&def, m.ptr(), nullptr));
    m.attr(def.ml_name) = fn;
  }
}

}  // namespace ember
