// Tensor.__getitem__ / __setitem__ for basic indices (int, slice, None, Ellipsis, bool).
#include "bindings/pybind_ember.h"
#include "core/shape.h"
#include "ops/creation.h"
#include "ops/views.h"

namespace ember {

namespace {

bool is_basic_index(py::handle h) {
  return PyLong_Check(h.ptr()) || PySlice_Check(h.ptr()) || h.is_none() || h.ptr() == Py_Ellipsis;
}

// Applies basic indices to t. Returns nullopt if an index is not basic.
std::optional<Tensor> apply_basic_indices(Tensor t, py::handle index) {
  std::vector<py::handle> items;
  if (PyTuple_Check(index.ptr())) {
    for (py::handle h : py::reinterpret_borrow<py::tuple>(index)) items.push_back(h);
  } else {
    items.push_back(index);
  }
  int64_t consumed = 0;  // dims of t the indices address
  bool ellipsis = false;
  for (py::handle h : items) {
    if (!is_basic_index(h)) return std::nullopt;
    if (h.ptr() == Py_Ellipsis) {
      EMBER_CHECK_T(IndexError, !ellipsis, "[index] an index can only have a single ellipsis ('...')");
      ellipsis = true;
    } else if (!h.is_none()) {
      ++consumed;
    }
  }
  EMBER_CHECK_T(IndexError, consumed <= t.dim(), "[index] too many indices for tensor of dimension ",
                t.dim());
  int64_t dim = 0;
  for (py::handle h : items) {
    if (h.ptr() == Py_Ellipsis) {
      dim += t.dim() - consumed;  // skips the dims the ellipsis stands for
      consumed = t.dim();
    } else if (h.is_none()) {
      t = unsqueeze(t, dim);
      ++dim;
    } else if (PyLong_Check(h.ptr())) {
      int64_t i = h.cast<int64_t>();
      int64_t size = t.size(dim);
      EMBER_CHECK_T(IndexError, i >= -size && i < size, "[index] index ", i,
                    " is out of bounds for dimension ", dim, " with size ", size);
      t = select(t, dim, i);
    } else {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(h.ptr(), &start, &stop, &step) < 0) throw py::error_already_set();
      EMBER_CHECK_T(ValueError, step > 0, "[index] step must be greater than zero");
      PySliceObject* s = reinterpret_cast<PySliceObject*>(h.ptr());
      std::optional<int64_t> b, e;
      if (s->start != Py_None) b = start;
      if (s->stop != Py_None) e = stop;
      t = slice(t, dim, b, e, step);
      ++dim;
    }
  }
  return t;
}

}  // namespace

void init_indexing(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  cls.def("__getitem__", [](const Tensor& self, py::handle index) -> Tensor {
    if (auto r = apply_basic_indices(self, index)) {
      // A full-tensor result (t[...], t[:]) is still a new view object, as in PyTorch.
      if (r->is_same(self)) return alias(self);
      return *r;
    }
    py::object adv = py::module_::import("ember._indexing").attr("getitem");
    return adv(self, index).cast<Tensor>();
  });
  cls.def("__setitem__", [](const Tensor& self, py::handle index, py::handle value) {
    if (auto r = apply_basic_indices(self, index)) {
      Tensor dst = *r;
      if (auto s = try_parse_scalar(value)) {
        fill_(dst, *s);
      } else {
        copy_(dst, to_operand(value, "__setitem__"));
      }
      return;
    }
    py::module_::import("ember._indexing").attr("setitem")(self, index, value);
  });
}

}  // namespace ember
