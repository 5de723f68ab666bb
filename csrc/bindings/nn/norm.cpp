// Bindings of softmax / log_softmax and the normalisation ops (ops/nn/softmax.h, ops/nn/norm.h)
// with PyTorch's top-level signatures: torch.softmax, torch.layer_norm, torch.batch_norm, ...
// The ember.nn.functional wrappers (python/ember/nn/functional/_normalization.py, _softmax.py)
// call these.
#include "api/nn/norm.h"
#include "api/nn/softmax.h"
#include "bindings/reduce_helpers.h"

namespace ember {

namespace {

ScalarType parse_optional_dtype(py::handle h, const char* op) {
  if (h.is_none()) return ScalarType::Undefined;
  auto t = try_parse_dtype(h);
  if (!t) {
    throw py::type_error(str_cat("[", op, "] argument 'dtype' must be torch.dtype, not ",
                                 Py_TYPE(h.ptr())->tp_name));
  }
  return *t;
}

// normalized_shape: a sequence of ints (PyTorch refuses a bare int here).
DimVector parse_normalized_shape(py::handle h, const char* op) {
  if (PyLong_Check(h.ptr())) {
    throw py::type_error(str_cat("[", op,
                                 "] argument 'normalized_shape' must be tuple of ints, "
                                 "not int"));
  }
  return parse_int_sequence(h, op, "normalized_shape");
}

void def_softmax(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls, const char* name,
                 Tensor (*f)(const Tensor&, int64_t, ScalarType)) {
  m.def(
      name,
      [f, name](const Tensor& x, int64_t dim, py::handle dtype) {
        ScalarType dt = parse_optional_dtype(dtype, name);
        return nogil(x.numel(), [&] { return f(x, dim, dt); });
      },
      py::arg("input"), py::arg("dim"), py::arg("dtype") = py::none());
  cls.def(
      name,
      [f, name](const Tensor& x, int64_t dim, py::handle dtype) {
        ScalarType dt = parse_optional_dtype(dtype, name);
        return nogil(x.numel(), [&] { return f(x, dim, dt); });
      },
      py::arg("dim"), py::arg("dtype") = py::none());
}

}  // namespace

void init_nn_norm(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  def_softmax(m, cls, "softmax", &softmax);
  def_softmax(m, cls, "log_softmax", &log_softmax);

  m.def(
      "layer_norm",
      [](const Tensor& x, py::handle normalized_shape, py::handle weight, py::handle bias,
         double eps, bool /*cudnn_enable*/) {
        DimVector shape = parse_normalized_shape(normalized_shape, "layer_norm");
        Tensor w = opt_tensor(weight, "layer_norm", "weight");
        Tensor b = opt_tensor(bias, "layer_norm", "bias");
        return nogil(x.numel(), [&] { return layer_norm(x, shape, w, b, eps); });
      },
      py::arg("input"), py::arg("normalized_shape"), py::arg("weight") = py::none(),
      py::arg("bias") = py::none(), py::arg("eps") = 1e-5, py::arg("cudnn_enable") = true);

  m.def(
      "rms_norm",
      [](const Tensor& x, py::handle normalized_shape, py::handle weight,
         std::optional<double> eps) {
        DimVector shape = parse_normalized_shape(normalized_shape, "rms_norm");
        Tensor w = opt_tensor(weight, "rms_norm", "weight");
        return nogil(x.numel(), [&] { return rms_norm(x, shape, w, eps); });
      },
      py::arg("input"), py::arg("normalized_shape"), py::arg("weight") = py::none(),
      py::arg("eps") = py::none());

  m.def(
      "group_norm",
      [](const Tensor& x, int64_t num_groups, py::handle weight, py::handle bias, double eps,
         bool /*cudnn_enabled*/) {
        Tensor w = opt_tensor(weight, "group_norm", "weight");
        Tensor b = opt_tensor(bias, "group_norm", "bias");
        return nogil(x.numel(), [&] { return group_norm(x, num_groups, w, b, eps); });
      },
      py::arg("input"), py::arg("num_groups"), py::arg("weight") = py::none(),
      py::arg("bias") = py::none(), py::arg("eps") = 1e-5, py::arg("cudnn_enabled") = true);

  m.def(
      "batch_norm",
      [](const Tensor& x, py::handle weight, py::handle bias, py::handle running_mean,
         py::handle running_var, bool training, double momentum, double eps,
         bool /*cudnn_enabled*/) {
        const char* op = "batch_norm";
        Tensor w = opt_tensor(weight, op, "weight"), b = opt_tensor(bias, op, "bias");
        Tensor rm = opt_tensor(running_mean, op, "running_mean");
        Tensor rv = opt_tensor(running_var, op, "running_var");
        return nogil(x.numel(),
                     [&] { return batch_norm(x, w, b, rm, rv, training, momentum, eps); });
      },
      py::arg("input"), py::arg("weight"), py::arg("bias"), py::arg("running_mean"),
      py::arg("running_var"), py::arg("training"), py::arg("momentum"), py::arg("eps"),
      py::arg("cudnn_enabled"));

  m.def(
      "instance_norm",
      [](const Tensor& x, py::handle weight, py::handle bias, py::handle running_mean,
         py::handle running_var, bool use_input_stats, double momentum, double eps,
         bool /*cudnn_enabled*/) {
        const char* op = "instance_norm";
        Tensor w = opt_tensor(weight, op, "weight"), b = opt_tensor(bias, op, "bias");
        Tensor rm = opt_tensor(running_mean, op, "running_mean");
        Tensor rv = opt_tensor(running_var, op, "running_var");
        return nogil(x.numel(), [&] {
          return instance_norm(x, w, b, rm, rv, use_input_stats, momentum, eps);
        });
      },
      py::arg("input"), py::arg("weight"), py::arg("bias"), py::arg("running_mean"),
      py::arg("running_var"), py::arg("use_input_stats"), py::arg("momentum"), py::arg("eps"),
      py::arg("cudnn_enabled"));
}

}  // namespace ember
