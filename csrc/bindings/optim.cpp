// ember._C._optim: the fused optimizer steps behind ember.optim (ops/optim_steps.h). One call
// per parameter group; the GIL is released while a large group is updated.
#include "api/optim_steps.h"
#include "bindings/pybind_ember.h"

namespace ember {

namespace {

// A list of tensors in which None stands for "no tensor yet" (e.g. SGD's first momentum step).
std::vector<Tensor> tensor_list_or_none(py::handle h, const char* op, const char* what) {
  if (h.is_none()) return {};
  if (is_tensor(h) || !PySequence_Check(h.ptr()) || PyUnicode_Check(h.ptr())) {
    throw py::type_error(str_cat("[", op, "] ", what, " must be a list of Tensors, not ",
                                 Py_TYPE(h.ptr())->tp_name));
  }
  std::vector<Tensor> out;
  size_t i = 0;
  for (py::handle item : py::reinterpret_borrow<py::sequence>(h)) {
    if (item.is_none()) {
      out.emplace_back();
    } else if (is_tensor(item)) {
      out.push_back(item.cast<Tensor>());
    } else {
      throw py::type_error(str_cat("[", op, "] ", what, "[", i, "] must be a Tensor, not ",
                                   Py_TYPE(item.ptr())->tp_name));
    }
    ++i;
  }
  return out;
}

int64_t total_numel(const std::vector<Tensor>& params) {
  int64_t n = 0;
  for (const Tensor& p : params) n += p.defined() ? p.numel() : 0;
  return n;
}

}  // namespace

void init_optim(py::module_& m) {
  py::module_ o = m.def_submodule("_optim", "Fused optimizer steps (one call per param group)");
  using namespace optim;  // NOLINT: option structs

  o.def(
      "sgd_step",
      [](py::handle params, py::handle grads, py::handle momentum_buffers, double lr,
         double momentum, double dampening, double weight_decay, bool nesterov, bool maximize) {
        auto ps = tensor_list_or_none(params, "sgd", "params");
        auto gs = tensor_list_or_none(grads, "sgd", "grads");
        auto bs = tensor_list_or_none(momentum_buffers, "sgd", "momentum_buffer_list");
        SgdOptions opt{lr, momentum, dampening, weight_decay, nesterov, maximize};
        auto out = with_gil_released_if(total_numel(ps), [&] { return sgd_step(ps, gs, bs, opt); });
        py::list result;
        for (const Tensor& t : out) result.append(py::cast(t));
        return result;
      },
      py::arg("params"), py::arg("grads"), py::arg("momentum_buffer_list"), py::kw_only(),
      py::arg("lr"), py::arg("momentum"), py::arg("dampening"), py::arg("weight_decay"),
      py::arg("nesterov"), py::arg("maximize"),
      "SGD step over one group; returns the momentum buffers (new ones where None was given).");

  o.def(
      "adam_step",
      [](py::handle params, py::handle grads, py::handle exp_avgs, py::handle exp_avg_sqs,
         py::handle max_exp_avg_sqs, py::handle steps, double lr, double beta1, double beta2,
         double eps, double weight_decay, bool amsgrad, bool maximize, bool decoupled) {
        const char* op = decoupled ? "adamw" : "adam";
        auto ps = tensor_list_or_none(params, op, "params");
        auto gs = tensor_list_or_none(grads, op, "grads");
        auto m1 = tensor_list_or_none(exp_avgs, op, "exp_avgs");
        auto m2 = tensor_list_or_none(exp_avg_sqs, op, "exp_avg_sqs");
        auto mx = tensor_list_or_none(max_exp_avg_sqs, op, "max_exp_avg_sqs");
        auto st = tensor_list_or_none(steps, op, "state_steps");
        AdamOptions opt{lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, decoupled};
        with_gil_released_if(total_numel(ps), [&] { adam_step(ps, gs, m1, m2, mx, st, opt); });
      },
      py::arg("params"), py::arg("grads"), py::arg("exp_avgs"), py::arg("exp_avg_sqs"),
      py::arg("max_exp_avg_sqs"), py::arg("state_steps"), py::kw_only(), py::arg("lr"),
      py::arg("beta1"), py::arg("beta2"), py::arg("eps"), py::arg("weight_decay"),
      py::arg("amsgrad"), py::arg("maximize"), py::arg("decoupled_weight_decay"),
      "Adam / AdamW step over one group.");

  o.def(
      "rmsprop_step",
      [](py::handle params, py::handle grads, py::handle square_avgs, py::handle grad_avgs,
         py::handle momentum_buffers, py::handle steps, double lr, double alpha, double eps,
         double weight_decay, double momentum, bool centered, bool maximize) {
        const char* op = "rmsprop";
        auto ps = tensor_list_or_none(params, op, "params");
        auto gs = tensor_list_or_none(grads, op, "grads");
        auto sq = tensor_list_or_none(square_avgs, op, "square_avgs");
        auto ga = tensor_list_or_none(grad_avgs, op, "grad_avgs");
        auto bs = tensor_list_or_none(momentum_buffers, op, "momentum_buffer_list");
        auto st = tensor_list_or_none(steps, op, "state_steps");
        RmspropOptions opt{lr, alpha, eps, weight_decay, momentum, centered, maximize};
        with_gil_released_if(total_numel(ps), [&] { rmsprop_step(ps, gs, sq, ga, bs, st, opt); });
      },
      py::arg("params"), py::arg("grads"), py::arg("square_avgs"), py::arg("grad_avgs"),
      py::arg("momentum_buffer_list"), py::arg("state_steps"), py::kw_only(), py::arg("lr"),
      py::arg("alpha"), py::arg("eps"), py::arg("weight_decay"), py::arg("momentum"),
      py::arg("centered"), py::arg("maximize"), "RMSprop step over one group.");

  o.def(
      "adagrad_step",
      [](py::handle params, py::handle grads, py::handle state_sums, py::handle steps, double lr,
         double lr_decay, double weight_decay, double eps, bool maximize) {
        const char* op = "adagrad";
        auto ps = tensor_list_or_none(params, op, "params");
        auto gs = tensor_list_or_none(grads, op, "grads");
        auto ss = tensor_list_or_none(state_sums, op, "state_sums");
        auto st = tensor_list_or_none(steps, op, "state_steps");
        AdagradOptions opt{lr, lr_decay, weight_decay, eps, maximize};
        with_gil_released_if(total_numel(ps), [&] { adagrad_step(ps, gs, ss, st, opt); });
      },
      py::arg("params"), py::arg("grads"), py::arg("state_sums"), py::arg("state_steps"),
      py::kw_only(), py::arg("lr"), py::arg("lr_decay"), py::arg("weight_decay"), py::arg("eps"),
      py::arg("maximize"), "Adagrad step over one group.");

  o.def(
      "adadelta_step",
      [](py::handle params, py::handle grads, py::handle square_avgs, py::handle acc_deltas,
         py::handle steps, double lr, double rho, double eps, double weight_decay, bool maximize) {
        const char* op = "adadelta";
        auto ps = tensor_list_or_none(params, op, "params");
        auto gs = tensor_list_or_none(grads, op, "grads");
        auto sq = tensor_list_or_none(square_avgs, op, "square_avgs");
        auto ad = tensor_list_or_none(acc_deltas, op, "acc_deltas");
        auto st = tensor_list_or_none(steps, op, "state_steps");
        AdadeltaOptions opt{lr, rho, eps, weight_decay, maximize};
        with_gil_released_if(total_numel(ps), [&] { adadelta_step(ps, gs, sq, ad, st, opt); });
      },
      py::arg("params"), py::arg("grads"), py::arg("square_avgs"), py::arg("acc_deltas"),
      py::arg("state_steps"), py::kw_only(), py::arg("lr"), py::arg("rho"), py::arg("eps"),
      py::arg("weight_decay"), py::arg("maximize"), "Adadelta step over one group.");

  o.def(
      "adamax_step",
      [](py::handle params, py::handle grads, py::handle exp_avgs, py::handle exp_infs,
         py::handle steps, double lr, double beta1, double beta2, double eps, double weight_decay,
         bool maximize) {
        const char* op = "adamax";
        auto ps = tensor_list_or_none(params, op, "params");
        auto gs = tensor_list_or_none(grads, op, "grads");
        auto m1 = tensor_list_or_none(exp_avgs, op, "exp_avgs");
        auto mi = tensor_list_or_none(exp_infs, op, "exp_infs");
        auto st = tensor_list_or_none(steps, op, "state_steps");
        AdamaxOptions opt{lr, beta1, beta2, eps, weight_decay, maximize};
        with_gil_released_if(total_numel(ps), [&] { adamax_step(ps, gs, m1, mi, st, opt); });
      },
      py::arg("params"), py::arg("grads"), py::arg("exp_avgs"), py::arg("exp_infs"),
      py::arg("state_steps"), py::kw_only(), py::arg("lr"), py::arg("beta1"), py::arg("beta2"),
      py::arg("eps"), py::arg("weight_decay"), py::arg("maximize"), "Adamax step over one group.");

  o.def(
      "nadam_step",
      [](py::handle params, py::handle grads, py::handle exp_avgs, py::handle exp_avg_sqs,
         py::handle mu_products, py::handle steps, double lr, double beta1, double beta2,
         double eps, double weight_decay, double momentum_decay, bool decoupled, bool maximize) {
        const char* op = "nadam";
        auto ps = tensor_list_or_none(params, op, "params");
        auto gs = tensor_list_or_none(grads, op, "grads");
        auto m1 = tensor_list_or_none(exp_avgs, op, "exp_avgs");
        auto m2 = tensor_list_or_none(exp_avg_sqs, op, "exp_avg_sqs");
        auto mu = tensor_list_or_none(mu_products, op, "mu_products");
        auto st = tensor_list_or_none(steps, op, "state_steps");
        NadamOptions opt{lr, beta1, beta2, eps, weight_decay, momentum_decay, decoupled, maximize};
        with_gil_released_if(total_numel(ps), [&] { nadam_step(ps, gs, m1, m2, mu, st, opt); });
      },
      py::arg("params"), py::arg("grads"), py::arg("exp_avgs"), py::arg("exp_avg_sqs"),
      py::arg("mu_products"), py::arg("state_steps"), py::kw_only(), py::arg("lr"),
      py::arg("beta1"), py::arg("beta2"), py::arg("eps"), py::arg("weight_decay"),
      py::arg("momentum_decay"), py::arg("decoupled_weight_decay"), py::arg("maximize"),
      "NAdam step over one group.");

  o.def(
      "radam_step",
      [](py::handle params, py::handle grads, py::handle exp_avgs, py::handle exp_avg_sqs,
         py::handle steps, double lr, double beta1, double beta2, double eps, double weight_decay,
         bool decoupled, bool maximize) {
        const char* op = "radam";
        auto ps = tensor_list_or_none(params, op, "params");
        auto gs = tensor_list_or_none(grads, op, "grads");
        auto m1 = tensor_list_or_none(exp_avgs, op, "exp_avgs");
        auto m2 = tensor_list_or_none(exp_avg_sqs, op, "exp_avg_sqs");
        auto st = tensor_list_or_none(steps, op, "state_steps");
        RadamOptions opt{lr, beta1, beta2, eps, weight_decay, decoupled, maximize};
        with_gil_released_if(total_numel(ps), [&] { radam_step(ps, gs, m1, m2, st, opt); });
      },
      py::arg("params"), py::arg("grads"), py::arg("exp_avgs"), py::arg("exp_avg_sqs"),
      py::arg("state_steps"), py::kw_only(), py::arg("lr"), py::arg("beta1"), py::arg("beta2"),
      py::arg("eps"), py::arg("weight_decay"), py::arg("decoupled_weight_decay"),
      py::arg("maximize"), "RAdam step over one group.");
}

}  // namespace ember
