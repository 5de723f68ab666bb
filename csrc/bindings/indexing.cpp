// Tensor.__getitem__ / __setitem__: converts the Python index expression into TensorIndex items
// (argument conversion only; api/indexing.cpp and the native ops apply them).
#include "api/indexing.h"
#include "api/views.h"
#include "bindings/fastcall.h"
#include "bindings/op_observer.h"
#include "bindings/pybind_ember.h"
#include "core/factory.h"

namespace ember {

namespace {

// A flat list of Python ints (or of bools) becomes a tensor without going through ember.tensor;
// anything else (nested lists, ranges, mixed types) goes through it.
Tensor sequence_to_index_tensor(py::handle seq_obj) {
  PyObject* seq = seq_obj.ptr();
  if (PyList_Check(seq) || PyTuple_Check(seq)) {
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject** items = PySequence_Fast_ITEMS(seq);
    bool all_int = true, all_bool = true;
    for (Py_ssize_t i = 0; i < n; ++i) {
      all_bool = all_bool && PyBool_Check(items[i]);
      all_int = all_int && PyLong_Check(items[i]) && !PyBool_Check(items[i]);
    }
    if (n == 0 || all_int) {  // an empty list indexes as int64, as in PyTorch
      Tensor t = empty_tensor({static_cast<int64_t>(n)}, ScalarType::Int64, Device(), "index");
      int64_t* p = t.data<int64_t>();
      for (Py_ssize_t i = 0; i < n; ++i) {
        int overflow = 0;
        p[i] = PyLong_AsLongLongAndOverflow(items[i], &overflow);
        if (overflow != 0) {
          throw py::index_error("[index] Python int too large to convert to int64 in index");
        }
      }
      return t;
    }
    if (all_bool) {
      Tensor t = empty_tensor({static_cast<int64_t>(n)}, ScalarType::Bool, Device(), "index");
      bool* p = t.data<bool>();
      for (Py_ssize_t i = 0; i < n; ++i) p[i] = items[i] == Py_True;
      return t;
    }
    return py::module_::import("ember").attr("tensor")(seq_obj).cast<Tensor>();
  }
  return py::module_::import("ember")
      .attr("tensor")(py::list(py::reinterpret_borrow<py::object>(seq_obj)))
      .cast<Tensor>();
}

[[noreturn]] void invalid_index(py::handle h) {
  throw py::index_error(
      str_cat("[index] only integers, slices (`:`), ellipsis (`...`), None and "
              "long or byte Variables are valid indices (got ",
              Py_TYPE(h.ptr())->tp_name, ")"));
}

TensorIndex to_tensor_index(py::handle h) {
  PyObject* o = h.ptr();
  if (is_tensor(h)) return TensorIndex::tensor_index(h.cast<Tensor>());
  if (o == Py_None) return TensorIndex::none();
  if (o == Py_Ellipsis) return TensorIndex::ellipsis();
  if (PyBool_Check(o)) return TensorIndex::boolean(o == Py_True);
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow != 0) throw py::index_error("[index] Python int too large to convert to int64");
    return TensorIndex::integer_index(v);
  }
  if (PySlice_Check(o)) {
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(o, &start, &stop, &step) < 0) throw py::error_already_set();
    auto* s = reinterpret_cast<PySliceObject*>(o);
    std::optional<int64_t> b, e;
    if (s->start != Py_None) b = start;
    if (s->stop != Py_None) e = stop;
    return TensorIndex::slice(b, e, step);
  }
  if (py::isinstance<py::array>(h)) {
    // A 0-d array indexes like the scalar it holds (np.array(1) selects, as in PyTorch).
    if (py::reinterpret_borrow<py::array>(h).ndim() == 0) return to_tensor_index(h.attr("item")());
    return TensorIndex::tensor_index(to_operand(h, "index"));
  }
  if (PyFloat_Check(o) || PyComplex_Check(o)) invalid_index(h);
  if (auto s = try_parse_scalar(h)) {  // NumPy scalars
    if (s->is_bool()) return TensorIndex::boolean(s->to_bool());
    if (s->is_integral()) return TensorIndex::integer_index(s->to_int64());
    invalid_index(h);
  }
  if (PyIndex_Check(o)) {
    py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(o));
    if (!i) throw py::error_already_set();
    return TensorIndex::integer_index(i.cast<int64_t>());
  }
  if (PySequence_Check(o) && !PyUnicode_Check(o) && !PyBytes_Check(o)) {
    return TensorIndex::tensor_index(sequence_to_index_tensor(h));
  }
  invalid_index(h);
}

// PyTorch's (and NumPy's old) rule for a non-tuple sequence index: it is a tuple of indices
// when short and holding a tensor, sequence, slice, Ellipsis or None; otherwise one array index.
bool treat_sequence_as_tuple(py::handle index) {
  PyObject* o = index.ptr();
  if (PyTuple_Check(o)) return true;
  if (is_tensor(index) || py::isinstance<py::array>(index)) return false;
  if (!PySequence_Check(o) || PyUnicode_Check(o) || PyBytes_Check(o)) return false;
  const Py_ssize_t n = PySequence_Size(o);
  if (n < 0) {
    PyErr_Clear();
    return false;
  }
  if (n >= 32) return false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    py::object item = py::reinterpret_steal<py::object>(PySequence_GetItem(o, i));
    if (!item) {
      PyErr_Clear();
      return false;
    }
    PyObject* p = item.ptr();
    if (is_tensor(item) || PySequence_Check(p) || PySlice_Check(p) || p == Py_Ellipsis ||
        p == Py_None) {
      return true;
    }
  }
  return false;
}

std::vector<TensorIndex> parse_index(py::handle index) {
  std::vector<TensorIndex> out;
  if (treat_sequence_as_tuple(index)) {
    py::sequence seq = py::reinterpret_borrow<py::sequence>(index);
    out.reserve(seq.size());
    for (py::handle item : seq) out.push_back(to_tensor_index(item));
  } else {
    out.push_back(to_tensor_index(index));
  }
  return out;
}

bool has_tensor_index(const std::vector<TensorIndex>& index) {
  for (const TensorIndex& i : index) {
    if (i.kind == TensorIndex::Kind::Tensor) return true;
  }
  return false;
}

// mp_subscript: the hand-written form of the __getitem__ binding. `x[3]` through __getitem__
// would cost pybind11's generic dispatch (several hundred ns, more than the select itself) plus
// CPython's generic slot lookup, so the type's mp_subscript takes an int index of a tensor with
// dimensions directly and gives every other index to the pybind11 __getitem__ (see fastcall.h,
// docs/design/per-op-overhead.md).
PyObject* fast_subscript(PyObject* self, PyObject* index) {
  return fastcall::guarded([&]() -> PyObject* {
    Tensor t;
    // While observed (observer.h), every index takes the observed __getitem__.
    if (!observer::installed() && PyLong_CheckExact(index) && fastcall::unwrap(self, t)) {
      int overflow = 0;
      long long i = PyLong_AsLongLongAndOverflow(index, &overflow);
      if (!overflow && t.dim() > 0) {
        int64_t size = t.size(0);
        EMBER_CHECK_T(IndexError, i >= -size && i < size, "[index] index ", i,
                      " is out of bounds for dimension 0 with size ", size);
        return fastcall::wrap(select(t, 0, i));
      }
    }
    return fastcall::call_dunder(self, "__getitem__", index);
  });
}

}  // namespace

void init_indexing(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  cls.def("__getitem__", [](const Tensor& self, py::handle index) -> Tensor {
    std::vector<TensorIndex> idx = parse_index(index);
    if (!has_tensor_index(idx)) return getitem(self, idx);  // views only: cheap
    py::gil_scoped_release no_gil;
    return getitem(self, idx);
  });
  // The fast form of the __getitem__ binding just above (fast_subscript). After it: assigning
  // __getitem__ on the type resets mp_subscript to CPython's generic slot.
  reinterpret_cast<PyHeapTypeObject*>(cls.ptr())->as_mapping.mp_subscript = fast_subscript;
  cls.def("__setitem__", [](const Tensor& self, py::handle index, py::handle value) {
    std::vector<TensorIndex> idx = parse_index(index);
    if (!is_tensor(value)) {
      if (auto s = try_parse_scalar(value)) {
        py::gil_scoped_release no_gil;
        setitem(self, idx, *s);
        return;
      }
    }
    if (value.is_none() || PyUnicode_Check(value.ptr())) {
      throw py::type_error(str_cat("[index_put_] can't assign a ", Py_TYPE(value.ptr())->tp_name,
                                   " to a ember.", dtype_name(self.dtype()), " tensor"));
    }
    Tensor v = to_operand(value, "index_put_");
    py::gil_scoped_release no_gil;
    setitem(self, idx, v);
  });
}

}  // namespace ember
