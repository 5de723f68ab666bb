// ember._C._quantized: quantized tensors' functions, the packed int8 linear and convolution
// weights and the int8 ops (ops/quantized/) under ember.ao.nn.quantized.
#include "bindings/pybind_ember.h"
#include "bindings/reduce_helpers.h"
#include "ops/creation.h"
#include "ops/quantized/conv.h"
#include "ops/quantized/conv_transpose.h"
#include "ops/quantized/elementwise.h"
#include "ops/quantized/embedding.h"
#include "ops/quantized/linear_dynamic.h"
#include "ops/quantized/quantize.h"

namespace ember {

namespace {

// ember.qscheme: PyTorch's torch.qscheme objects (ember.per_tensor_affine, ...).
struct QSchemeObject {
  QScheme scheme;
};

py::object qscheme_object(QScheme s) {
  static QSchemeObject objects[] = {{QScheme::PerTensorAffine},
                                    {QScheme::PerChannelAffine},
                                    {QScheme::PerTensorSymmetric},
                                    {QScheme::PerChannelSymmetric},
                                    {QScheme::PerChannelAffineFloatQParams}};
  return py::cast(&objects[static_cast<int>(s)], py::return_value_policy::reference);
}

ScalarType quantized_dtype_arg(py::handle h, const char* op) {
  auto t = try_parse_dtype(h);
  EMBER_CHECK_T(TypeError, t && is_quantized(*t), "[", op,
                "] dtype must be ember.qint8, ember.quint8, ember.qint32 or ember.quint4x2, got ",
                py::str(h).cast<std::string>());
  return *t;
}

const Quantizer& quantizer_of(const Tensor& t, const char* op) {
  EMBER_CHECK_T(TypeError, is_quantized(t.dtype()) && t.impl()->quantizer(), "[", op,
                "] expected a quantized tensor, got dtype ", dtype_name(t.dtype()));
  return *t.impl()->quantizer();
}

const Quantizer& per_channel_quantizer(const Tensor& t, const char* op) {
  const Quantizer& q = quantizer_of(t, op);
  EMBER_CHECK(q.per_channel(), "[", op, "] expected a per-channel quantized tensor, got ",
              qscheme_name(q.scheme()));
  return q;
}

const Quantizer& per_tensor_quantizer(const Tensor& t, const char* op) {
  const Quantizer& q = quantizer_of(t, op);
  EMBER_CHECK(!q.per_channel(), "[", op, "] expected a per-tensor quantized tensor, got ",
              qscheme_name(q.scheme()), " (use q_per_channel_scales / q_per_channel_zero_points)");
  return q;
}

}  // namespace

void init_quantized(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  using native::PackedLinearWeight;
  py::module_ q = m.def_submodule("_quantized", "int8 kernels behind ember.ao.quantization");
  py::class_<QSchemeObject>(m, "qscheme")
      .def("__repr__",
           [](const QSchemeObject& o) { return std::string("ember.") + qscheme_name(o.scheme); })
      .def("__reduce__", [](const QSchemeObject& o) { return std::string(qscheme_name(o.scheme)); })
      .def_property_readonly("name", [](const QSchemeObject& o) { return qscheme_name(o.scheme); });
  for (QScheme s :
       {QScheme::PerTensorAffine, QScheme::PerChannelAffine, QScheme::PerTensorSymmetric,
        QScheme::PerChannelSymmetric, QScheme::PerChannelAffineFloatQParams}) {
    m.attr(qscheme_name(s)) = qscheme_object(s);
  }

  q.def(
      "quantize_per_tensor",
      [](const Tensor& x, double scale, int64_t zero_point, py::handle dtype) {
        const ScalarType dt = quantized_dtype_arg(dtype, "quantize_per_tensor");
        py::gil_scoped_release release;
        return native::quantize_per_tensor(x, scale, zero_point, dt);
      },
      py::arg("input"), py::arg("scale"), py::arg("zero_point"), py::arg("dtype"));
  q.def(
      "quantize_per_channel",
      [](const Tensor& x, std::vector<double> scales, std::vector<int64_t> zero_points,
         int64_t axis, py::handle dtype) {
        const ScalarType dt = quantized_dtype_arg(dtype, "quantize_per_channel");
        py::gil_scoped_release release;
        return native::quantize_per_channel(x, scales, zero_points, axis, dt);
      },
      py::arg("input"), py::arg("scales"), py::arg("zero_points"), py::arg("axis"),
      py::arg("dtype"));
  q.def(
      "quantize_per_channel_float_qparams",
      [](const Tensor& x, std::vector<double> scales, std::vector<double> zero_points, int64_t axis,
         py::handle dtype) {
        const ScalarType dt = quantized_dtype_arg(dtype, "quantize_per_channel");
        py::gil_scoped_release release;
        return native::quantize_per_channel_float_qparams(x, scales, zero_points, axis, dt);
      },
      py::arg("input"), py::arg("scales"), py::arg("zero_points"), py::arg("axis"),
      py::arg("dtype"));
  q.def(
      "_make_quantized",
      [](const Tensor& ints, py::handle dtype, const std::string& scheme,
         std::vector<double> scales, std::vector<double> zero_points, int64_t axis,
         std::vector<int64_t> sizes) {
        const ScalarType dt = quantized_dtype_arg(dtype, "_make_quantized");
        QScheme s = QScheme::PerTensorAffine;
        bool found = false;
        for (QScheme c : {QScheme::PerTensorAffine, QScheme::PerChannelAffine,
                          QScheme::PerChannelAffineFloatQParams}) {
          if (scheme == qscheme_name(c)) {
            s = c;
            found = true;
          }
        }
        EMBER_CHECK_T(ValueError, found, "[_make_quantized] unknown qscheme ", scheme);
        return native::make_quantized_from_int_repr(ints, dt, s, scales, zero_points, axis, sizes);
      },
      py::arg("int_repr"), py::arg("dtype"), py::arg("qscheme"), py::arg("scales"),
      py::arg("zero_points"), py::arg("axis"), py::arg("sizes"),
      "A quantized tensor from int_repr()'s integers (packed for quint4x2) and its parameters: "
      "what pickling and files use.");
  q.def(
      "quantize_per_tensor_dynamic",
      [](const Tensor& x, py::handle dtype, bool reduce_range) {
        const ScalarType dt = quantized_dtype_arg(dtype, "quantize_per_tensor_dynamic");
        py::gil_scoped_release release;
        return native::quantize_per_tensor_dynamic(x, dt, reduce_range);
      },
      py::arg("input"), py::arg("dtype"), py::arg("reduce_range"));
  q.def("dequantize", &native::dequantize, py::arg("input"),
        py::call_guard<py::gil_scoped_release>());
  q.def("_make_per_tensor_quantized_tensor", &native::make_per_tensor_quantized, py::arg("input"),
        py::arg("scale"), py::arg("zero_point"));
  q.def("_make_per_channel_quantized_tensor", &native::make_per_channel_quantized, py::arg("input"),
        py::arg("scales"), py::arg("zero_points"), py::arg("axis"));

  cls.def("int_repr", [](const Tensor& t) { return native::int_repr(t); });
  cls.def("dequantize", [](const Tensor& t) { return native::dequantize(t); });
  cls.def_property_readonly("is_quantized",
                            [](const Tensor& t) { return is_quantized(t.dtype()); });
  cls.def("q_scale", [](const Tensor& t) { return per_tensor_quantizer(t, "q_scale").scale(); });
  cls.def("q_zero_point",
          [](const Tensor& t) { return per_tensor_quantizer(t, "q_zero_point").zero_point(); });
  cls.def("q_per_channel_scales", [](const Tensor& t) {
    const auto& v = per_channel_quantizer(t, "q_per_channel_scales").scales();
    Tensor out =
        native::empty({static_cast<int64_t>(v.size())}, native::TensorOptions(ScalarType::Float64));
    std::copy(v.begin(), v.end(), out.data<double>());
    return out;
  });
  cls.def("q_per_channel_zero_points", [](const Tensor& t) {
    const Quantizer& pq = per_channel_quantizer(t, "q_per_channel_zero_points");
    if (pq.float_qparams()) {  // real-valued zero points, as PyTorch's float32 tensor
      const auto& f = pq.float_zero_points();
      Tensor out = native::empty({static_cast<int64_t>(f.size())},
                                 native::TensorOptions(ScalarType::Float32));
      std::transform(f.begin(), f.end(), out.data<float>(),
                     [](double z) { return static_cast<float>(z); });
      return out;
    }
    const auto& v = pq.zero_points();
    Tensor out =
        native::empty({static_cast<int64_t>(v.size())}, native::TensorOptions(ScalarType::Int64));
    std::copy(v.begin(), v.end(), out.data<int64_t>());
    return out;
  });
  cls.def("q_per_channel_axis",
          [](const Tensor& t) { return per_channel_quantizer(t, "q_per_channel_axis").axis(); });
  cls.def("qscheme",
          [](const Tensor& t) { return qscheme_object(quantizer_of(t, "qscheme").scheme()); });

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
          "(int8 weight (out, in), float32 bias or None)")
      .def(
          "unpack_quantized",
          [](const PackedLinearWeight& w) {
            const Tensor q =
                w.per_channel
                    ? native::make_per_channel_quantized(w.weight, w.scales, w.zero_points, 0)
                    : native::make_per_tensor_quantized(w.weight, w.scales[0], w.zero_points[0]);
            return py::make_tuple(q, w.bias.defined() ? py::cast(w.bias) : py::none());
          },
          "(qint8 weight (out, in), float32 bias or None), as quantized::linear_unpack")
      // Pickled (deepcopy, ember.save of a module) as the int8 weight and its parameters; the
      // packing is redone on load, for the CPU level of the loading process.
      .def(py::pickle(
          [](const PackedLinearWeight& w) {
            return py::make_tuple(w.weight, w.scales, w.zero_points, w.per_channel,
                                  w.bias.defined() ? py::cast(w.bias) : py::none());
          },
          [](const py::tuple& t) {
            EMBER_CHECK(t.size() == 5, "[LinearPackedParams] bad pickled state of ", t.size(),
                        " fields");
            const Tensor bias = opt_tensor(t[4], "LinearPackedParams", "bias");
            return native::pack_linear_weight(t[0].cast<Tensor>(), t[1].cast<std::vector<double>>(),
                                              t[2].cast<std::vector<int64_t>>(), t[3].cast<bool>(),
                                              bias);
          }));
  q.def(
      "linear_prepack",
      [](const Tensor& qweight, py::handle bias) {
        const Quantizer& quant = quantizer_of(qweight, "linear_prepack");
        EMBER_CHECK_T(TypeError, qweight.dtype() == ScalarType::QInt8,
                      "[linear_prepack] expected a qint8 weight, got ",
                      dtype_name(qweight.dtype()));
        EMBER_CHECK(!quant.per_channel() || quant.axis() == 0,
                    "[linear_prepack] per-channel weights must be quantized along axis 0 (the "
                    "output features), got axis ",
                    quant.axis());
        const Tensor b = opt_tensor(bias, "linear_prepack", "bias");
        py::gil_scoped_release release;
        return native::pack_linear_weight(native::int_repr(qweight), quant.scales(),
                                          quant.zero_points(), quant.per_channel(), b);
      },
      py::arg("weight"), py::arg("bias") = py::none(),
      "Packs a qint8 weight (out, in), per tensor or per channel along axis 0 "
      "(quantized::linear_prepack).");
  q.def(
      "linear",
      [](const Tensor& x, const PackedLinearWeight& w, double scale, int64_t zero_point,
         bool relu) {
        py::gil_scoped_release release;
        return native::linear_quantized(x, w, scale, zero_point, relu);
      },
      py::arg("input"), py::arg("packed"), py::arg("output_scale"), py::arg("output_zero_point"),
      py::arg("relu") = false,
      "quint8 y = requant(dequant(x) @ dequant(w)^T + bias) (quantized::linear).");
  using native::PackedConvWeight;
  auto conv_state = [](const PackedConvWeight& w) {
    std::vector<int64_t> stride, padding, dilation;
    for (int64_t d = 2 - w.spatial_dims; d < 2; ++d) {
      stride.push_back(w.stride[d]);
      padding.push_back(w.padding[d]);
      dilation.push_back(w.dilation[d]);
    }
    return py::make_tuple(w.weight, w.bias.defined() ? py::cast(w.bias) : py::none(), stride,
                          padding, dilation, w.groups);
  };
  py::class_<PackedConvWeight, std::shared_ptr<PackedConvWeight>>(q, "ConvPackedParams")
      .def("unpack",
           [](const PackedConvWeight& w) {
             return py::make_tuple(w.weight, w.bias.defined() ? py::cast(w.bias) : py::none());
           })
      .def("stride", [=](const PackedConvWeight& w) { return conv_state(w)[2]; })
      .def("padding", [=](const PackedConvWeight& w) { return conv_state(w)[3]; })
      .def("dilation", [=](const PackedConvWeight& w) { return conv_state(w)[4]; })
      .def("groups", [](const PackedConvWeight& w) { return w.groups; })
      .def("transpose", [](const PackedConvWeight&) { return false; })
      .def_property_readonly("kernel",
                             [](const PackedConvWeight& w) {
                               switch (w.kernel_kind) {
                                 case PackedConvWeight::Kernel::kDepthwise:
                                   return "int8 depthwise";
                                 case PackedConvWeight::Kernel::kGrouped:
                                   return "int8 grouped";
                                 case PackedConvWeight::Kernel::kFloat:
                                   return "float";
                                 default:
                                   return "int8 GEMM";
                               }
                             })
      .def_property_readonly("reason", [](const PackedConvWeight& w) { return w.reason; })
      .def_property_readonly("spatial_dims",
                             [](const PackedConvWeight& w) { return w.spatial_dims; })
      // Pickled as the qint8 weight, bias and geometry; packed again on load.
      .def(py::pickle([=](const PackedConvWeight& w) { return conv_state(w); },
                      [](const py::tuple& t) {
                        EMBER_CHECK(t.size() == 6, "[ConvPackedParams] bad pickled state of ",
                                    t.size(), " fields");
                        return native::pack_conv_weight(
                            t[0].cast<Tensor>(), opt_tensor(t[1], "ConvPackedParams", "bias"),
                            t[2].cast<std::vector<int64_t>>(), t[3].cast<std::vector<int64_t>>(),
                            t[4].cast<std::vector<int64_t>>(), t[5].cast<int64_t>());
                      }));
  q.def(
      "conv_prepack",
      [](const Tensor& qweight, py::handle bias, std::vector<int64_t> stride,
         std::vector<int64_t> padding, std::vector<int64_t> dilation, int64_t groups,
         const std::string& kernel) {
        const Tensor b = opt_tensor(bias, "conv_prepack", "bias");
        py::gil_scoped_release release;
        return native::pack_conv_weight(qweight, b, stride, padding, dilation, groups, kernel);
      },
      py::arg("weight"), py::arg("bias"), py::arg("stride"), py::arg("padding"),
      py::arg("dilation"), py::arg("groups"), py::arg("kernel") = "auto",
      "Packs a qint8 convolution weight (C_out, C_in / groups, *kernel) of 1 or 2 spatial dims "
      "(quantized::conv2d_prepack).");
  q.def(
      "conv",
      [](const Tensor& x, const PackedConvWeight& w, double scale, int64_t zero_point, bool relu) {
        py::gil_scoped_release release;
        return native::conv_quantized(x, w, scale, zero_point, relu);
      },
      py::arg("input"), py::arg("packed"), py::arg("output_scale"), py::arg("output_zero_point"),
      py::arg("relu") = false,
      "quint8 y = requant(conv(dequant(x), dequant(w)) + bias) (quantized::conv2d); the result "
      "is channels-last in memory.");
  // Transposed convolution: the state is (weight, bias, stride, padding, output_padding,
  // dilation, groups), each geometry list as many values as spatial dims.
  using native::PackedConvTransposeWeight;
  auto conv_transpose_state = [](const PackedConvTransposeWeight& w) {
    const int64_t first = w.spatial_dims == 1 ? 1 : 0;
    const auto dims = [&](const std::array<int64_t, 2>& v) {
      return std::vector<int64_t>(v.begin() + first, v.end());
    };
    return py::make_tuple(w.weight, w.bias.defined() ? py::cast(w.bias) : py::none(),
                          dims(w.stride), dims(w.padding), dims(w.output_padding), dims(w.dilation),
                          w.groups);
  };
  py::class_<PackedConvTransposeWeight, std::shared_ptr<PackedConvTransposeWeight>>(
      q, "ConvTransposePackedParams")
      .def("unpack",
           [](const PackedConvTransposeWeight& w) {
             return py::make_tuple(w.weight, w.bias.defined() ? py::cast(w.bias) : py::none());
           })
      .def("stride", [=](const PackedConvTransposeWeight& w) { return conv_transpose_state(w)[2]; })
      .def("padding",
           [=](const PackedConvTransposeWeight& w) { return conv_transpose_state(w)[3]; })
      .def("output_padding",
           [=](const PackedConvTransposeWeight& w) { return conv_transpose_state(w)[4]; })
      .def("dilation",
           [=](const PackedConvTransposeWeight& w) { return conv_transpose_state(w)[5]; })
      .def("groups", [](const PackedConvTransposeWeight& w) { return w.groups; })
      .def("transpose", [](const PackedConvTransposeWeight&) { return true; })
      .def_property_readonly("kernel", [](const PackedConvTransposeWeight&) { return "int8 GEMM"; })
      .def_property_readonly("reason",
                             [](const PackedConvTransposeWeight&) {
                               return "int8 GEMM, then the columns scattered (col2im)";
                             })
      .def(py::pickle(
          [=](const PackedConvTransposeWeight& w) { return conv_transpose_state(w); },
          [](const py::tuple& t) {
            EMBER_CHECK(t.size() == 7, "[ConvTransposePackedParams] bad pickled state of ",
                        t.size(), " fields");
            return native::pack_conv_transpose_weight(
                t[0].cast<Tensor>(), opt_tensor(t[1], "ConvTransposePackedParams", "bias"),
                t[2].cast<std::vector<int64_t>>(), t[3].cast<std::vector<int64_t>>(),
                t[4].cast<std::vector<int64_t>>(), t[5].cast<std::vector<int64_t>>(),
                t[6].cast<int64_t>());
          }));
  q.def(
      "conv_transpose_prepack",
      [](const Tensor& qweight, py::handle bias, std::vector<int64_t> stride,
         std::vector<int64_t> padding, std::vector<int64_t> output_padding,
         std::vector<int64_t> dilation, int64_t groups) {
        const Tensor b = opt_tensor(bias, "conv_transpose_prepack", "bias");
        py::gil_scoped_release release;
        return native::pack_conv_transpose_weight(qweight, b, stride, padding, output_padding,
                                                  dilation, groups);
      },
      py::arg("weight"), py::arg("bias"), py::arg("stride"), py::arg("padding"),
      py::arg("output_padding"), py::arg("dilation"), py::arg("groups"),
      "Packs a per-tensor qint8 transposed-convolution weight (C_in, C_out / groups, *kernel) of "
      "1 or 2 spatial dims (quantized::conv_transpose2d_prepack).");
  q.def(
      "conv_transpose",
      [](const Tensor& x, const PackedConvTransposeWeight& w, double scale, int64_t zero_point) {
        py::gil_scoped_release release;
        return native::conv_transpose_quantized(x, w, scale, zero_point);
      },
      py::arg("input"), py::arg("packed"), py::arg("output_scale"), py::arg("output_zero_point"),
      "quint8 y = requant(conv_transpose(dequant(x), dequant(w)) + bias) "
      "(quantized::conv_transpose2d); the result is channels-last in memory.");
  for (const char* name : {"add", "add_relu", "mul", "mul_relu"}) {
    const bool relu = std::string(name).find("relu") != std::string::npos;
    const bool mul = name[0] == 'm';
    q.def(
        name,
        [relu, mul](const Tensor& a, const Tensor& b, double scale, int64_t zero_point) {
          py::gil_scoped_release release;
          return mul ? native::quantized_mul(a, b, scale, zero_point, relu)
                     : native::quantized_add(a, b, scale, zero_point, relu);
        },
        py::arg("qa"), py::arg("qb"), py::arg("scale"), py::arg("zero_point"),
        "quint8 requant(op(dequant(a), dequant(b))) with the output's scale and zero point "
        "(quantized::add & co.); a channels-last pair stays channels-last.");
  }
  using native::PackedEmbeddingWeight;
  py::class_<PackedEmbeddingWeight, std::shared_ptr<PackedEmbeddingWeight>>(q,
                                                                            "EmbeddingPackedWeight")
      .def("unpack", [](const PackedEmbeddingWeight& w) { return w.weight; })
      .def_property_readonly("bit_rate", [](const PackedEmbeddingWeight& w) { return w.bits; })
      .def_property_readonly("num_embeddings",
                             [](const PackedEmbeddingWeight& w) { return w.rows; })
      .def_property_readonly("embedding_dim", [](const PackedEmbeddingWeight& w) { return w.dim; })
      .def(py::pickle([](const PackedEmbeddingWeight& w) { return py::make_tuple(w.weight); },
                      [](const py::tuple& t) {
                        EMBER_CHECK(t.size() == 1, "[EmbeddingPackedWeight] bad pickled state");
                        return native::pack_embedding_weight(t[0].cast<Tensor>());
                      }));
  q.def(
      "embedding_bag_prepack",
      [](const Tensor& qweight) {
        py::gil_scoped_release release;
        return native::pack_embedding_weight(qweight);
      },
      py::arg("weight"),
      "Packs a quint8 / quint4x2 (num_embeddings, dim) weight quantized per row with float zero "
      "points (quantized::embedding_bag_prepack).");
  q.def(
      "embedding",
      [](const PackedEmbeddingWeight& w, const Tensor& indices) {
        py::gil_scoped_release release;
        return native::embedding_quantized(w, indices);
      },
      py::arg("packed"), py::arg("indices"));
  q.def(
      "embedding_bag",
      [](const PackedEmbeddingWeight& w, const Tensor& indices, py::handle offsets, int64_t mode,
         py::handle per_sample_weights, bool include_last_offset, py::handle padding_idx) {
        const Tensor off = opt_tensor(offsets, "embedding_bag", "offsets");
        const Tensor psw = opt_tensor(per_sample_weights, "embedding_bag", "per_sample_weights");
        std::optional<int64_t> pad;
        if (!padding_idx.is_none()) pad = padding_idx.cast<int64_t>();
        py::gil_scoped_release release;
        return native::embedding_bag_quantized(w, indices, off, mode, psw, include_last_offset,
                                               pad);
      },
      py::arg("packed"), py::arg("indices"), py::arg("offsets"), py::arg("mode") = 0,
      py::arg("per_sample_weights") = py::none(), py::arg("include_last_offset") = false,
      py::arg("padding_idx") = py::none());
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
