// Autograd bindings: Tensor.requires_grad / grad / grad_fn / is_leaf / hooks / detach, the Node
// class (grad_fn objects), grad-mode switches and the engine entry point used by
// ember.autograd.backward and ember.autograd.grad.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "api/creation.h"
#include "api/views.h"
#include "autograd/anomaly.h"
#include "autograd/engine.h"
#include "autograd/functions.h"
#include "autograd/grad_mode.h"
#include "autograd/variable.h"
#include "bindings/pybind_ember.h"
#include "core/shape.h"

namespace ember {

namespace ag = autograd;

namespace {

// Python callables kept inside C++ hooks: called with the GIL, released with it.
struct PyCallable {
  explicit PyCallable(py::object f) : fn(new py::object(std::move(f))) {}
  std::shared_ptr<py::object> fn;
};

std::shared_ptr<py::object> hold(py::object f) {
  return std::shared_ptr<py::object>(new py::object(std::move(f)), [](py::object* p) {
    py::gil_scoped_acquire gil;
    delete p;
  });
}

ag::TensorHook tensor_hook(py::object f) {
  auto fn = hold(std::move(f));
  return [fn](const Tensor& g) -> std::optional<Tensor> {
    py::gil_scoped_acquire gil;
    py::object r = (*fn)(g);
    if (r.is_none()) return std::nullopt;
    return r.cast<Tensor>();
  };
}

// A handle whose remove() takes a hook off its node or leaf.
struct HookHandle {
  std::weak_ptr<ag::Node> node;
  TensorImplPtr leaf;  // set for leaf hooks
  uint64_t id = 0;
  bool post_accumulate = false;
  void remove() {
    if (leaf) {
      Tensor t(leaf);
      if (ag::AutogradMeta* m = ag::meta_of(t)) {
        m->leaf_hooks.hooks.erase(id);
        m->post_accumulate_hooks.hooks.erase(id);
      }
      leaf.reset();
      return;
    }
    if (auto n = node.lock()) n->remove_hook(id);
  }
};

py::object node_or_none(const std::shared_ptr<ag::Node>& n) {
  if (!n) return py::none();
  return py::cast(n);
}

std::vector<Tensor> as_tensor_list(py::handle obj) {
  std::vector<Tensor> out;
  if (is_tensor(obj)) {
    out.push_back(obj.cast<Tensor>());
    return out;
  }
  for (py::handle h : obj) out.push_back(h.is_none() ? Tensor() : h.cast<Tensor>());
  return out;
}

}  // namespace

void init_autograd(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  ag::AnomalyMode::set_stack_provider([] {
    py::gil_scoped_acquire gil;
    py::list frames = py::module_::import("traceback").attr("format_stack")();
    std::string s;
    for (py::handle f : frames) s += f.cast<std::string>();
    return s;
  });

  py::class_<HookHandle>(m, "RemovableHandle")
      .def("remove", &HookHandle::remove)
      .def("__enter__", [](HookHandle& h) -> HookHandle& { return h; })
      .def("__exit__", [](HookHandle& h, py::args) { h.remove(); });

  py::class_<ag::Node, std::shared_ptr<ag::Node>>(m, "Node")
      .def("name", &ag::Node::name)
      .def_property_readonly("next_functions",
                             [](const ag::Node& n) {
                               py::tuple t(n.num_outputs());
                               for (size_t i = 0; i < n.num_outputs(); ++i) {
                                 const ag::Edge& e = n.next_edge(i);
                                 t[i] = py::make_tuple(node_or_none(e.function), e.input_nr);
                               }
                               return t;
                             })
      .def_property_readonly(
          "variable",
          [](const ag::Node& n) -> py::object {
            if (auto* acc = dynamic_cast<const ag::AccumulateGrad*>(&n)) {
              return py::cast(acc->variable());
            }
            throw py::attribute_error("'" + n.name() + "' object has no attribute 'variable'");
          })
      .def("register_hook",
           [](ag::Node& n, py::object f) {
             auto fn = hold(std::move(f));
             HookHandle h;
             h.node = n.shared_from_this();
             h.id = n.add_post_hook(
                 [fn](const ag::variable_list& gi,
                      const ag::variable_list& go) -> std::optional<ag::variable_list> {
                   py::gil_scoped_acquire gil;
                   py::object r = (*fn)(py::cast(gi), py::cast(go));
                   if (r.is_none()) return std::nullopt;
                   return as_tensor_list(r);
                 });
             return h;
           })
      .def("register_prehook",
           [](ag::Node& n, py::object f) {
             auto fn = hold(std::move(f));
             HookHandle h;
             h.node = n.shared_from_this();
             h.id = n.add_pre_hook(
                 [fn](const ag::variable_list& go) -> std::optional<ag::variable_list> {
                   py::gil_scoped_acquire gil;
                   py::object r = (*fn)(py::cast(go));
                   if (r.is_none()) return std::nullopt;
                   return as_tensor_list(r);
                 });
             return h;
           })
      .def("__call__",
           [](ag::Node& n, py::args grads) {
             // Called by hand, a node gets what the engine would have checked: one gradient per
             // input, shaped and typed as recorded (the formulas index them without checks).
             // Missing gradients (None) are zeros; all missing gives None, as PyTorch.
             if (grads.size() != n.num_inputs()) {
               throw py::type_error(str_cat("expected ", n.num_inputs(), " arguments, got ",
                                            grads.size(), " instead"));
             }
             ag::variable_list g;
             bool any_defined = false;
             for (size_t i = 0; i < grads.size(); ++i) {
               const ag::InputMetadata& md = n.input_metadata(i);
               if (grads[i].is_none()) {
                 g.push_back(md.defined ? zeros(md.shape, TensorOptions(md.dtype)) : Tensor());
                 continue;
               }
               if (!is_tensor(grads[i])) {
                 throw py::type_error(str_cat("[", n.name(), "] argument ", i,
                                              " must be a Tensor or None, not ",
                                              Py_TYPE(grads[i].ptr())->tp_name));
               }
               Tensor t = grads[i].cast<Tensor>();
               if (md.defined) {
                 EMBER_CHECK(t.sizes().equals(md.shape), "[", n.name(), "] gradient ", i,
                             " has shape ", shape_str(t.sizes()), " but the node expects ",
                             shape_str(md.shape));
                 if (t.dtype() != md.dtype) t = to_dtype(t, md.dtype);
               }
               any_defined = true;
               g.push_back(std::move(t));
             }
             if (!any_defined) return py::object(py::none());
             return py::object(py::cast(n.apply(std::move(g))));
           })
      .def("__repr__", [](py::object self) {
        return "<" + self.cast<ag::Node&>().name() + " object at " +
               py::str(py::module_::import("builtins")
                           .attr("hex")(py::module_::import("builtins").attr("id")(self)))
                   .cast<std::string>() +
               ">";
      });

  cls.def_property(
      "requires_grad", [](const Tensor& t) { return ag::requires_grad(t); },
      [](const Tensor& t, bool flag) { ag::set_requires_grad(t, flag, "requires_grad"); });
  cls.def(
      "requires_grad_",
      [](const Tensor& t, bool flag) {
        ag::set_requires_grad(t, flag, "requires_grad_");
        return t;
      },
      py::arg("requires_grad") = true);
  cls.def_property(
      "grad", [](const Tensor& t) { return ag::grad(t); },
      [](const Tensor& t, py::object g) {
        ag::set_grad(t, g.is_none() ? Tensor() : g.cast<Tensor>());
      });
  cls.def_property_readonly("grad_fn",
                            [](const Tensor& t) { return node_or_none(ag::grad_fn(t)); });
  cls.def_property_readonly("is_leaf", [](const Tensor& t) { return ag::is_leaf(t); });
  cls.def_property_readonly("output_nr", [](const Tensor& t) { return ag::output_nr(t); });
  cls.def_property_readonly("retains_grad", [](const Tensor& t) {
    const ag::AutogradMeta* m = ag::meta_of(t);
    return m && m->retains_grad;
  });
  cls.def("retain_grad", [](const Tensor& t) { ag::retain_grad(t); });
  cls.def("detach", [](const Tensor& t) { return ag::detach(t); });
  cls.def("detach_", [](const Tensor& t) {
    // As PyTorch: a view shares its base's autograd history, so it cannot leave it alone.
    EMBER_CHECK(!t.impl()->view_base(),
                "[detach_] Can't detach views in-place. Use detach() "
                "instead.");
    ag::detach_(t);
    return t;
  });
  cls.def_property_readonly("_base", [](const Tensor& t) -> py::object {
    const auto& b = t.impl()->view_base();
    if (!b) return py::none();
    return py::cast(Tensor(b));
  });
  // Tensor._is_view(): whether this tensor is a view of another (then _base is that one).
  cls.def("_is_view", [](const Tensor& t) { return static_cast<bool>(t.impl()->view_base()); });
  cls.def_property_readonly("is_inference",
                            [](const Tensor& t) { return t.impl()->is_inference(); });
  cls.def("register_hook", [](const Tensor& t, py::object f) {
    EMBER_CHECK(ag::requires_grad(t),
                "cannot register a hook on a tensor that doesn't require gradient");
    HookHandle h;
    if (ag::is_leaf(t)) {
      h.leaf = t.impl_ptr();
      h.id = ag::next_hook_id();
      ag::materialize_meta(t).leaf_hooks.hooks.emplace(h.id, tensor_hook(std::move(f)));
    } else {
      auto fn = ag::grad_fn(t);
      h.node = fn;
      h.id = fn->add_tensor_pre_hook(ag::output_nr(t), tensor_hook(std::move(f)));
    }
    return h;
  });
  cls.def("register_post_accumulate_grad_hook", [](const Tensor& t, py::object f) {
    EMBER_CHECK(ag::requires_grad(t) && ag::is_leaf(t),
                "post accumulate grad hooks cannot be registered on non-leaf tensors");
    auto fn = hold(std::move(f));
    HookHandle h;
    h.leaf = t.impl_ptr();
    h.id = ag::next_hook_id();
    ag::materialize_meta(t).post_accumulate_hooks.hooks.emplace(h.id, [fn](const Tensor& v) {
      py::gil_scoped_acquire gil;
      (*fn)(v);
    });
    return h;
  });

  py::module_ am = m.def_submodule("_autograd", "autograd engine bindings");
  am.def("is_grad_enabled", [] { return ag::GradMode::is_enabled(); });
  am.def("set_grad_enabled", [](bool on) { ag::GradMode::set_enabled(on); });
  am.def("is_inference_mode_enabled", [] { return ag::InferenceMode::is_enabled(); });
  am.def("_set_inference_mode", [](bool on) {
    // Returns the previous (inference, grad) state for the Python context manager to restore.
    auto prev = grad_state::flags();
    if (on) {
      grad_state::flags().inference = true;
      grad_state::flags().grad_enabled = false;
    } else {
      grad_state::flags().inference = false;
    }
    return py::make_tuple(prev.inference, prev.grad_enabled);
  });
  am.def("_restore_state", [](bool inference, bool grad_enabled) {
    grad_state::flags().inference = inference;
    grad_state::flags().grad_enabled = grad_enabled;
  });
  am.def(
      "set_anomaly_enabled",
      [](bool on, bool check_nan) { ag::AnomalyMode::set_enabled(on, check_nan); },
      py::arg("enabled"), py::arg("check_nan") = true);
  am.def("is_anomaly_enabled", [] { return ag::AnomalyMode::is_enabled(); });
  am.def("is_anomaly_check_nan_enabled", [] { return ag::AnomalyMode::should_check_nan(); });
  am.def(
      "run_backward",
      [](const std::vector<Tensor>& tensors, const std::vector<Tensor>& grads, bool keep_graph,
         bool create_graph, const std::vector<Tensor>& inputs, bool allow_unreachable,
         bool accumulate_grad) {
        ag::edge_list roots;
        for (size_t i = 0; i < tensors.size(); ++i) {
          const Tensor& t = tensors[i];
          EMBER_CHECK(ag::requires_grad(t), "element ", i,
                      " of tensors does not require grad and does not have a grad_fn");
          roots.push_back(ag::gradient_edge(t));
        }
        ag::edge_list outputs;
        for (size_t i = 0; i < inputs.size(); ++i) {
          const Tensor& t = inputs[i];
          EMBER_CHECK(ag::requires_grad(t),
                      "One of the differentiated Tensors does not require grad");
          ag::Edge e = ag::gradient_edge(t);
          outputs.push_back(std::move(e));
        }
        ag::variable_list result;
        {
          py::gil_scoped_release nogil;
          result = ag::Engine::get().execute(roots, grads, keep_graph, create_graph,
                                             accumulate_grad, outputs);
        }
        if (!accumulate_grad && !allow_unreachable) {
          for (size_t i = 0; i < result.size(); ++i) {
            EMBER_CHECK(result[i].defined(),
                        "One of the differentiated Tensors appears to not have been used in the "
                        "graph. Set allow_unused=True if this is the desired behavior.");
          }
        }
        py::tuple out(result.size());
        for (size_t i = 0; i < result.size(); ++i) {
          out[i] = result[i].defined() ? py::cast(result[i]) : py::none();
        }
        return out;
      },
      py::arg("tensors"), py::arg("grad_tensors"), py::arg("keep_graph"), py::arg("create_graph"),
      py::arg("inputs"), py::arg("allow_unreachable"), py::arg("accumulate_grad"));
}

}  // namespace ember
