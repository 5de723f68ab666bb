// ember.Generator, the global seeding functions and the sampling ops (functions, methods and
// in-place methods), each with PyTorch's generator= keyword.
#include <cstring>

#include "api/conversion.h"
#include "api/random.h"
#include "api/views.h"
#include "bindings/factory_args.h"

namespace ember {

namespace {

// torch.manual_seed semantics: int(seed), accepted in [-2^63, 2^64); negative seeds wrap.
uint64_t parse_seed(py::handle seed) {
  PyObject* as_int = PyNumber_Long(seed.ptr());
  if (!as_int) throw py::error_already_set();
  py::object v = py::reinterpret_steal<py::object>(as_int);
  int overflow = 0;
  const long long s = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow == 0) return static_cast<uint64_t>(s);
  const unsigned long long u = PyLong_AsUnsignedLongLong(v.ptr());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    throw py::value_error("Overflow when unpacking long long: seed must be in [-2**63, 2**64)");
  }
  return u;
}

Tensor state_tensor(const Generator& g) {
  const auto bytes = g.get_state();
  Tensor t =
      empty_tensor({static_cast<int64_t>(bytes.size())}, ScalarType::UInt8, Device(), "get_state");
  std::memcpy(t.data_ptr(), bytes.data(), bytes.size());
  return t;
}

void set_state_from(Generator& g, py::handle state, const char* op) {
  if (!is_tensor(state)) {
    throw py::type_error(str_cat("[", op, "] expected an ember.uint8 tensor, but got ",
                                 Py_TYPE(state.ptr())->tp_name));
  }
  const Tensor t = contiguous(state.cast<Tensor>());
  EMBER_CHECK_T(TypeError, t.dtype() == ScalarType::UInt8, "[", op,
                "] RNG state must be an ember.uint8 tensor (torch.ByteTensor), got ",
                dtype_name(t.dtype()));
  g.set_state(static_cast<const uint8_t*>(t.data_ptr()), static_cast<size_t>(t.numel()));
}

// Runs a sampling op with the GIL released (the op touches no Python object).
template <typename F>
Tensor nogil(const F& f) {
  py::gil_scoped_release release;
  return f();
}

// The size of rand(2, 3) / rand((2, 3)) / rand(size=(2, 3)).
DimVector sized(const py::args& args, const FactoryKwargs& f, const char* op) {
  if (f.size) {
    if (args.size() > 0) {
      throw py::type_error(str_cat(op, "() got multiple values for argument 'size'"));
    }
    return parse_int_sequence(f.size, op, "size");
  }
  return parse_shape(args, op);
}

// Applies out= for a sampling factory: out's dtype is the result dtype (an explicit different
// dtype is an error), out is resized and filled in place.
template <typename Make>
py::object sample_factory(const FactoryKwargs& f, const char* op, const Make& make) {
  RequiresGradRequest requires_grad_request(f.requires_grad, op);
  TensorOptions o = factory_options(f.dtype, f.device, f.out, op);
  Generator* gen = parse_generator(f.generator, op);
  Tensor r = nogil([&] { return make(o, gen); });
  return finish_factory(r, f.out, op);
}

}  // namespace

void init_random(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  py::class_<Generator, GeneratorPtr>(m, "Generator")
      .def(py::init([](py::object device) {
             const Device d = parse_device(device, "Generator");
             check_device_available(d, "Generator");
             return make_intrusive<Generator>();
           }),
           py::arg("device") = "cpu")
      .def(
          "manual_seed",
          [](py::object self, py::handle seed) {
            self.cast<Generator&>().manual_seed(parse_seed(seed));
            return self;
          },
          py::arg("seed"))
      .def("seed", [](Generator& g) { return g.seed(); })
      .def("initial_seed", [](const Generator& g) { return g.initial_seed(); })
      .def("get_state", [](const Generator& g) { return state_tensor(g); })
      .def(
          "set_state",
          [](py::object self, py::handle state) {
            set_state_from(self.cast<Generator&>(), state, "set_state");
            return self;
          },
          py::arg("new_state"))
      .def_property_readonly("device", [](const Generator&) { return Device(); })
      .def("__repr__", [](const Generator& g) {
        return str_cat("<ember.Generator (Philox4x32-10) seed=", g.initial_seed(), ">");
      });
  m.attr("default_generator") = py::cast(default_generator());

  m.def(
      "manual_seed",
      [](py::handle seed) {
        default_generator()->manual_seed(parse_seed(seed));
        return default_generator();
      },
      py::arg("seed"));
  m.def("seed", [] { return default_generator()->seed(); });
  m.def("initial_seed", [] { return default_generator()->initial_seed(); });
  m.def("get_rng_state", [] { return state_tensor(*default_generator()); });
  m.def(
      "set_rng_state",
      [](py::handle state) { set_state_from(*default_generator(), state, "set_rng_state"); },
      py::arg("new_state"));

  // --- factories ---------------------------------------------------------------------------
  m.def("rand", [](py::args args, py::kwargs kw) {
    FactoryKwargs f = parse_factory_kwargs(kw, "rand");
    DimVector shape = sized(args, f, "rand");
    return sample_factory(f, "rand",
                          [&](TensorOptions o, Generator* g) { return rand(shape, o, g); });
  });
  m.def("randn", [](py::args args, py::kwargs kw) {
    FactoryKwargs f = parse_factory_kwargs(kw, "randn");
    DimVector shape = sized(args, f, "randn");
    return sample_factory(f, "randn",
                          [&](TensorOptions o, Generator* g) { return randn(shape, o, g); });
  });
  // randint(high, size) / randint(low, high, size), keywords low= high= size= too.
  m.def("randint", [](py::args args, py::kwargs kw) {
    const char* op = "randint";
    FactoryKwargs f = parse_factory_kwargs(kw, op, {"low", "high"});
    std::vector<py::object> pos;
    for (py::handle a : args) pos.push_back(py::reinterpret_borrow<py::object>(a));
    py::object low, high, size = f.size;
    if (f.rest.contains("low")) low = f.rest["low"];
    if (f.rest.contains("high")) high = f.rest["high"];
    if (!size && !pos.empty()) {
      size = pos.back();
      pos.pop_back();
    }
    if (pos.size() == 2) {
      low = pos[0], high = pos[1];
    } else if (pos.size() == 1) {
      (high ? low : high) = pos[0];
    } else if (!pos.empty()) {
      throw py::type_error("randint() takes at most 3 positional arguments");
    }
    if (!high || !size) {
      throw py::type_error(
          "randint() received an invalid combination of arguments: expected "
          "(int high, tuple of ints size) or (int low, int high, tuple of ints "
          "size)");
    }
    if (!PySequence_Check(size.ptr())) {
      throw py::type_error(str_cat("randint(): argument 'size' must be tuple of ints, not ",
                                   Py_TYPE(size.ptr())->tp_name));
    }
    const int64_t lo = low ? parse_int(low, op, "low") : 0;
    const int64_t hi = parse_int(high, op, "high");
    DimVector shape = parse_int_sequence(size, op, "size");
    return sample_factory(f, op, [&](TensorOptions o, Generator* g) {
      if (o.dtype == ScalarType::Undefined) o.dtype = ScalarType::Int64;
      return randint(lo, hi, shape, o, g);
    });
  });
  m.def(
      "randperm",
      [](py::handle n, py::kwargs kw) {
        FactoryKwargs f = parse_factory_kwargs(kw, "randperm");
        const int64_t count = parse_int(n, "randperm", "n");
        return sample_factory(f, "randperm",
                              [&](TensorOptions o, Generator* g) { return randperm(count, o, g); });
      },
      py::arg("n"));

  // *_like: dtype / device / layout from the input.
  auto like = [](const Tensor& t, const FactoryKwargs& f, const char* op) {
    RequiresGradRequest requires_grad_request(f.requires_grad, op);
    TensorOptions o = parse_options(f.dtype, f.device, op);
    if (o.dtype == ScalarType::Undefined) o.dtype = t.dtype();
    if (f.device.is_none()) o.device = t.device();
    return native::empty_like_as(t, o, parse_memory_format(f.memory_format, op));
  };
  m.def(
      "rand_like",
      [like](const Tensor& t, py::kwargs kw) {
        FactoryKwargs f = parse_factory_kwargs(kw, "rand_like");
        Tensor out = like(t, f, "rand_like");
        check_device_available(out.device(), "rand_like");
        EMBER_CHECK_T(NotImplementedError, out.is_floating_point() || out.is_complex(),
                      "[rand_like] not implemented for dtype ", dtype_name(out.dtype()));
        Generator* g = parse_generator(f.generator, "rand_like");
        return nogil([&] { return uniform_(out, 0.0, 1.0, g); });
      },
      py::arg("input"));
  m.def(
      "randn_like",
      [like](const Tensor& t, py::kwargs kw) {
        FactoryKwargs f = parse_factory_kwargs(kw, "randn_like");
        Tensor out = like(t, f, "randn_like");
        Generator* g = parse_generator(f.generator, "randn_like");
        return nogil([&] { return normal_(out, 0.0, 1.0, g); });
      },
      py::arg("input"));
  m.def(
      "randint_like",
      [like](const Tensor& t, py::args args, py::kwargs kw) {
        const char* op = "randint_like";
        FactoryKwargs f = parse_factory_kwargs(kw, op, {"low", "high"});
        py::object low, high;
        if (f.rest.contains("low")) low = f.rest["low"];
        if (f.rest.contains("high")) high = f.rest["high"];
        if (args.size() == 2) {
          low = args[0], high = args[1];
        } else if (args.size() == 1) {
          (high ? low : high) = args[0];
        } else if (args.size() > 2) {
          throw py::type_error("randint_like() takes at most 3 positional arguments");
        }
        if (!high) throw py::type_error("randint_like() missing required argument 'high'");
        const int64_t lo = low ? parse_int(low, op, "low") : 0;
        const int64_t hi = parse_int(high, op, "high");
        Tensor out = like(t, f, op);
        Generator* g = parse_generator(f.generator, op);
        return nogil([&] { return random_(out, lo, hi, g); });
      },
      py::arg("input"));

  // normal(mean, std) with tensor or float mean / std; normal(mean, std, size) for floats.
  m.def(
      "normal",
      [](py::handle mean, py::handle std, py::object size, py::object generator, py::object out,
         py::object dtype, py::object device, py::object requires_grad, py::object layout,
         py::object) -> py::object {
        check_layout(layout, "normal");
        const char* op = "normal";
        RequiresGradRequest requires_grad_request(requires_grad, op);
        Generator* g = parse_generator(generator, op);
        const bool mean_t = is_tensor(mean), std_t = is_tensor(std);
        Tensor r;
        if (mean_t || std_t) {
          if (!size.is_none() || !dtype.is_none()) {
            throw py::type_error("normal() with tensor mean or std takes no size or dtype");
          }
          if (mean_t && std_t) {
            const Tensor mt = mean.cast<Tensor>(), st = std.cast<Tensor>();
            r = nogil([&] { return normal(mt, st, g); });
          } else if (mean_t) {
            const Tensor mt = mean.cast<Tensor>();
            const double s = std.is_none() ? 1.0 : parse_number(std, op, "std").to_double();
            r = nogil([&] { return normal(mt, s, g); });
          } else {
            const Tensor st = std.cast<Tensor>();
            const double mu = parse_number(mean, op, "mean").to_double();
            r = nogil([&] { return normal(mu, st, g); });
          }
          if (!out.is_none()) {
            EMBER_CHECK(out.cast<Tensor>().is_floating_point(),
                        "[normal] out must be a floating "
                        "point tensor, got ",
                        dtype_name(out.cast<Tensor>().dtype()));
          }
          return finish_factory(r, out, op);
        }
        if (size.is_none()) {
          throw py::type_error(
              "normal() received an invalid combination of arguments: with "
              "float mean and std, size is required");
        }
        const double mu = parse_number(mean, op, "mean").to_double();
        const double s = parse_number(std, op, "std").to_double();
        DimVector shape = parse_int_sequence(size, op, "size");
        TensorOptions o = factory_options(dtype, device, out, op);
        r = nogil([&] { return normal(mu, s, shape, o, g); });
        return finish_factory(r, out, op);
      },
      py::arg("mean"), py::arg("std") = py::none(), py::arg("size") = py::none(), py::kw_only(),
      py::arg("generator") = py::none(), py::arg("out") = py::none(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false,
      py::arg("layout") = py::none(), py::arg("pin_memory") = false);

  auto bernoulli_fn = [](const Tensor& input, py::object p, py::object generator, py::object out) {
    Generator* g = parse_generator(generator, "bernoulli");
    Tensor r;
    if (p.is_none()) {
      r = nogil([&] { return bernoulli(input, g); });
    } else {
      const double prob = parse_number(p, "bernoulli", "p").to_double();
      r = nogil([&] { return bernoulli(input, prob, g); });
    }
    return finish_factory(r, out, "bernoulli");
  };
  m.def("bernoulli", bernoulli_fn, py::arg("input"), py::arg("p") = py::none(), py::kw_only(),
        py::arg("generator") = py::none(), py::arg("out") = py::none());
  cls.def(
      "bernoulli",
      [bernoulli_fn](const Tensor& self, py::object p, py::object generator) {
        return bernoulli_fn(self, p, generator, py::none());
      },
      py::arg("p") = py::none(), py::kw_only(), py::arg("generator") = py::none());

  auto multinomial_fn = [](const Tensor& input, py::handle num_samples, bool replacement,
                           py::object generator, py::object out) {
    const int64_t n = parse_int(num_samples, "multinomial", "num_samples");
    Generator* g = parse_generator(generator, "multinomial");
    Tensor r = nogil([&] { return multinomial(input, n, replacement, g); });
    return finish_factory(r, out, "multinomial");
  };
  m.def("multinomial", multinomial_fn, py::arg("input"), py::arg("num_samples"),
        py::arg("replacement") = false, py::kw_only(), py::arg("generator") = py::none(),
        py::arg("out") = py::none());
  cls.def(
      "multinomial",
      [multinomial_fn](const Tensor& self, py::handle num_samples, bool replacement,
                       py::object generator) {
        return multinomial_fn(self, num_samples, replacement, generator, py::none());
      },
      py::arg("num_samples"), py::arg("replacement") = false, py::kw_only(),
      py::arg("generator") = py::none());

  // --- in-place distributions ----------------------------------------------------------------
  // Each returns self (the same Python object).
  auto inplace = [](py::object self, const auto& f) {
    Tensor t = self.cast<Tensor>();
    {
      py::gil_scoped_release release;
      f(t);
    }
    return self;
  };
  cls.def(
      "uniform_",
      [inplace](py::object self, double from, double to, py::object generator) {
        Generator* g = parse_generator(generator, "uniform_");
        return inplace(self, [&](Tensor& t) { uniform_(t, from, to, g); });
      },
      py::arg("from") = 0.0, py::arg("to") = 1.0, py::kw_only(), py::arg("generator") = py::none());
  cls.def(
      "normal_",
      [inplace](py::object self, double mean, double std, py::object generator) {
        Generator* g = parse_generator(generator, "normal_");
        return inplace(self, [&](Tensor& t) { normal_(t, mean, std, g); });
      },
      py::arg("mean") = 0.0, py::arg("std") = 1.0, py::kw_only(),
      py::arg("generator") = py::none());
  // random_() / random_(to) / random_(from, to) / random_(from, None).
  cls.def("random_", [inplace](py::object self, py::args args, py::kwargs kw) {
    const char* op = "random_";
    py::object from, to, generator = py::none();
    bool to_given = false;
    if (kw) {
      for (auto item : kw) {
        const std::string key = item.first.cast<std::string>();
        if (key == "from")
          from = py::reinterpret_borrow<py::object>(item.second);
        else if (key == "to")
          to = py::reinterpret_borrow<py::object>(item.second), to_given = true;
        else if (key == "generator")
          generator = py::reinterpret_borrow<py::object>(item.second);
        else
          throw py::type_error(str_cat("random_() got an unexpected keyword argument '", key, "'"));
      }
    }
    if (args.size() == 1) {
      to = args[0], to_given = true;
    } else if (args.size() == 2) {
      from = args[0], to = args[1], to_given = true;
    } else if (args.size() > 2) {
      throw py::type_error("random_() takes at most 2 positional arguments");
    }
    std::optional<int64_t> f, t;
    if (from && !from.is_none()) f = parse_int(from, op, "from");
    if (to_given && !to.is_none()) t = parse_int(to, op, "to");
    if (to_given && to.is_none() && !f) f = 0;  // random_(None) is random_()
    Generator* g = parse_generator(generator, op);
    return inplace(self, [&](Tensor& x) { random_(x, f, t, g); });
  });
  cls.def(
      "bernoulli_",
      [inplace](py::object self, py::object p, py::object generator) {
        Generator* g = parse_generator(generator, "bernoulli_");
        if (is_tensor(p)) {
          const Tensor pt = p.cast<Tensor>();
          return inplace(self, [&](Tensor& t) { bernoulli_(t, pt, g); });
        }
        const double prob = parse_number(p, "bernoulli_", "p").to_double();
        return inplace(self, [&](Tensor& t) { bernoulli_(t, prob, g); });
      },
      py::arg("p") = 0.5, py::kw_only(), py::arg("generator") = py::none());
  cls.def(
      "exponential_",
      [inplace](py::object self, double lambd, py::object generator) {
        Generator* g = parse_generator(generator, "exponential_");
        return inplace(self, [&](Tensor& t) { exponential_(t, lambd, g); });
      },
      py::arg("lambd") = 1.0, py::kw_only(), py::arg("generator") = py::none());
  cls.def(
      "geometric_",
      [inplace](py::object self, double p, py::object generator) {
        Generator* g = parse_generator(generator, "geometric_");
        return inplace(self, [&](Tensor& t) { geometric_(t, p, g); });
      },
      py::arg("p"), py::kw_only(), py::arg("generator") = py::none());
  cls.def(
      "log_normal_",
      [inplace](py::object self, double mean, double std, py::object generator) {
        Generator* g = parse_generator(generator, "log_normal_");
        return inplace(self, [&](Tensor& t) { log_normal_(t, mean, std, g); });
      },
      py::arg("mean") = 1.0, py::arg("std") = 2.0, py::kw_only(),
      py::arg("generator") = py::none());
  cls.def(
      "cauchy_",
      [inplace](py::object self, double median, double sigma, py::object generator) {
        Generator* g = parse_generator(generator, "cauchy_");
        return inplace(self, [&](Tensor& t) { cauchy_(t, median, sigma, g); });
      },
      py::arg("median") = 0.0, py::arg("sigma") = 1.0, py::kw_only(),
      py::arg("generator") = py::none());
}

}  // namespace ember
