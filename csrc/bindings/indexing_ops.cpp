// Indexing ops as functions and Tensor methods: index_select, gather, scatter*, index_add /
// copy / fill / put, masked_*, take, take_along_dim, nonzero, argwhere. Argument conversion only.
#include "api/indexing.h"
#include "bindings/pybind_ember.h"

namespace ember {

namespace {

Tensor opt_tensor(py::handle h) {
  return h.is_none() ? Tensor() : h.cast<Tensor>();
}

// The tensor a Python value stands for as an index (tensor, or a list / array converted).
Tensor index_tensor(py::handle h, const char* op) {
  if (is_tensor(h)) return h.cast<Tensor>();
  throw py::type_error(
      str_cat("[", op, "] index must be a Tensor, but got ", Py_TYPE(h.ptr())->tp_name));
}

std::vector<Tensor> parse_index_tuple(py::handle indices, const char* op) {
  if (!PyTuple_Check(indices.ptr()) && !PyList_Check(indices.ptr())) {
    throw py::type_error(str_cat("[", op, "] indices must be a tuple of Tensors, but got ",
                                 Py_TYPE(indices.ptr())->tp_name));
  }
  std::vector<Tensor> out;
  for (py::handle h : py::reinterpret_borrow<py::sequence>(indices)) {
    if (h.is_none()) {
      out.emplace_back();  // ':' (ATen's optional tensor)
    } else {
      out.push_back(index_tensor(h, op));
    }
  }
  return out;
}

std::string parse_reduce(py::handle h) {
  return h.is_none() ? std::string() : h.cast<std::string>();
}

// scatter(dim, index, src | value, *, reduce): src may be a tensor or a Python number.
Tensor scatter_dispatch(Tensor self, int64_t dim, const Tensor& index, py::handle src,
                        py::handle value, py::handle reduce, const Tensor& out, bool inplace) {
  py::handle s = src.is_none() ? value : src;
  if (s.is_none()) throw py::type_error("[scatter] scatter() missing argument 'src' or 'value'");
  std::string red = parse_reduce(reduce);
  if (is_tensor(s)) {
    Tensor t = s.cast<Tensor>();
    py::gil_scoped_release no_gil;
    if (inplace) return scatter_(self, dim, index, t, red);
    return scatter(self, dim, index, t, red, out);
  }
  auto v = try_parse_scalar(s);
  if (!v) {
    throw py::type_error(
        str_cat("[scatter] src must be a Tensor or a number, but got ", Py_TYPE(s.ptr())->tp_name));
  }
  py::gil_scoped_release no_gil;
  if (inplace) return scatter_(self, dim, index, *v, red);
  return scatter(self, dim, index, *v, red, out);
}

// index_fill / masked_fill take a number or a 0-d tensor as value.
template <typename FScalar, typename FTensor>
Tensor with_fill_value(py::handle value, const char* op, FScalar fs, FTensor ft) {
  if (is_tensor(value)) {
    Tensor v = value.cast<Tensor>();
    py::gil_scoped_release no_gil;
    return ft(v);
  }
  auto s = try_parse_scalar(value);
  if (!s) {
    throw py::type_error(str_cat("[", op, "] value must be a number or a 0-d Tensor, but got ",
                                 Py_TYPE(value.ptr())->tp_name));
  }
  py::gil_scoped_release no_gil;
  return fs(*s);
}

py::object nonzero_result(const Tensor& self, bool as_tuple, const Tensor& out) {
  if (as_tuple) {
    EMBER_CHECK(!out.defined(), "[nonzero] nonzero(): as_tuple=True does not support out=");
    std::vector<Tensor> parts;
    {
      py::gil_scoped_release no_gil;
      parts = nonzero_tuple(self);
    }
    py::tuple t(parts.size());
    for (size_t i = 0; i < parts.size(); ++i) t[i] = py::cast(parts[i]);
    return std::move(t);
  }
  Tensor r;
  {
    py::gil_scoped_release no_gil;
    r = nonzero(self, out);
  }
  return py::cast(r);
}

}  // namespace

void init_indexing_ops(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  using py::arg;
  using Release = py::call_guard<py::gil_scoped_release>;

  // --- index_select / gather / take / take_along_dim ------------------------------------------
  m.def(
      "index_select",
      [](const Tensor& t, int64_t dim, const Tensor& index, py::object out) {
        Tensor o = opt_tensor(out);
        py::gil_scoped_release no_gil;
        return index_select(t, dim, index, o);
      },
      arg("input"), arg("dim"), arg("index"), py::kw_only(), arg("out") = py::none());
  cls.def(
      "index_select",
      [](const Tensor& t, int64_t dim, const Tensor& index) { return index_select(t, dim, index); },
      arg("dim"), arg("index"), Release());

  m.def(
      "gather",
      [](const Tensor& t, int64_t dim, const Tensor& index, bool, py::object out) {
        Tensor o = opt_tensor(out);
        py::gil_scoped_release no_gil;
        return gather(t, dim, index, o);
      },
      arg("input"), arg("dim"), arg("index"), py::kw_only(), arg("sparse_grad") = false,
      arg("out") = py::none());
  cls.def(
      "gather",
      [](const Tensor& t, int64_t dim, const Tensor& index, bool) { return gather(t, dim, index); },
      arg("dim"), arg("index"), py::kw_only(), arg("sparse_grad") = false, Release());

  m.def(
      "take",
      [](const Tensor& t, const Tensor& index, py::object out) {
        Tensor o = opt_tensor(out);
        py::gil_scoped_release no_gil;
        return take(t, index, o);
      },
      arg("input"), arg("index"), py::kw_only(), arg("out") = py::none());
  cls.def(
      "take", [](const Tensor& t, const Tensor& index) { return take(t, index); }, arg("index"),
      Release());

  auto take_along_fn = [](const Tensor& t, const Tensor& indices, std::optional<int64_t> dim,
                          py::object out) {
    Tensor o = opt_tensor(out);
    py::gil_scoped_release no_gil;
    return take_along_dim(t, indices, dim, o);
  };
  m.def("take_along_dim", take_along_fn, arg("input"), arg("indices"), arg("dim") = py::none(),
        py::kw_only(), arg("out") = py::none());
  cls.def(
      "take_along_dim",
      [](const Tensor& t, const Tensor& indices, std::optional<int64_t> dim) {
        return take_along_dim(t, indices, dim);
      },
      arg("indices"), arg("dim") = py::none(), Release());

  // --- scatter family ---------------------------------------------------------------------
  m.def(
      "scatter",
      [](const Tensor& t, int64_t dim, const Tensor& index, py::object src, py::object value,
         py::object reduce, py::object out) {
        return scatter_dispatch(t, dim, index, src, value, reduce, opt_tensor(out), false);
      },
      arg("input"), arg("dim"), arg("index"), arg("src") = py::none(), py::kw_only(),
      arg("value") = py::none(), arg("reduce") = py::none(), arg("out") = py::none());
  cls.def(
      "scatter",
      [](const Tensor& t, int64_t dim, const Tensor& index, py::object src, py::object value,
         py::object reduce) {
        return scatter_dispatch(t, dim, index, src, value, reduce, Tensor(), false);
      },
      arg("dim"), arg("index"), arg("src") = py::none(), py::kw_only(), arg("value") = py::none(),
      arg("reduce") = py::none());
  cls.def(
      "scatter_",
      [](py::object self, int64_t dim, const Tensor& index, py::object src, py::object value,
         py::object reduce) {
        scatter_dispatch(self.cast<Tensor>(), dim, index, src, value, reduce, Tensor(), true);
        return self;
      },
      arg("dim"), arg("index"), arg("src") = py::none(), py::kw_only(), arg("value") = py::none(),
      arg("reduce") = py::none());

  m.def(
      "scatter_add",
      [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src, py::object out) {
        Tensor o = opt_tensor(out);
        py::gil_scoped_release no_gil;
        return scatter_add(t, dim, index, src, o);
      },
      arg("input"), arg("dim"), arg("index"), arg("src"), py::kw_only(), arg("out") = py::none());
  cls.def(
      "scatter_add",
      [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src) {
        return scatter_add(t, dim, index, src);
      },
      arg("dim"), arg("index"), arg("src"), Release());
  cls.def(
      "scatter_add_",
      [](py::object self, int64_t dim, const Tensor& index, const Tensor& src) {
        Tensor t = self.cast<Tensor>();
        {
          py::gil_scoped_release no_gil;
          scatter_add_(t, dim, index, src);
        }
        return self;
      },
      arg("dim"), arg("index"), arg("src"));

  m.def(
      "scatter_reduce",
      [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src,
         const std::string& reduce, bool include_self, py::object out) {
        Tensor o = opt_tensor(out);
        py::gil_scoped_release no_gil;
        return scatter_reduce(t, dim, index, src, reduce, include_self, o);
      },
      arg("input"), arg("dim"), arg("index"), arg("src"), arg("reduce"), py::kw_only(),
      arg("include_self") = true, arg("out") = py::none());
  cls.def(
      "scatter_reduce",
      [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src,
         const std::string& reduce,
         bool include_self) { return scatter_reduce(t, dim, index, src, reduce, include_self); },
      arg("dim"), arg("index"), arg("src"), arg("reduce"), py::kw_only(),
      arg("include_self") = true, Release());
  cls.def(
      "scatter_reduce_",
      [](py::object self, int64_t dim, const Tensor& index, const Tensor& src,
         const std::string& reduce, bool include_self) {
        Tensor t = self.cast<Tensor>();
        {
          py::gil_scoped_release no_gil;
          scatter_reduce_(t, dim, index, src, reduce, include_self);
        }
        return self;
      },
      arg("dim"), arg("index"), arg("src"), arg("reduce"), py::kw_only(),
      arg("include_self") = true);

  // --- index_add / index_copy / index_fill / index_put ------------------------------------
  m.def(
      "index_add",
      [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source,
         const Scalar& alpha, py::object out) {
        Tensor o = opt_tensor(out);
        py::gil_scoped_release no_gil;
        return index_add(t, dim, index, source, alpha, o);
      },
      arg("input"), arg("dim"), arg("index"), arg("source"), py::kw_only(), arg("alpha") = 1,
      arg("out") = py::none());
  cls.def(
      "index_add",
      [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source,
         const Scalar& alpha) { return index_add(t, dim, index, source, alpha); },
      arg("dim"), arg("index"), arg("source"), py::kw_only(), arg("alpha") = 1, Release());
  cls.def(
      "index_add_",
      [](py::object self, int64_t dim, const Tensor& index, const Tensor& source,
         const Scalar& alpha) {
        Tensor t = self.cast<Tensor>();
        {
          py::gil_scoped_release no_gil;
          index_add_(t, dim, index, source, alpha);
        }
        return self;
      },
      arg("dim"), arg("index"), arg("source"), py::kw_only(), arg("alpha") = 1);

  m.def(
      "index_copy",
      [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source, py::object out) {
        Tensor o = opt_tensor(out);
        py::gil_scoped_release no_gil;
        return index_copy(t, dim, index, source, o);
      },
      arg("input"), arg("dim"), arg("index"), arg("source"), py::kw_only(),
      arg("out") = py::none());
  cls.def(
      "index_copy",
      [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source) {
        return index_copy(t, dim, index, source);
      },
      arg("dim"), arg("index"), arg("source"), Release());
  cls.def(
      "index_copy_",
      [](py::object self, int64_t dim, const Tensor& index, const Tensor& source) {
        Tensor t = self.cast<Tensor>();
        {
          py::gil_scoped_release no_gil;
          index_copy_(t, dim, index, source);
        }
        return self;
      },
      arg("dim"), arg("index"), arg("source"));

  auto index_fill_fn = [](const Tensor& t, int64_t dim, const Tensor& index, py::handle value) {
    return with_fill_value(
        value, "index_fill", [&](const Scalar& s) { return index_fill(t, dim, index, s); },
        [&](const Tensor& v) { return index_fill(t, dim, index, v); });
  };
  m.def("index_fill", index_fill_fn, arg("input"), arg("dim"), arg("index"), arg("value"));
  cls.def("index_fill", index_fill_fn, arg("dim"), arg("index"), arg("value"));
  cls.def(
      "index_fill_",
      [](py::object self, int64_t dim, const Tensor& index, py::handle value) {
        Tensor t = self.cast<Tensor>();
        with_fill_value(
            value, "index_fill_", [&](const Scalar& s) { return index_fill_(t, dim, index, s); },
            [&](const Tensor& v) { return index_fill_(t, dim, index, v); });
        return self;
      },
      arg("dim"), arg("index"), arg("value"));

  auto index_put_fn = [](const Tensor& t, py::handle indices, const Tensor& values,
                         bool accumulate) {
    std::vector<Tensor> idx = parse_index_tuple(indices, "index_put");
    py::gil_scoped_release no_gil;
    return index_put(t, idx, values, accumulate);
  };
  m.def("index_put", index_put_fn, arg("input"), arg("indices"), arg("values"),
        arg("accumulate") = false);
  cls.def("index_put", index_put_fn, arg("indices"), arg("values"), arg("accumulate") = false);
  auto index_put_inplace = [](py::object self, py::handle indices, const Tensor& values,
                              bool accumulate) {
    Tensor t = self.cast<Tensor>();
    std::vector<Tensor> idx = parse_index_tuple(indices, "index_put_");
    {
      py::gil_scoped_release no_gil;
      index_put_(t, idx, values, accumulate);
    }
    return self;
  };
  m.def("index_put_", index_put_inplace, arg("input"), arg("indices"), arg("values"),
        arg("accumulate") = false);
  cls.def("index_put_", index_put_inplace, arg("indices"), arg("values"),
          arg("accumulate") = false);

  // --- masks --------------------------------------------------------------------------------
  auto masked_fill_fn = [](const Tensor& t, const Tensor& mask, py::handle value) {
    return with_fill_value(
        value, "masked_fill", [&](const Scalar& s) { return masked_fill(t, mask, s); },
        [&](const Tensor& v) { return masked_fill(t, mask, v); });
  };
  m.def("masked_fill", masked_fill_fn, arg("input"), arg("mask"), arg("value"));
  cls.def("masked_fill", masked_fill_fn, arg("mask"), arg("value"));
  cls.def(
      "masked_fill_",
      [](py::object self, const Tensor& mask, py::handle value) {
        Tensor t = self.cast<Tensor>();
        with_fill_value(
            value, "masked_fill_", [&](const Scalar& s) { return masked_fill_(t, mask, s); },
            [&](const Tensor& v) { return masked_fill_(t, mask, v); });
        return self;
      },
      arg("mask"), arg("value"));

  m.def(
      "masked_select",
      [](const Tensor& t, const Tensor& mask, py::object out) {
        Tensor o = opt_tensor(out);
        py::gil_scoped_release no_gil;
        return masked_select(t, mask, o);
      },
      arg("input"), arg("mask"), py::kw_only(), arg("out") = py::none());
  cls.def(
      "masked_select", [](const Tensor& t, const Tensor& mask) { return masked_select(t, mask); },
      arg("mask"), Release());

  auto masked_scatter_fn = [](const Tensor& t, const Tensor& mask, const Tensor& source) {
    return masked_scatter(t, mask, source);
  };
  m.def("masked_scatter", masked_scatter_fn, arg("input"), arg("mask"), arg("source"), Release());
  cls.def("masked_scatter", masked_scatter_fn, arg("mask"), arg("source"), Release());
  cls.def(
      "masked_scatter_",
      [](py::object self, const Tensor& mask, const Tensor& source) {
        Tensor t = self.cast<Tensor>();
        {
          py::gil_scoped_release no_gil;
          masked_scatter_(t, mask, source);
        }
        return self;
      },
      arg("mask"), arg("source"));

  // --- nonzero / argwhere (the one-argument where(cond) is nonzero(cond, as_tuple=True)) -----
  m.def(
      "nonzero",
      [](const Tensor& t, py::object out, bool as_tuple) {
        return nonzero_result(t, as_tuple, opt_tensor(out));
      },
      arg("input"), py::kw_only(), arg("out") = py::none(), arg("as_tuple") = false);
  cls.def(
      "nonzero",
      [](const Tensor& t, bool as_tuple) { return nonzero_result(t, as_tuple, Tensor()); },
      py::kw_only(), arg("as_tuple") = false);
  auto argwhere_fn = [](const Tensor& t) { return argwhere(t); };
  m.def("argwhere", argwhere_fn, arg("input"), Release());
  cls.def("argwhere", argwhere_fn, Release());
}

}  // namespace ember
