// Ordering, counting and searching ops. sort/topk/kthvalue/histogram return the named tuples of
// ember._return_types_sort; heavy kernels run with the GIL released.
#include "api/sort.h"
#include "bindings/list_args.h"

namespace ember {

namespace {

py::object return_type(const char* name) {
  return py::module_::import("ember._return_types_sort").attr(name);
}

py::object named_pair(const char* name, const std::tuple<Tensor, Tensor>& r) {
  return return_type(name)(std::get<0>(r), std::get<1>(r));
}

// out=(values, indices) for sort/topk/kthvalue.
std::pair<Tensor, Tensor> pair_out(py::handle out, const char* op) {
  if (out.is_none()) return {};
  if (!PySequence_Check(out.ptr()) || py::len(out) != 2) {
    throw py::type_error(str_cat("[", op,
                                 "] out must be a tuple of two tensors (values, "
                                 "indices)"));
  }
  py::sequence s = py::reinterpret_borrow<py::sequence>(out);
  return {s[0].cast<Tensor>(), s[1].cast<Tensor>()};
}

// unique's Python result: the tensor alone, or a tuple with the requested extras.
py::object unique_result(const std::tuple<Tensor, Tensor, Tensor>& r, bool inverse, bool counts) {
  if (!inverse && !counts) return py::cast(std::get<0>(r));
  py::list items;
  items.append(std::get<0>(r));
  if (inverse) items.append(std::get<1>(r));
  if (counts) items.append(std::get<2>(r));
  return py::tuple(items);
}

}  // namespace

void init_join_sort(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  auto sort_fn = [](const Tensor& t, int64_t dim, bool descending, py::handle stable,
                    py::handle out) {
    auto outs = pair_out(out, "sort");
    Tensor vo = outs.first, io = outs.second;
    const bool st = !stable.is_none() && stable.cast<bool>();
    auto r = without_gil([&] { return sort(t, dim, descending, st, vo, io); });
    return named_pair("sort", r);
  };
  m.def("sort", sort_fn, py::arg("input"), py::arg("dim") = -1, py::arg("descending") = false,
        py::kw_only(), py::arg("stable") = false, py::arg("out") = py::none());
  cls.def(
      "sort",
      [sort_fn](const Tensor& t, int64_t dim, bool descending, py::handle stable) {
        return sort_fn(t, dim, descending, stable, py::none());
      },
      py::arg("dim") = -1, py::arg("descending") = false, py::kw_only(), py::arg("stable") = false);
  auto argsort_fn = [](const Tensor& t, int64_t dim, bool descending, bool stable) {
    return without_gil([&] { return argsort(t, dim, descending, stable); });
  };
  m.def("argsort", argsort_fn, py::arg("input"), py::arg("dim") = -1, py::arg("descending") = false,
        py::kw_only(), py::arg("stable") = false);
  cls.def("argsort", argsort_fn, py::arg("dim") = -1, py::arg("descending") = false, py::kw_only(),
          py::arg("stable") = false);
  m.def(
      "msort",
      [](const Tensor& t, py::handle out) {
        Tensor o = opt_tensor(out);
        return without_gil([&] { return msort(t, o); });
      },
      py::arg("input"), py::kw_only(), py::arg("out") = py::none());
  cls.def("msort", [](const Tensor& t) { return without_gil([&] { return msort(t); }); });

  auto topk_fn = [](const Tensor& t, int64_t k, py::handle dim, bool largest, bool sorted,
                    py::handle out) {
    auto outs = pair_out(out, "topk");
    Tensor vo = outs.first, io = outs.second;
    auto d = opt_int(dim, "topk");
    auto r = without_gil([&] { return topk(t, k, d, largest, sorted, vo, io); });
    return named_pair("topk", r);
  };
  m.def("topk", topk_fn, py::arg("input"), py::arg("k"), py::arg("dim") = py::none(),
        py::arg("largest") = true, py::arg("sorted") = true, py::kw_only(),
        py::arg("out") = py::none());
  cls.def(
      "topk",
      [topk_fn](const Tensor& t, int64_t k, py::handle dim, bool largest, bool sorted) {
        return topk_fn(t, k, dim, largest, sorted, py::none());
      },
      py::arg("k"), py::arg("dim") = py::none(), py::arg("largest") = true,
      py::arg("sorted") = true);
  auto kth_fn = [](const Tensor& t, int64_t k, py::handle dim, bool keepdim, py::handle out) {
    auto outs = pair_out(out, "kthvalue");
    Tensor vo = outs.first, io = outs.second;
    auto d = opt_int(dim, "kthvalue");
    auto r = without_gil([&] { return kthvalue(t, k, d, keepdim, vo, io); });
    return named_pair("kthvalue", r);
  };
  m.def("kthvalue", kth_fn, py::arg("input"), py::arg("k"), py::arg("dim") = py::none(),
        py::arg("keepdim") = false, py::kw_only(), py::arg("out") = py::none());
  cls.def(
      "kthvalue",
      [kth_fn](const Tensor& t, int64_t k, py::handle dim, bool keepdim) {
        return kth_fn(t, k, dim, keepdim, py::none());
      },
      py::arg("k"), py::arg("dim") = py::none(), py::arg("keepdim") = false);

  auto unique_fn = [](const Tensor& t, bool sorted, bool inverse, bool counts, py::handle dim) {
    auto d = opt_int(dim, "unique");
    auto r = without_gil([&] { return unique(t, sorted, inverse, counts, d); });
    return unique_result(r, inverse, counts);
  };
  m.def("unique", unique_fn, py::arg("input"), py::arg("sorted") = true,
        py::arg("return_inverse") = false, py::arg("return_counts") = false,
        py::arg("dim") = py::none());
  cls.def("unique", unique_fn, py::arg("sorted") = true, py::arg("return_inverse") = false,
          py::arg("return_counts") = false, py::arg("dim") = py::none());
  auto unique_c_fn = [](const Tensor& t, bool inverse, bool counts, py::handle dim) {
    auto d = opt_int(dim, "unique_consecutive");
    auto r = without_gil([&] { return unique_consecutive(t, inverse, counts, d); });
    return unique_result(r, inverse, counts);
  };
  m.def("unique_consecutive", unique_c_fn, py::arg("input"), py::arg("return_inverse") = false,
        py::arg("return_counts") = false, py::arg("dim") = py::none());
  cls.def("unique_consecutive", unique_c_fn, py::arg("return_inverse") = false,
          py::arg("return_counts") = false, py::arg("dim") = py::none());

  auto bincount_fn = [](const Tensor& t, py::handle weights, int64_t minlength) {
    return bincount(t, opt_tensor(weights), minlength);
  };
  m.def("bincount", bincount_fn, py::arg("input"), py::arg("weights") = py::none(),
        py::arg("minlength") = 0);
  cls.def("bincount", bincount_fn, py::arg("weights") = py::none(), py::arg("minlength") = 0);
  auto histc_fn = [](const Tensor& t, int64_t bins, const Scalar& min, const Scalar& max,
                     py::handle out) { return histc(t, bins, min, max, opt_tensor(out)); };
  m.def("histc", histc_fn, py::arg("input"), py::arg("bins") = 100, py::arg("min") = 0,
        py::arg("max") = 0, py::kw_only(), py::arg("out") = py::none());
  cls.def(
      "histc",
      [histc_fn](const Tensor& t, int64_t bins, const Scalar& min, const Scalar& max) {
        return histc_fn(t, bins, min, max, py::none());
      },
      py::arg("bins") = 100, py::arg("min") = 0, py::arg("max") = 0);
  auto histogram_fn = [](const Tensor& t, py::handle bins, py::handle range, py::handle weight,
                         bool density) {
    std::tuple<Tensor, Tensor> r;
    if (is_tensor(bins)) {
      r = histogram(t, bins.cast<Tensor>(), opt_tensor(weight), density);
    } else {
      std::optional<std::pair<double, double>> rg;
      if (!range.is_none()) {
        auto seq = py::reinterpret_borrow<py::sequence>(range);
        if (py::len(seq) != 2) throw py::value_error("[histogram] range must have 2 elements");
        rg = std::make_pair(seq[0].cast<double>(), seq[1].cast<double>());
      }
      r = histogram(t, parse_int(bins, "histogram", "bins"), rg, opt_tensor(weight), density);
    }
    return named_pair("histogram", r);
  };
  m.def("histogram", histogram_fn, py::arg("input"), py::arg("bins") = 100, py::kw_only(),
        py::arg("range") = py::none(), py::arg("weight") = py::none(), py::arg("density") = false);
  cls.def("histogram", histogram_fn, py::arg("bins") = 100, py::kw_only(),
          py::arg("range") = py::none(), py::arg("weight") = py::none(),
          py::arg("density") = false);

  m.def(
      "searchsorted",
      [](const Tensor& seq, py::handle values, bool out_int32, bool right, py::handle side,
         py::handle out, py::handle sorter) {
        std::optional<std::string> s;
        if (!side.is_none()) s = side.cast<std::string>();
        Tensor v = to_operand(values, "searchsorted");
        Tensor o = opt_tensor(out), so = opt_tensor(sorter);
        return without_gil([&] { return searchsorted(seq, v, out_int32, right, s, so, o); });
      },
      py::arg("sorted_sequence"), py::arg("values"), py::kw_only(), py::arg("out_int32") = false,
      py::arg("right") = false, py::arg("side") = py::none(), py::arg("out") = py::none(),
      py::arg("sorter") = py::none());
  m.def(
      "bucketize",
      [](py::handle input, const Tensor& boundaries, bool out_int32, bool right, py::handle out) {
        Tensor v = to_operand(input, "bucketize");
        Tensor o = opt_tensor(out);
        return without_gil([&] { return bucketize(v, boundaries, out_int32, right, o); });
      },
      py::arg("input"), py::arg("boundaries"), py::kw_only(), py::arg("out_int32") = false,
      py::arg("right") = false, py::arg("out") = py::none());
}

}  // namespace ember
