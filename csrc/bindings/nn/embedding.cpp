// Embedding bindings: torch.embedding, embedding_renorm_, embedding_bag.
#include "api/nn/embedding.h"
#include "bindings/pybind_ember.h"

namespace ember {

void init_nn_embedding(py::module_& m) {
  m.def(
      "embedding",
      [](const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
         bool sparse) {
        return with_gil_released_if(indices.numel() * weight.size(weight.dim() - 1), [&] {
          return embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse);
        });
      },
      py::arg("weight"), py::arg("indices"), py::arg("padding_idx") = -1,
      py::arg("scale_grad_by_freq") = false, py::arg("sparse") = false,
      "Rows of weight picked by indices: indices.shape + (embedding_dim,).");
  m.def(
      "embedding_renorm_",
      [](py::object self, const Tensor& indices, double max_norm, double norm_type) {
        Tensor w = self.cast<Tensor>();
        embedding_renorm_(w, indices, max_norm, norm_type);
        return self;
      },
      py::arg("input"), py::arg("indices"), py::arg("max_norm"), py::arg("norm_type"));
  m.def(
      "embedding_bag",
      [](const Tensor& weight, const Tensor& indices, const Tensor& offsets,
         bool scale_grad_by_freq, int64_t mode, bool sparse, py::object per_sample_weights,
         bool include_last_offset, std::optional<int64_t> padding_idx) {
        Tensor psw = per_sample_weights.is_none() ? Tensor() : per_sample_weights.cast<Tensor>();
        return embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, psw,
                             include_last_offset, padding_idx);
      },
      py::arg("weight"), py::arg("indices"), py::arg("offsets"),
      py::arg("scale_grad_by_freq") = false, py::arg("mode") = 0, py::arg("sparse") = false,
      py::arg("per_sample_weights") = py::none(), py::arg("include_last_offset") = false,
      py::arg("padding_idx") = py::none(),
      "(output, offset2bag, bag_size, max_indices); mode 0 sum, 1 mean, 2 max.");
}

}  // namespace ember
