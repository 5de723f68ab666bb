// ember.empty / zeros / ones / full and their *_like and new_* forms.
#include "bindings/pybind_ember.h"
#include "ops/creation.h"
#include "ops/views.h"

namespace ember {

namespace {

TensorOptions parse_options(py::handle dtype, py::handle device, const char* op) {
  TensorOptions o;
  if (!dtype.is_none()) {
    auto t = try_parse_dtype(dtype);
    if (!t) {
      throw py::type_error(str_cat("[", op, "] dtype must be an ember.dtype, but got ",
                                   Py_TYPE(dtype.ptr())->tp_name));
    }
    o.dtype = *t;
  }
  o.device = parse_device(device, op);
  check_device_available(o.device, op);
  return o;
}

// Applies out= for factory functions: the result is written into out (resized).
py::object finish_factory(const Tensor& result, py::handle out) {
  if (out.is_none()) return py::cast(result);
  Tensor o = out.cast<Tensor>();
  resize_output(o, result.sizes(), "out");
  copy_(o, result);
  return py::reinterpret_borrow<py::object>(out);
}

}  // namespace

void init_creation(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  // Factories accept varargs or one sequence for the size, as torch.zeros(2, 3) / zeros((2, 3)).
  auto def_factory = [&](const char* name, auto make) {
    m.def(name, [name, make](py::args size, py::kwargs kw) {
      py::object dtype = py::none(), device = py::none(), out = py::none();
      if (kw) {
        for (auto item : kw) {
          std::string key = item.first.cast<std::string>();
          if (key == "dtype") dtype = py::reinterpret_borrow<py::object>(item.second);
          else if (key == "device") device = py::reinterpret_borrow<py::object>(item.second);
          else if (key == "out") out = py::reinterpret_borrow<py::object>(item.second);
          else if (key == "size") size = py::make_tuple(item.second);
          else if (key != "requires_grad" && key != "layout" && key != "pin_memory" &&
                   key != "memory_format") {
            throw py::type_error(str_cat(name, "() got an unexpected keyword argument '", key, "'"));
          }
        }
      }
      DimVector shape = parse_shape(size, name);
      return finish_factory(make(shape, parse_options(dtype, device, name)), out);
    });
  };
  def_factory("empty", [](const DimVector& s, TensorOptions o) { return empty(s, o); });
  def_factory("zeros", [](const DimVector& s, TensorOptions o) { return zeros(s, o); });
  def_factory("ones", [](const DimVector& s, TensorOptions o) { return ones(s, o); });

  m.def(
      "full",
      [](py::object size, const Scalar& value, py::object out, py::object dtype, py::object device,
         py::object, py::object) {
        DimVector shape = parse_int_sequence(size, "full", "size");
        return finish_factory(full(shape, value, parse_options(dtype, device, "full")), out);
      },
      py::arg("size"), py::arg("fill_value"), py::kw_only(), py::arg("out") = py::none(),
      py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = py::none(), py::arg("layout") = py::none());

  auto like_opts = [](const Tensor& t, py::object dtype, py::object device, const char* op) {
    TensorOptions o = parse_options(dtype, device, op);
    if (o.dtype == ScalarType::Undefined) o.dtype = t.dtype();
    if (device.is_none()) o.device = t.device();
    return o;
  };
  auto def_like = [&](const char* name, auto make) {
    m.def(
        name,
        [name, make, like_opts](const Tensor& t, py::object dtype, py::object device, py::object,
                                py::object, py::object) {
          return make(t, like_opts(t, dtype, device, name));
        },
        py::arg("input"), py::kw_only(), py::arg("dtype") = py::none(),
        py::arg("device") = py::none(), py::arg("requires_grad") = py::none(),
        py::arg("layout") = py::none(), py::arg("memory_format") = py::none());
  };
  def_like("empty_like", [](const Tensor& t, TensorOptions o) { return empty(t.sizes(), o); });
  def_like("zeros_like", [](const Tensor& t, TensorOptions o) { return zeros(t.sizes(), o); });
  def_like("ones_like", [](const Tensor& t, TensorOptions o) { return ones(t.sizes(), o); });
  m.def(
      "full_like",
      [like_opts](const Tensor& t, const Scalar& v, py::object dtype, py::object device,
                  py::object, py::object, py::object) {
        return full(t.sizes(), v, like_opts(t, dtype, device, "full_like"));
      },
      py::arg("input"), py::arg("fill_value"), py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = py::none(),
      py::arg("layout") = py::none(), py::arg("memory_format") = py::none());

  // Tensor.new_empty / new_zeros / new_ones / new_full: dtype and device default to self's.
  auto def_new = [&](const char* name, auto make) {
    cls.def(name, [name, make, like_opts](const Tensor& self, py::args size, py::kwargs kw) {
      py::object dtype = py::none(), device = py::none();
      if (kw) {
        if (kw.contains("dtype")) dtype = kw["dtype"];
        if (kw.contains("device")) device = kw["device"];
        if (kw.contains("size")) size = py::make_tuple(kw["size"]);
      }
      return make(parse_shape(size, name), like_opts(self, dtype, device, name));
    });
  };
  def_new("new_empty", [](const DimVector& s, TensorOptions o) { return empty(s, o); });
  def_new("new_zeros", [](const DimVector& s, TensorOptions o) { return zeros(s, o); });
  def_new("new_ones", [](const DimVector& s, TensorOptions o) { return ones(s, o); });
  cls.def(
      "new_full",
      [like_opts](const Tensor& self, py::object size, const Scalar& v, py::object dtype,
                  py::object device, py::object) {
        return full(parse_int_sequence(size, "new_full", "size"), v,
                    like_opts(self, dtype, device, "new_full"));
      },
      py::arg("size"), py::arg("fill_value"), py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = py::none());

  cls.def("fill_", [](py::object self, const Scalar& v) {
    Tensor t = self.cast<Tensor>();
    fill_(t, v);
    return self;
  });
  cls.def("zero_", [](py::object self) {
    Tensor t = self.cast<Tensor>();
    zero_(t);
    return self;
  });
}

}  // namespace ember
