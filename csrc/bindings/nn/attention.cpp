// Binding of the fused attention kernel under PyTorch's name:
// torch._C._nn... is where PyTorch keeps it as torch.ops.aten._scaled_dot_product_flash_attention_
// for_cpu; ember.nn.functional.scaled_dot_product_attention chooses it (or the math form).
#include "api/nn/attention.h"
#include "bindings/pybind_ember.h"
#include "bindings/reduce_helpers.h"

namespace ember {

void init_nn_attention(py::module_& m) {
  py::module_ nn = m.attr("_nn").cast<py::module_>();
  nn.def(
      "_scaled_dot_product_flash_attention_for_cpu",
      [](const Tensor& q, const Tensor& k, const Tensor& v, double dropout_p, bool is_causal,
         py::handle attn_mask, std::optional<double> scale) {
        EMBER_CHECK(dropout_p == 0.0,
                    "[_scaled_dot_product_flash_attention_for_cpu] the fused CPU kernel has no "
                    "dropout (got dropout_p=",
                    dropout_p, "); scaled_dot_product_attention takes the math form for it");
        Tensor bias =
            opt_tensor(attn_mask, "_scaled_dot_product_flash_attention_for_cpu", "attn_mask");
        const int64_t work = q.numel() * (k.dim() >= 2 ? k.size(k.dim() - 2) : 1);
        return with_gil_released_if(work, [&] {
          return scaled_dot_product_fused_attention(q, k, v, bias, is_causal, scale);
        });
      },
      py::arg("query"), py::arg("key"), py::arg("value"), py::arg("dropout_p") = 0.0,
      py::arg("is_causal") = false, py::kw_only(), py::arg("attn_mask") = py::none(),
      py::arg("scale") = py::none(),
      "(output, logsumexp) of softmax(scale q k^T + attn_mask) v for q (N, Hq, L, E), k (N, Hk, "
      "S, E), v (N, Hk, S, Ev): one blocked kernel that never materialises the L x S scores.");
}

}  // namespace ember
