// Derivatives of embedding and embedding_bag. As for the activations (Note [Activation double
// backward] in nn_activation.cpp), the weight's gradient comes from the fused accumulation kernel
// unless the backward itself is recorded (create_graph=True), where the same sums are written with
// index_select / index_add / index_put so that they can be differentiated again.
#include "autograd/derivatives/nn/embedding.h"

#include "api/compare.h"
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/indexing.h"
#include "api/range_factories.h"
#include "api/reduce.h"
#include "api/unary.h"
#include "api/views.h"
#include "autograd/record.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::GradMode;
using autograd::variable_list;

namespace {

Tensor long_number(int64_t v) {
  return wrap_scalar(Scalar(v));
}

// embedding's weight gradient with public ops.
Tensor embedding_backward_composite(const Tensor& grad, const Tensor& indices, int64_t num_weights,
                                    int64_t padding_idx, bool scale_grad_by_freq) {
  const Tensor idx = reshape(to_dtype(indices, ScalarType::Int64), {-1});
  const int64_t n = idx.numel();
  const int64_t dim = grad.size(grad.dim() - 1);
  Tensor g = reshape(grad, {n, dim});
  const TensorOptions opts(grad.dtype(), grad.device());
  if (padding_idx >= 0) g = mul(g, unsqueeze(ne(idx, long_number(padding_idx)), 1));
  if (scale_grad_by_freq) {
    Tensor counts = index_add(zeros({num_weights}, opts), 0, idx, ones({n}, opts));
    g = div(g, unsqueeze(index_select(counts, 0, idx), 1));
  }
  return index_add(zeros({num_weights, dim}, opts), 0, idx, g);
}

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx,
                 bool scale_grad_by_freq, bool sparse) {
  // The forward rejects any weight but a 2-D one.
  const int64_t num_weights = weight.dim() == 2 ? weight.size(0) : 0;
  auto node = autograd::new_node(
      "EmbeddingBackward0", {weight},
      [num_weights, padding_idx, scale_grad_by_freq](FunctionNode& n, const variable_list& g) {
        const Tensor indices = n.saved(0);
        if (!GradMode::is_enabled()) {
          return variable_list{ember::embedding_dense_backward(g[0], indices, num_weights,
                                                               padding_idx, scale_grad_by_freq)};
        }
        return variable_list{embedding_backward_composite(g[0], indices, num_weights, padding_idx,
                                                          scale_grad_by_freq)};
      });
  node->save(indices);
  if (node->has_forward()) {
    // Linear in weight: the rows of its tangent.
    node->set_jvp([padding_idx, scale_grad_by_freq, sparse](
                      FunctionNode& n, const variable_list& t) -> variable_list {
      if (!t[0].defined()) return {Tensor()};
      return {ember::embedding(t[0], n.saved(0), padding_idx, scale_grad_by_freq, sparse)};
    });
  }
  return autograd::record(node, {weight}, Tensor(), "embedding", [&] {
    return native::embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse);
  });
}

std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(const Tensor& weight,
                                                         const BagLayout& layout,
                                                         const Tensor& per_sample_weights,
                                                         BagArgs args, bool scale_grad_by_freq) {
  Tensor out, offset2bag, bag_size, max_indices;
  {
    autograd::NoGradGuard no_grad;
    std::tie(out, offset2bag, bag_size, max_indices) =
        native::embedding_bag_forward(weight, layout, per_sample_weights, args);
  }
  const int64_t num_weights = weight.size(0), dim = weight.size(1);
  auto node = autograd::new_node(
      "EmbeddingBagBackward0", {weight, per_sample_weights},
      [layout, bag_size, max_indices, args, scale_grad_by_freq, num_weights, dim](
          FunctionNode& n, const variable_list& g) {
        const Tensor w = n.saved(0), psw = n.saved(1);
        const bool need_w = n.should_compute_output(0), need_psw = n.should_compute_output(1);
        if (!GradMode::is_enabled()) {
          auto [gw, gpsw] =
              ember::embedding_bag_backward(g[0], w, layout, bag_size, max_indices, psw, args,
                                            scale_grad_by_freq, need_w, need_psw);
          return variable_list{gw, gpsw};
        }
        variable_list r(2);
        const TensorOptions opts(g[0].dtype(), g[0].device());
        if (need_w && args.mode == BagMode::Max) {
          // grad_weight[max_indices[b, d], d] += grad[b, d] over the flattened weight.
          Tensor cols = arange(0, dim, 1, TensorOptions(ScalarType::Int64));
          Tensor valid = ge(max_indices, long_number(0));
          Tensor flat =
              add(mul(clamp_min(max_indices, Scalar(int64_t(0))), long_number(dim)), cols);
          Tensor values = reshape(mul(g[0], valid), {-1});
          Tensor gw = index_put(zeros({num_weights * dim}, opts), {reshape(flat, {-1})}, values,
                                /*accumulate=*/true);
          r[0] = view(gw, {num_weights, dim});
        } else if (need_w) {
          Tensor coef = embedding_bag_coefficients(layout, bag_size, args, scale_grad_by_freq,
                                                   num_weights, g[0].dtype());
          if (psw.defined()) coef = mul(coef, psw);
          Tensor rows = clamp_min(layout.offset2bag, Scalar(int64_t(0)));
          Tensor contrib = mul(index_select(g[0], 0, rows), unsqueeze(coef, 1));
          r[0] = index_add(zeros({num_weights, dim}, opts), 0, layout.idx, contrib);
        }
        if (need_psw) r[1] = ember::embedding_bag_psw_grad(g[0], w, layout, args);
        return r;
      });
  node->save(weight);
  node->save(per_sample_weights);
  autograd::set_history_all(node, {out, offset2bag, bag_size, max_indices});
  return {out, offset2bag, bag_size, max_indices};
}

}  // namespace derivatives
}  // namespace ember
