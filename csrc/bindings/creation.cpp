// Factories: empty / zeros / ones / full, their *_like and new_* forms, empty_strided,
// scalar_tensor, arange / range / linspace / logspace / eye, complex / polar.
#include "api/conversion.h"
#include "api/range_factories.h"
#include "api/views.h"
#include "bindings/factory_args.h"
#include "bindings/fastcall.h"
#include "bindings/op_observer.h"

namespace ember {

namespace {

// Varargs or one sequence for the size (zeros(2, 3) / zeros((2, 3)) / zeros(size=(2, 3))).
DimVector factory_shape(const py::args& args, const FactoryKwargs& f, const char* op) {
  if (f.size) {
    if (args.size() > 0) {
      throw py::type_error(str_cat(op, "() got multiple values for argument 'size'"));
    }
    return parse_int_sequence(f.size, op, "size");
  }
  if (args.size() == 0) {
    throw py::type_error(str_cat(op, "() missing 1 required positional arguments: \"size\""));
  }
  return parse_shape(args, op);
}

// Options for *_like / new_*: dtype and device default to the source tensor's.
TensorOptions like_options(const Tensor& t, py::handle dtype, py::handle device, const char* op) {
  TensorOptions o = parse_options(dtype, device, op);
  if (o.dtype == ScalarType::Undefined) o.dtype = t.dtype();
  if (device.is_none()) o.device = t.device();
  return o;
}

Tensor make_empty(IntArrayRef s, TensorOptions o) {
  return empty(s, o);
}
Tensor make_zeros(IntArrayRef s, TensorOptions o) {
  return zeros(s, o);
}
Tensor make_ones(IntArrayRef s, TensorOptions o) {
  return ones(s, o);
}

// ember.empty / zeros / ones are hand-written (METH_FASTCALL): zeros(10) is called in tight loops,
// and pybind11's generic dispatcher costs several hundred ns per call, more than making a small
// tensor (see fastcall.h, docs/design/per-op-overhead.md). A size given as plain ints is made
// directly; any other call (a sequence, keywords) goes to the general pybind11 function, made by
// def_sized_factory and attached to no name.
using MakeFn = Tensor (*)(IntArrayRef, TensorOptions);

template <PyObject** General, MakeFn Make>
PyObject* fast_factory(PyObject* module, PyObject* const* args, Py_ssize_t nargs,
                       PyObject* kwnames) {
  return fastcall::guarded([&]() -> PyObject* {
    DimVector shape;
    if (!observer::installed() && !kwnames && nargs > 0 && fastcall::int_args(args, nargs, shape)) {
      return fastcall::wrap(Make(shape, TensorOptions()));
    }
    return PyObject_Vectorcall(*General, args, nargs, kwnames);
  });
}

PyObject* g_empty_general = nullptr;
PyObject* g_zeros_general = nullptr;
PyObject* g_ones_general = nullptr;

PyMethodDef g_empty_def = {"empty",
                           fastcall::as_cfunction(fast_factory<&g_empty_general, make_empty>),
                           METH_FASTCALL | METH_KEYWORDS, "An uninitialised tensor."};
PyMethodDef g_zeros_def = {"zeros",
                           fastcall::as_cfunction(fast_factory<&g_zeros_general, make_zeros>),
                           METH_FASTCALL | METH_KEYWORDS, "A tensor filled with zeros."};
PyMethodDef g_ones_def = {"ones", fastcall::as_cfunction(fast_factory<&g_ones_general, make_ones>),
                          METH_FASTCALL | METH_KEYWORDS, "A tensor filled with ones."};

// ember.<def.ml_name>(*size, dtype=None, device=None, ...): the general pybind11 function is made
// here as the fallback (*general) of the hand-written entry point `def`, then `def` is bound.
void def_sized_factory(py::module_& m, PyMethodDef& def, PyObject** general, MakeFn make) {
  const char* name = def.ml_name;
  *general = fastcall::keep_fallback(py::cpp_function(
      [name, make](py::args args, py::kwargs kw) {
        FactoryKwargs f = parse_factory_kwargs(kw, name);
        RequiresGradRequest requires_grad_request(f.requires_grad, name);
        DimVector shape = factory_shape(args, f, name);
        TensorOptions o = factory_options(f.dtype, f.device, f.out, name);
        return finish_factory(make(shape, o), f.out, name);
      },
      py::name(name), py::scope(m), py::sibling(py::getattr(m, name, py::none()))));
  fastcall::add_function(m, def);
}

// Scalar start/end/steps for linspace and logspace: numbers or 0-d tensors.
Scalar spaced_endpoint(py::handle h, const char* op, const char* name, py::handle other) {
  if (is_tensor(h) && h.cast<Tensor>().dim() != 0) {
    const int64_t other_dim = is_tensor(other) ? other.cast<Tensor>().dim() : 0;
    const bool is_start = std::string(name) == "start";
    EMBER_THROW(Error, "[", op,
                "] linspace only supports 0-dimensional start and end tensors, "
                "but got start with ",
                is_start ? h.cast<Tensor>().dim() : other_dim, " dimension(s) and end with ",
                is_start ? other_dim : h.cast<Tensor>().dim(), " dimension(s).");
  }
  return parse_number(h, op, name);
}

}  // namespace

void init_creation(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  def_sized_factory(m, g_empty_def, &g_empty_general, &make_empty);
  def_sized_factory(m, g_zeros_def, &g_zeros_general, &make_zeros);
  def_sized_factory(m, g_ones_def, &g_ones_general, &make_ones);

  m.def(
      "full",
      [](py::object size, py::object fill_value, py::object out, py::object dtype,
         py::object device, py::object requires_grad, py::object layout, py::object) {
        check_layout(layout, "full");
        RequiresGradRequest requires_grad_request(requires_grad, "full");
        if (!PySequence_Check(size.ptr())) {
          throw py::type_error(
              str_cat("full(): argument 'size' (position 1) must be tuple of "
                      "ints, not ",
                      Py_TYPE(size.ptr())->tp_name));
        }
        DimVector shape = parse_int_sequence(size, "full", "size");
        const Scalar value = parse_number(fill_value, "full", "fill_value");
        TensorOptions o = factory_options(dtype, device, out, "full");
        return finish_factory(full(shape, value, o), out, "full");
      },
      py::arg("size"), py::arg("fill_value"), py::kw_only(), py::arg("out") = py::none(),
      py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false, py::arg("layout") = py::none(),
      py::arg("pin_memory") = false);

  m.def(
      "empty_strided",
      [](py::object size, py::object stride, py::object dtype, py::object device,
         py::object requires_grad, py::object layout, py::object) {
        check_layout(layout, "empty_strided");
        RequiresGradRequest requires_grad_request(requires_grad, "empty_strided");
        return empty_strided(parse_int_sequence(size, "empty_strided", "size"),
                             parse_int_sequence(stride, "empty_strided", "stride"),
                             parse_options(dtype, device, "empty_strided"));
      },
      py::arg("size"), py::arg("stride"), py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false,
      py::arg("layout") = py::none(), py::arg("pin_memory") = false);

  m.def(
      "scalar_tensor",
      [](const Scalar& s, py::object dtype, py::object device, py::object requires_grad,
         py::object layout, py::object) {
        check_layout(layout, "scalar_tensor");
        RequiresGradRequest requires_grad_request(requires_grad, "scalar_tensor");
        TensorOptions o = parse_options(dtype, device, "scalar_tensor");
        return full({}, s, TensorOptions(o.dtype_or(default_dtype()), o.device));
      },
      py::arg("s"), py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false, py::arg("layout") = py::none(),
      py::arg("pin_memory") = false);

  // *_like: dtype and device default to the input's; memory_format=preserve_format keeps a
  // dense input's strides.
  auto def_like = [&](const char* name, Tensor (*fill)(Tensor&)) {
    m.def(
        name,
        [name, fill](const Tensor& t, py::object dtype, py::object device, py::object requires_grad,
                     py::object layout, py::object memory_format, py::object) {
          check_layout(layout, name);
          RequiresGradRequest requires_grad_request(requires_grad, name);
          Tensor out = native::empty_like_as(t, like_options(t, dtype, device, name),
                                             parse_memory_format(memory_format, name));
          return fill ? fill(out) : out;
        },
        py::arg("input"), py::kw_only(), py::arg("dtype") = py::none(),
        py::arg("device") = py::none(), py::arg("requires_grad") = false,
        py::arg("layout") = py::none(), py::arg("memory_format") = py::none(),
        py::arg("pin_memory") = false);
  };
  def_like("empty_like", nullptr);
  def_like("zeros_like", [](Tensor& t) { return zero_(t); });
  def_like("ones_like", [](Tensor& t) { return fill_(t, Scalar(int64_t(1))); });
  m.def(
      "full_like",
      [](const Tensor& t, py::object fill_value, py::object dtype, py::object device,
         py::object requires_grad, py::object layout, py::object memory_format, py::object) {
        check_layout(layout, "full_like");
        RequiresGradRequest requires_grad_request(requires_grad, "full_like");
        const Scalar v = parse_number(fill_value, "full_like", "fill_value");
        Tensor out = native::empty_like_as(t, like_options(t, dtype, device, "full_like"),
                                           parse_memory_format(memory_format, "full_like"));
        return fill_(out, v);
      },
      py::arg("input"), py::arg("fill_value"), py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false,
      py::arg("layout") = py::none(), py::arg("memory_format") = py::none(),
      py::arg("pin_memory") = false);

  // Tensor.new_empty / new_zeros / new_ones: dtype and device default to self's.
  auto def_new = [&](const char* name, Tensor (*make)(IntArrayRef, TensorOptions)) {
    cls.def(name, [name, make](const Tensor& self, py::args size, py::kwargs kw) {
      FactoryKwargs f = parse_factory_kwargs(kw, name);
      RequiresGradRequest requires_grad_request(f.requires_grad, name);
      return make(factory_shape(size, f, name), like_options(self, f.dtype, f.device, name));
    });
  };
  def_new("new_empty", &make_empty);
  def_new("new_zeros", &make_zeros);
  def_new("new_ones", &make_ones);
  cls.def(
      "new_full",
      [](const Tensor& self, py::object size, py::object fill_value, py::object dtype,
         py::object device, py::object requires_grad, py::object layout, py::object) {
        check_layout(layout, "new_full");
        RequiresGradRequest requires_grad_request(requires_grad, "new_full");
        const Scalar v = parse_number(fill_value, "new_full", "fill_value");
        return full(parse_int_sequence(size, "new_full", "size"), v,
                    like_options(self, dtype, device, "new_full"));
      },
      py::arg("size"), py::arg("fill_value"), py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false,
      py::arg("layout") = py::none(), py::arg("pin_memory") = false);
  cls.def(
      "new_empty_strided",
      [](const Tensor& self, py::object size, py::object stride, py::object dtype,
         py::object device, py::object requires_grad, py::object layout, py::object) {
        check_layout(layout, "new_empty_strided");
        RequiresGradRequest requires_grad_request(requires_grad, "new_empty_strided");
        return empty_strided(parse_int_sequence(size, "new_empty_strided", "size"),
                             parse_int_sequence(stride, "new_empty_strided", "stride"),
                             like_options(self, dtype, device, "new_empty_strided"));
      },
      py::arg("size"), py::arg("stride"), py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false,
      py::arg("layout") = py::none(), py::arg("pin_memory") = false);

  cls.def(
      "fill_",
      [](py::object self, py::object v) {
        Tensor t = self.cast<Tensor>();
        fill_(t, parse_number(v, "fill_", "value"));
        return self;
      },
      py::arg("value"));
  cls.def("zero_", [](py::object self) {
    Tensor t = self.cast<Tensor>();
    zero_(t);
    return self;
  });

  // arange(end) / arange(start, end) / arange(start, end, step), numbers or 0-d tensors.
  auto def_range = [&](const char* name, bool inclusive) {
    m.def(name, [name, inclusive](py::args args, py::kwargs kw) {
      FactoryKwargs f = parse_factory_kwargs(kw, name, {"start", "end", "step"});
      RequiresGradRequest requires_grad_request(f.requires_grad, name);
      std::vector<py::object> pos;
      for (py::handle a : args) pos.push_back(py::reinterpret_borrow<py::object>(a));
      py::object start, end, step;
      if (f.rest.contains("start")) start = f.rest["start"];
      if (f.rest.contains("end")) end = f.rest["end"];
      if (f.rest.contains("step")) step = f.rest["step"];
      if (pos.size() > 3) {
        throw py::type_error(
            str_cat(name, "() takes at most 3 positional arguments (", pos.size(), " given)"));
      }
      if (pos.size() == 1 && !start && !inclusive) {
        end = pos[0];  // arange(end)
      } else {
        const char* names[] = {"start", "end", "step"};
        py::object* slots[] = {&start, &end, &step};
        for (size_t i = 0; i < pos.size(); ++i) {
          if (*slots[i]) {
            throw py::type_error(
                str_cat(name, "() got multiple values for argument '", names[i], "'"));
          }
          *slots[i] = pos[i];
        }
      }
      if (!end) {
        throw py::type_error(str_cat(name, "() missing required argument 'end'"));
      }
      if (!start && inclusive) {
        throw py::type_error(str_cat(name, "() missing required argument 'start'"));
      }
      const Scalar s = start ? parse_number(start, name, "start") : Scalar(int64_t(0));
      const Scalar e = parse_number(end, name, "end");
      const Scalar st = step ? parse_number(step, name, "step") : Scalar(int64_t(1));
      TensorOptions o = factory_options(f.dtype, f.device, f.out, name);
      if (inclusive) {
        PyErr_WarnEx(PyExc_UserWarning,
                     "ember.range is deprecated and will be removed in a future release because "
                     "its behavior is inconsistent with Python's range builtin. Instead, use "
                     "ember.arange, which produces values in [start, end).",
                     1);
      }
      Tensor r = inclusive ? range(s, e, st, o) : arange(s, e, st, o);
      return finish_factory(r, f.out, name);
    });
  };
  def_range("arange", false);
  def_range("range", true);

  m.def(
      "linspace",
      [](py::object start, py::object end, py::object steps, py::object out, py::object dtype,
         py::object device, py::object requires_grad, py::object layout, py::object) {
        check_layout(layout, "linspace");
        RequiresGradRequest requires_grad_request(requires_grad, "linspace");
        const Scalar s = spaced_endpoint(start, "linspace", "start", end);
        const Scalar e = spaced_endpoint(end, "linspace", "end", start);
        const int64_t n = parse_int(steps, "linspace", "steps");
        TensorOptions o = factory_options(dtype, device, out, "linspace");
        return finish_factory(linspace(s, e, n, o), out, "linspace");
      },
      py::arg("start"), py::arg("end"), py::arg("steps"), py::kw_only(),
      py::arg("out") = py::none(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false, py::arg("layout") = py::none(),
      py::arg("pin_memory") = false);
  m.def(
      "logspace",
      [](py::object start, py::object end, py::object steps, double base, py::object out,
         py::object dtype, py::object device, py::object requires_grad, py::object layout,
         py::object) {
        check_layout(layout, "logspace");
        RequiresGradRequest requires_grad_request(requires_grad, "logspace");
        const Scalar s = spaced_endpoint(start, "logspace", "start", end);
        const Scalar e = spaced_endpoint(end, "logspace", "end", start);
        const int64_t n = parse_int(steps, "logspace", "steps");
        TensorOptions o = factory_options(dtype, device, out, "logspace");
        return finish_factory(logspace(s, e, n, base, o), out, "logspace");
      },
      py::arg("start"), py::arg("end"), py::arg("steps"), py::arg("base") = 10.0, py::kw_only(),
      py::arg("out") = py::none(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false, py::arg("layout") = py::none(),
      py::arg("pin_memory") = false);

  m.def(
      "eye",
      [](py::object n, py::object m_cols, py::object out, py::object dtype, py::object device,
         py::object requires_grad, py::object layout, py::object) {
        check_layout(layout, "eye");
        RequiresGradRequest requires_grad_request(requires_grad, "eye");
        const int64_t rows = parse_int(n, "eye", "n");
        const int64_t cols = m_cols.is_none() ? rows : parse_int(m_cols, "eye", "m");
        TensorOptions o = factory_options(dtype, device, out, "eye");
        return finish_factory(eye(rows, cols, o), out, "eye");
      },
      py::arg("n"), py::arg("m") = py::none(), py::kw_only(), py::arg("out") = py::none(),
      py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false, py::arg("layout") = py::none(),
      py::arg("pin_memory") = false);

  m.def(
      "complex",
      [](const Tensor& real, const Tensor& imag, py::object out) {
        return complex(real, imag, out.is_none() ? Tensor() : out.cast<Tensor>());
      },
      py::arg("real"), py::arg("imag"), py::kw_only(), py::arg("out") = py::none());
  m.def(
      "polar",
      [](const Tensor& abs, const Tensor& angle, py::object out) {
        return polar(abs, angle, out.is_none() ? Tensor() : out.cast<Tensor>());
      },
      py::arg("abs"), py::arg("angle"), py::kw_only(), py::arg("out") = py::none());
}

}  // namespace ember
