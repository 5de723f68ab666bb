// Bindings of the loss ops (ops/nn/loss.h, ops/nn/loss_ctc.h), with PyTorch's signatures:
// ember._C._nn.{mse_loss, l1_loss, smooth_l1_loss, huber_loss, binary_cross_entropy, nll_loss,
// nll_loss_nd, cross_entropy_loss} (reduction as the enum 0 / 1 / 2), and the top-level
// ember.binary_cross_entropy_with_logits and ember.ctc_loss as torch has them. The
// ember.nn.functional wrappers (python/ember/nn/functional/_loss.py) call these.
#include "api/nn/loss.h"
#include "api/nn/loss_ctc.h"
#include "api/views.h"
#include "bindings/reduce_helpers.h"

namespace ember {

namespace {

// input_lengths / target_lengths: a tensor (0-d or 1-d, any integer or floating dtype), an int
// or a sequence of ints.
DimVector parse_lengths(py::handle h, const char* what) {
  if (is_tensor(h)) {
    Tensor t = contiguous(to_dtype(h.cast<Tensor>(), ScalarType::Int64));
    EMBER_CHECK(t.dim() <= 1, "[ctc_loss] ", what, " must be 0-D or 1-D, got ", t.dim(), "-D");
    const int64_t* p = t.data<int64_t>();
    return DimVector(IntArrayRef(p, static_cast<size_t>(t.numel())));
  }
  return parse_int_sequence(h, "ctc_loss", what);
}

using PairLossFn = Tensor (*)(const Tensor&, const Tensor&, int64_t);

void def_pair_loss(py::module_& nn, const char* name, PairLossFn f) {
  nn.def(
      name,
      [f](const Tensor& input, const Tensor& target, int64_t reduction) {
        return nogil(input.numel(), [&] { return f(input, target, reduction); });
      },
      py::arg("input"), py::arg("target"), py::arg("reduction") = 1);
}

}  // namespace

void init_nn_loss(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& /*cls*/) {
  py::module_ nn = m.def_submodule("_nn", "Ember's torch._C._nn: functional building blocks");
  def_pair_loss(nn, "mse_loss", &mse_loss);
  def_pair_loss(nn, "l1_loss", &l1_loss);
  nn.def(
      "smooth_l1_loss",
      [](const Tensor& input, const Tensor& target, int64_t reduction, double beta) {
        return nogil(input.numel(), [&] { return smooth_l1_loss(input, target, reduction, beta); });
      },
      py::arg("input"), py::arg("target"), py::arg("reduction") = 1, py::arg("beta") = 1.0);
  nn.def(
      "huber_loss",
      [](const Tensor& input, const Tensor& target, int64_t reduction, double delta) {
        return nogil(input.numel(), [&] { return huber_loss(input, target, reduction, delta); });
      },
      py::arg("input"), py::arg("target"), py::arg("reduction") = 1, py::arg("delta") = 1.0);
  nn.def(
      "binary_cross_entropy",
      [](const Tensor& input, const Tensor& target, py::handle weight, int64_t reduction) {
        Tensor w = opt_tensor(weight, "binary_cross_entropy", "weight");
        return nogil(input.numel(),
                     [&] { return binary_cross_entropy(input, target, w, reduction); });
      },
      py::arg("input"), py::arg("target"), py::arg("weight") = py::none(),
      py::arg("reduction") = 1);
  auto nll = [](const Tensor& input, const Tensor& target, py::handle weight, int64_t reduction,
                int64_t ignore_index) {
    Tensor w = opt_tensor(weight, "nll_loss", "weight");
    return nogil(input.numel(),
                 [&] { return nll_loss(input, target, w, reduction, ignore_index); });
  };
  for (const char* name : {"nll_loss", "nll_loss_nd"}) {
    nn.def(name, nll, py::arg("input"), py::arg("target"), py::arg("weight") = py::none(),
           py::arg("reduction") = 1, py::arg("ignore_index") = -100);
  }
  nn.def(
      "cross_entropy_loss",
      [](const Tensor& input, const Tensor& target, py::handle weight, int64_t reduction,
         int64_t ignore_index, double label_smoothing) {
        Tensor w = opt_tensor(weight, "cross_entropy", "weight");
        return nogil(input.numel(), [&] {
          return cross_entropy(input, target, w, reduction, ignore_index, label_smoothing);
        });
      },
      py::arg("input"), py::arg("target"), py::arg("weight") = py::none(), py::arg("reduction") = 1,
      py::arg("ignore_index") = -100, py::arg("label_smoothing") = 0.0);

  m.def(
      "binary_cross_entropy_with_logits",
      [](const Tensor& input, const Tensor& target, py::handle weight, py::handle pos_weight,
         int64_t reduction) {
        const char* op = "binary_cross_entropy_with_logits";
        Tensor w = opt_tensor(weight, op, "weight");
        Tensor pw = opt_tensor(pos_weight, op, "pos_weight");
        return nogil(input.numel(), [&] {
          return binary_cross_entropy_with_logits(input, target, w, pw, reduction);
        });
      },
      py::arg("input"), py::arg("target"), py::arg("weight") = py::none(),
      py::arg("pos_weight") = py::none(), py::arg("reduction") = 1);

  m.def(
      "ctc_loss",
      [](const Tensor& log_probs, const Tensor& targets, py::handle input_lengths,
         py::handle target_lengths, int64_t blank, int64_t reduction, bool zero_infinity) {
        DimVector il = parse_lengths(input_lengths, "input_lengths");
        DimVector tl = parse_lengths(target_lengths, "target_lengths");
        return nogil(log_probs.numel(), [&] {
          return ctc_loss(log_probs, targets, il, tl, blank, reduction, zero_infinity);
        });
      },
      py::arg("log_probs"), py::arg("targets"), py::arg("input_lengths"), py::arg("target_lengths"),
      py::arg("blank") = 0, py::arg("reduction") = 1, py::arg("zero_infinity") = false);
}

}  // namespace ember
