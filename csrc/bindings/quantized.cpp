// ember._C._quantized: the packed int8 linear weights and the dynamically quantized linear
// (ops/quantized/linear_dynamic.h) under ember.ao.nn.quantized.dynamic.
#include "bindings/pybind_ember.h"
#include "bindings/reduce_helpers.h"
#include "ops/quantized/linear_dynamic.h"

namespace ember {

void init_quantized(py::module_& m) {
  using native::PackedLinearWeight;
  py::module_ q = m.def_submodule("_quantized", "int8 kernels behind ember.ao.quantization");
  py::class_<PackedLinearWeight, std::shared_ptr<PackedLinearWeight>>(q, "LinearPackedParams")
      .def_property_readonly("in_features",
                             [](const PackedLinearWeight& w) { return w.weight.size(1); })
      .def_property_readonly("out_features",
                             [](const PackedLinearWeight& w) { return w.weight.size(0); })
      .def_property_readonly("scales", [](const PackedLinearWeight& w) { return w.scales; })
      .def_property_readonly("zero_points",
                             [](const PackedLinearWeight& w) { return w.zero_points; })
      .def_property_readonly("per_channel",
                             [](const PackedLinearWeight& w) { return w.per_channel; })
      .def_property_readonly("packed_level",
                             [](const PackedLinearWeight& w) { return w.packed.level; })
      .def(
          "unpack",
          [](const PackedLinearWeight& w) {
            return py::make_tuple(w.weight, w.bias.defined() ? py::cast(w.bias) : py::none());
          },
          "(int8 weight (out, in), float32 bias or None)");
  q.def(
      "_linear_prepack",
      [](const Tensor& weight, std::vector<double> scales, std::vector<int64_t> zero_points,
         bool per_channel, py::handle bias) {
        const Tensor b = opt_tensor(bias, "linear_prepack", "bias");
        py::gil_scoped_release release;
        return native::pack_linear_weight(weight, std::move(scales), std::move(zero_points),
                                          per_channel, b);
      },
      py::arg("weight"), py::arg("scales"), py::arg("zero_points"), py::arg("per_channel"),
      py::arg("bias") = py::none(),
      "Packs an int8 weight (out, in) with its scales and zero points (one each per tensor, or "
      "one per output channel) for the int8 GEMM of the CPU level in use.");
  q.def(
      "_linear_dynamic",
      [](const Tensor& x, const PackedLinearWeight& w, bool reduce_range, bool relu) {
        py::gil_scoped_release release;
        return native::linear_dynamic(x, w, reduce_range, relu);
      },
      py::arg("input"), py::arg("packed"), py::arg("reduce_range") = true, py::arg("relu") = false,
      "y = x @ dequant(w)^T + bias with x quantized to uint8 per call from its own range "
      "(7-bit when reduce_range, as PyTorch on x86).");
  q.def(
      "_quantize_weight",
      [](const Tensor& w, const std::vector<double>& scales,
         const std::vector<int64_t>& zero_points) {
        py::gil_scoped_release release;
        return native::quantize_weight_s8(w, scales, zero_points);
      },
      py::arg("weight"), py::arg("scales"), py::arg("zero_points"),
      "int8 (out, in) = clamp(zero_point + round(w / scale)), per tensor or per output channel.");
  q.def(
      "_choose_qparams",
      [](float min, float max, int32_t qmin, int32_t qmax, bool reduce_range) {
        const native::QuantParams p =
            native::choose_quantization_params(min, max, qmin, qmax, reduce_range);
        return py::make_tuple(p.scale, p.zero_point);
      },
      py::arg("min"), py::arg("max"), py::arg("qmin"), py::arg("qmax"),
      py::arg("reduce_range") = false,
      "(scale, zero_point) mapping [min(min, 0), max(max, 0)] onto [qmin, qmax] (PyTorch's "
      "ChooseQuantizationParams).");
}

}  // namespace ember
