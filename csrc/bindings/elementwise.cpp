// Elementwise ops: functions, methods, in-place forms and operators.
#include "api/elementwise.h"
#include "api/creation.h"
#include "bindings/elementwise_bindings.h"
#include "bindings/fastcall.h"
#include "bindings/op_observer.h"

namespace ember {

namespace {

// The operators + - * / (alpha = 1 for add / sub).
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

// --- Number slots: the hand-written form of the operator bindings -----------------------------
// `a + b` through the __add__ / __radd__ bindings would cost pybind11's generic dispatch (several
// hundred ns, more than a small add) plus CPython's generic slot lookup, so the type's number
// slots (nb_add, nb_inplace_add, ...) are set to the functions below, which take the common
// operands (Tensors and Python numbers) directly and give every other operand to those same
// pybind11 dunders, called as Python's operator protocol would (see fastcall.h and
// docs/design/per-op-overhead.md).

// Operand of an arithmetic operator: a Tensor or a Python number. Anything else goes to the
// pybind11 dunders (arrays, sequences) or yields NotImplemented.
enum class Operand { kOk, kSlow, kNotImplemented };
Operand operand(PyObject* o, Tensor& out) {
  if (fastcall::unwrap(o, out)) return Operand::kOk;
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

struct Dunders {
  const char* op;
  const char* rop;
  const char* iop;
};
constexpr Dunders kAdd{"__add__", "__radd__", "__iadd__"};
constexpr Dunders kSub{"__sub__", "__rsub__", "__isub__"};
constexpr Dunders kMul{"__mul__", "__rmul__", "__imul__"};
constexpr Dunders kDiv{"__truediv__", "__rtruediv__", "__itruediv__"};

// Operands the slot does not take: the pybind11 __op__ of a, else __rop__ of b.
PyObject* binary_fallback(PyObject* a, PyObject* b, const char* dunder, const char* rdunder) {
  if (is_tensor(a)) {
    PyObject* r = fastcall::call_dunder(a, dunder, b);
    if (r != Py_NotImplemented || !is_tensor(b)) return r;
    Py_DECREF(r);
  }
  return fastcall::call_dunder(b, rdunder, a);
}

template <BinaryOp Op, const Dunders* D>
PyObject* fast_binary(PyObject* a, PyObject* b) {
  return fastcall::guarded([&]() -> PyObject* {
    Tensor x, y;
    // While observed (observer.h), the dunders (observed pybind11 methods) take every call.
    if (observer::installed()) return binary_fallback(a, b, D->op, D->rop);
    Operand ra = operand(a, x), rb = operand(b, y);
    if (ra == Operand::kOk && rb == Operand::kOk) {
      int64_t work = x.numel() > y.numel() ? x.numel() : y.numel();
      return fastcall::wrap(with_gil_released_if(work, [&] { return Op(x, y, Tensor()); }));
    }
    return binary_fallback(a, b, D->op, D->rop);
  });
}

template <BinaryOp Op, const Dunders* D>
PyObject* fast_inplace(PyObject* a, PyObject* b) {
  return fastcall::guarded([&]() -> PyObject* {
    Tensor x, y;
    if (!observer::installed() && fastcall::unwrap(a, x) && operand(b, y) == Operand::kOk) {
      with_gil_released_if(x.numel(), [&] { return Op(x, y, x); });
      Py_INCREF(a);
      return a;
    }
    return fastcall::call_dunder(a, D->iop, b);
  });
}

// Sets the two number slots of one operator. Call right after binding its dunders: assigning a
// dunder on the type resets its slot to CPython's generic one (which would call the dunder).
template <BinaryOp Op, const Dunders* D>
void set_number_slots(py::handle cls, binaryfunc PyNumberMethods::*slot,
                      binaryfunc PyNumberMethods::*inplace_slot) {
  auto* type = reinterpret_cast<PyHeapTypeObject*>(cls.ptr());
  for (const char* name : {D->op, D->rop, D->iop}) {
    EMBER_CHECK(PyDict_GetItemString(type->ht_type.tp_dict, name), "[elementwise] ", name,
                " must be bound before its number slot");
  }
  type->as_number.*slot = fast_binary<Op, D>;
  type->as_number.*inplace_slot = fast_inplace<Op, D>;
}

}  // namespace

void init_elementwise(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  // add / sub take alpha; their operator forms use alpha = 1. The operators + - * / and their
  // in-place forms are bound twice in one place: the pybind11 dunders (Tensor.__add__ etc.,
  // which Python code may call by name) and, right after, the number slots, which are the
  // hand-written fast form of those same dunders (see "Number slots" above).
  def_binary(m, cls, "add", add_op, {"__add__", "__radd__", "__iadd__", false, false});
  set_number_slots<add_op, &kAdd>(cls, &PyNumberMethods::nb_add, &PyNumberMethods::nb_inplace_add);
  def_binary(m, cls, "sub", sub_op, {"__sub__", "__rsub__", "__isub__", false, false});
  set_number_slots<sub_op, &kSub>(cls, &PyNumberMethods::nb_subtract,
                                  &PyNumberMethods::nb_inplace_subtract);
  for (const char* name : {"add", "sub", "subtract"}) {
    const bool is_add = name[0] == 'a';
    m.def(
        name,
        [is_add, name](py::handle a, py::handle b, const Scalar& alpha, py::object out) {
          Tensor o = out_arg(out, name);
          Tensor x = to_operand(a, name), y = to_operand(b, name);
          return with_gil_released_if(binary_work(x, y), [&] {
            return is_add ? add(x, y, alpha, o) : sub(x, y, alpha, o);
          });
        },
        py::arg("input"), py::arg("other"), py::kw_only(), py::arg("alpha") = 1,
        py::arg("out") = py::none());
    cls.def(
        name,
        [is_add, name](const Tensor& self, py::handle b, const Scalar& alpha) {
          Tensor y = to_operand(b, name);
          return with_gil_released_if(binary_work(self, y), [&] {
            return is_add ? add(self, y, alpha) : sub(self, y, alpha);
          });
        },
        py::arg("other"), py::kw_only(), py::arg("alpha") = 1);
    cls.def((std::string(name) + "_").c_str(),
            [is_add, name](py::object self, py::handle b, const Scalar& alpha) {
              Tensor t = self.cast<Tensor>();
              Tensor y = to_operand(b, name);
              if (is_add)
                add(t, y, alpha, t);
              else
                sub(t, y, alpha, t);
              return self;
            },
            py::arg("other"), py::kw_only(), py::arg("alpha") = 1);
  }
  def_binary(m, cls, "mul", mul_op, {"__mul__", "__rmul__", "__imul__"});
  set_number_slots<mul_op, &kMul>(cls, &PyNumberMethods::nb_multiply,
                                  &PyNumberMethods::nb_inplace_multiply);
  def_binary(m, cls, "multiply", mul_op);
  def_binary(m, cls, "true_divide", div_op, {"__truediv__", "__rtruediv__", "__itruediv__"});
  set_number_slots<div_op, &kDiv>(cls, &PyNumberMethods::nb_true_divide,
                                  &PyNumberMethods::nb_inplace_true_divide);
  // div / divide (with rounding_mode) are bound in binary.cpp.
  init_unary(m, cls);
  init_unary_args(m, cls);
  init_binary(m, cls);
  init_compare(m, cls);
}

}  // namespace ember
