// Binding of the transformer encoder fastpath (ops/nn/transformer.h) as
// ember._C._nn._transformer_encoder_fastpath; nn.TransformerEncoder(Layer) call it when
// ember.nn.why_not_fastpath finds no reason not to.
#include "ops/nn/transformer.h"
#include "bindings/pybind_ember.h"
#include "bindings/reduce_helpers.h"

namespace ember {
namespace {

constexpr const char* kOp = "_transformer_encoder_fastpath";

// A layer tuple from Python: (in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias,
// norm1_weight, norm1_bias, norm2_weight, norm2_bias, linear1_weight, linear1_bias,
// linear2_weight, linear2_bias, num_heads, norm_first, activation (1 relu, 2 gelu), norm1_eps,
// norm2_eps); tensors may be None.
native::EncoderLayerWeights layer_from(py::handle h) {
  const py::tuple t = py::reinterpret_borrow<py::object>(h).cast<py::tuple>();
  EMBER_CHECK(t.size() == 17, "[", kOp, "] a layer is a tuple of 17 fields, got ", t.size());
  native::EncoderLayerWeights w;
  Tensor* fields[] = {&w.in_proj_weight, &w.in_proj_bias, &w.out_proj_weight, &w.out_proj_bias,
                      &w.norm1_weight,   &w.norm1_bias,   &w.norm2_weight,    &w.norm2_bias,
                      &w.linear1_weight, &w.linear1_bias, &w.linear2_weight,  &w.linear2_bias};
  // in_proj, out_proj, linear1 and linear2 may come as the packed int8 weights of a
  // dynamically quantized module (their bias fields are then None: the packing holds the bias).
  std::shared_ptr<native::PackedLinearWeight>* packed[12] = {};
  packed[0] = &w.in_proj_packed;
  packed[2] = &w.out_proj_packed;
  packed[8] = &w.linear1_packed;
  packed[10] = &w.linear2_packed;
  for (size_t i = 0; i < 12; ++i) {
    if (packed[i] && py::isinstance<native::PackedLinearWeight>(t[i])) {
      *packed[i] = t[i].cast<std::shared_ptr<native::PackedLinearWeight>>();
      continue;
    }
    *fields[i] = opt_tensor(t[i], kOp, "a layer parameter");
  }
  w.num_heads = t[12].cast<int64_t>();
  w.norm_first = t[13].cast<bool>();
  const int act = t[14].cast<int>();
  EMBER_CHECK(act == 1 || act == 2, "[", kOp, "] activation must be 1 (relu) or 2 (gelu), got ",
              act);
  w.activation = static_cast<native::GemmActivation>(act);
  w.norm1_eps = t[15].cast<double>();
  w.norm2_eps = t[16].cast<double>();
  return w;
}

}  // namespace

void init_nn_transformer(py::module_& m) {
  py::module_ nn = m.attr("_nn").cast<py::module_>();
  nn.def(
      "_transformer_encoder_fastpath",
      [](const Tensor& src, const py::list& layers, py::handle key_padding_mask,
         py::handle attn_mask, bool is_causal, py::handle pack_padding) {
        std::vector<native::EncoderLayerWeights> ws;
        for (py::handle h : layers) ws.push_back(layer_from(h));
        native::EncoderMasks masks;
        masks.key_padding = opt_tensor(key_padding_mask, kOp, "key_padding_mask");
        masks.attn_mask = opt_tensor(attn_mask, kOp, "attn_mask");
        masks.is_causal = is_causal;
        const Tensor pack = opt_tensor(pack_padding, kOp, "pack_padding");
        py::gil_scoped_release release;
        return native::transformer_encoder_fastpath(src, ws, masks, pack);
      },
      py::arg("src"), py::arg("layers"), py::arg("key_padding_mask") = py::none(),
      py::arg("attn_mask") = py::none(), py::arg("is_causal") = false,
      py::arg("pack_padding") = py::none(),
      "Runs encoder layers (tuples of parameters) over src (N, S, E) without autograd: fused "
      "GEMM epilogues, fused attention, and with pack_padding (bool (N, S), True = padding) the "
      "real tokens packed into one variable-length batch (zeros at padded positions).");
}

}  // namespace ember
