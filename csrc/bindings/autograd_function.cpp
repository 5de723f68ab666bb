// ember.autograd.Function: the node of a Python-defined function (PyFunctionNode), created by
// Function.apply (python/ember/autograd/function.py). Its apply() takes the GIL and calls the
// Python backward; the engine releases the GIL around everything else.
#include <pybind11/stl.h>

#include "api/creation.h"
#include "api/views.h"
#include "autograd/forward_ad.h"
#include "autograd/functions.h"
#include "autograd/grad_mode.h"
#include "autograd/record.h"
#include "autograd/saved_variable.h"
#include "autograd/variable.h"
#include "bindings/pybind_ember.h"
#include "core/shape.h"

namespace ember {

namespace ag = autograd;

namespace {

// A Python object owned from C++: released with the GIL held (nodes die on any thread).
using PyRef = std::shared_ptr<py::object>;
PyRef hold_py(py::object o) {
  return PyRef(new py::object(std::move(o)), [](py::object* p) {
    py::gil_scoped_acquire gil;
    delete p;
  });
}

class PyFunctionNode : public ag::Node {
 public:
  PyFunctionNode(std::string name, py::object backward, std::vector<bool> is_tensor_arg)
      : name_(std::move(name)),
        backward_(hold_py(std::move(backward))),
        is_tensor_arg_(std::move(is_tensor_arg)) {}

  std::string name() const override { return name_; }

  ag::variable_list apply(ag::variable_list&& grads) override {
    py::gil_scoped_acquire gil;
    py::tuple py_grads(grads.size());
    for (size_t i = 0; i < grads.size(); ++i) {
      if (!grads[i].defined() && materialize_grads && input_metadata(i).defined) {
        const ag::InputMetadata& md = input_metadata(i);
        grads[i] = zeros(md.shape, TensorOptions(md.dtype));
      }
      py_grads[i] = grads[i].defined() ? py::cast(grads[i]) : py::none();
    }
    py::object result = (*backward_)(py_grads);
    py::tuple res =
        py::isinstance<py::tuple>(result) ? result.cast<py::tuple>() : py::make_tuple(result);
    size_t expected = is_tensor_arg_.size();
    // Extra trailing Nones are allowed, as in PyTorch.
    size_t given = res.size();
    while (given > expected && res[given - 1].is_none()) --given;
    EMBER_CHECK(given == expected, "function ", name_,
                " returned an incorrect number of gradients (expected ", expected, ", got ",
                res.size(), ")");
    ag::variable_list out;
    for (size_t i = 0; i < expected; ++i) {
      py::handle g = res[i];
      if (!is_tensor_arg_[i]) {
        EMBER_CHECK(g.is_none(), "function ", name_,
                    " returned a gradient different than None at position ", i + 1,
                    ", but the corresponding forward input was not a Variable");
        continue;
      }
      if (g.is_none()) {
        out.emplace_back();
      } else {
        EMBER_CHECK_T(TypeError, is_tensor(g), "function ", name_,
                      " returned a non-Tensor gradient at position ", i + 1);
        out.push_back(g.cast<Tensor>());
      }
    }
    return out;
  }

  void release_variables() override {
    for (auto& s : saved_) s.reset_data();
    released_ = true;
  }

  std::vector<ag::SavedVariable> saved_;
  bool released_ = false;
  bool materialize_grads = true;

 private:
  std::string name_;
  PyRef backward_;
  std::vector<bool> is_tensor_arg_;
};

// Raised when something differentiates through a @once_differentiable backward.
class DelayedError : public ag::Node {
 public:
  explicit DelayedError(std::string msg) : msg_(std::move(msg)) {}
  ag::variable_list apply(ag::variable_list&&) override { throw Error(msg_); }
  std::string name() const override { return "DelayedError"; }

 private:
  std::string msg_;
};

// What Python keeps of the node (in ctx): weak, so ctx does not keep the graph alive.
struct NodeRef {
  std::weak_ptr<PyFunctionNode> node;
  std::shared_ptr<PyFunctionNode> lock(const char* what) const {
    auto n = node.lock();
    EMBER_CHECK(n, "[autograd.Function] ", what, ": the function's graph has been freed");
    return n;
  }
};

}  // namespace

void init_autograd_function(py::module_& m) {
  py::module_ am = m.attr("_autograd").cast<py::module_>();

  py::class_<NodeRef>(am, "_FunctionNodeRef")
      .def("saved_tensors",
           [](const NodeRef& r) {
             auto n = r.lock("saved_tensors");
             EMBER_CHECK(!n->released_,
                         "Trying to backward through the graph a second time (or directly access "
                         "saved tensors after they have already been freed). Saved intermediate "
                         "values of the graph are freed when you call .backward() or "
                         "autograd.grad(). Specify retain_graph=True if you need to backward "
                         "through the graph a second time or if you need to access saved tensors "
                         "after calling backward.");
             py::tuple t(n->saved_.size());
             for (size_t i = 0; i < n->saved_.size(); ++i) {
               Tensor v = n->saved_[i].unpack(n);
               t[i] = v.defined() ? py::cast(v) : py::none();
             }
             return t;
           })
      .def("node", [](const NodeRef& r) -> std::shared_ptr<ag::Node> { return r.node.lock(); })
      .def("set_materialize_grads", [](const NodeRef& r, bool v) {
        r.lock("set_materialize_grads")->materialize_grads = v;
      });

  // Builds the node of one Function.apply call: next edges from the tensor args.
  am.def("_make_function_node", [](const std::string& name, py::object backward, py::list args) {
    std::vector<bool> is_tensor_arg;
    ag::edge_list edges;
    for (py::handle a : args) {
      const bool t = is_tensor(a);
      is_tensor_arg.push_back(t);
      if (t) edges.push_back(ag::gradient_edge(a.cast<Tensor>()));
    }
    auto node = std::make_shared<PyFunctionNode>(name, std::move(backward), is_tensor_arg);
    node->set_next_edges(std::move(edges));
    ag::attach_trace(*node);
    return py::make_tuple(NodeRef{node}, std::static_pointer_cast<ag::Node>(node));
  });

  // Attaches the node to the outputs of forward. kinds[i]: 0 plain, 1 dirty (an input modified
  // in place), 2 non-differentiable.
  am.def("_set_function_outputs",
         [](const NodeRef& ref, const std::vector<Tensor>& outputs, const std::vector<int>& kinds) {
           auto node = ref.lock("apply");
           for (size_t i = 0; i < outputs.size(); ++i) {
             const Tensor& t = outputs[i];
             const bool differentiable = is_floating(t.dtype()) || ember::is_complex(t.dtype());
             if (kinds[i] == 2 || !differentiable) {
               node->add_input_metadata_undefined();
               continue;
             }
             if (kinds[i] == 1) {
               ag::check_inplace(t);
               ag::rebase_history(t, node);
             } else {
               ag::set_history(t, node);
             }
           }
         });

  am.def("_save_for_backward", [](const NodeRef& ref, const std::vector<py::object>& tensors,
                                  const std::vector<Tensor>& outputs) {
    auto node = ref.lock("save_for_backward");
    node->saved_.clear();
    for (const py::object& o : tensors) {
      if (o.is_none()) {
        node->saved_.emplace_back();
        continue;
      }
      EMBER_CHECK_T(TypeError, is_tensor(o),
                    "save_for_backward can only save variables, but argument is of type ",
                    py::str(py::type::of(o).attr("__name__")).cast<std::string>());
      Tensor t = o.cast<Tensor>();
      bool is_output = false;
      for (const Tensor& out : outputs) is_output = is_output || out.is_same(t);
      node->saved_.emplace_back(t, is_output);
    }
  });

  // ---- forward mode: Function.jvp (docs/design/forward-ad.md) ----
  namespace fwd = ag::forward_ad;

  // The visible levels at which some tensor in `args` carries a tangent, innermost last.
  am.def("_function_dual_levels", [](const std::vector<py::object>& args) {
    std::vector<uint64_t> out;
    if (!fwd::any_level_active()) return out;
    for (uint64_t level : fwd::visible_levels()) {
      for (const py::object& a : args) {
        if (is_tensor(a) && fwd::tangent(a.cast<Tensor>(), level).defined()) {
          out.push_back(level);
          break;
        }
      }
    }
    return out;
  });

  // The tangent of each arg at `level`: a tensor, or None (no tangent, or not a tensor).
  am.def("_function_tangents", [](const std::vector<py::object>& args, uint64_t level) {
    py::list out;
    for (const py::object& a : args) {
      Tensor t = is_tensor(a) ? fwd::tangent(a.cast<Tensor>(), level) : Tensor();
      out.append(t.defined() ? py::cast(t) : py::none());
    }
    return out;
  });

  // Calls fn() with `level` and every level above it hidden: the ops inside neither read nor
  // make tangents at those levels (forward runs with all of them hidden, jvp with its own).
  am.def("_call_hiding_dual_levels", [](uint64_t level, const py::function& fn) {
    fwd::HideLevelsGuard hide(level);
    return fn();
  });

  // Gives output `out` (number `position` of forward's outputs) the tangent jvp returned for it
  // at `level`, with PyTorch's checks.
  am.def("_set_function_tangent", [](const Tensor& out, const py::object& tangent, uint64_t level,
                                     int64_t position, bool differentiable) {
    if (tangent.is_none()) return;
    EMBER_CHECK(is_tensor(tangent), "expected Variable or None (got ",
                py::str(py::type::of(tangent).attr("__name__")).cast<std::string>(),
                ") for grad output ", position, ".");
    EMBER_CHECK(differentiable, "Function's jvp returned a gradient at position ", position,
                ", but  the corresponding forward output is not a differentiable Tensor.You "
                "should return None at that position instead.");
    Tensor t = tangent.cast<Tensor>();
    EMBER_CHECK(out.sizes().equals(t.sizes()),
                "Trying to set a forward gradient that has a different size than that of the "
                "original Tensor, this is not supported. Tensor is of size ",
                shape_str(out.sizes()), " while the given forward gradient is of size ",
                shape_str(t.sizes()), ".");
    EMBER_CHECK(is_floating(t.dtype()) || ember::is_complex(t.dtype()),
                "Expected both tensor and its forward grad to be floating point or complex, got a "
                "forward grad of dtype ",
                dtype_name(t.dtype()));
    // The tangent takes the output's dtype and layout (views of the output take the same view
    // of its tangent).
    if (t.dtype() != out.dtype() || !t.strides().equals(out.strides())) {
      Tensor laid_out =
          empty_strided(out.sizes(), out.strides(), TensorOptions(out.dtype(), out.device()));
      ember::copy_(laid_out, t);
      t = laid_out;
    }
    fwd::set_tangent(out, t, level);
  });

  am.def("_delayed_error", [](const std::string& msg, const std::vector<Tensor>& grad_inputs,
                              const std::vector<py::object>& results) {
    auto err = std::make_shared<DelayedError>(msg);
    err->set_next_edges(ag::collect_next_edges(grad_inputs));
    py::list out;
    for (const py::object& r : results) {
      if (r.is_none()) {
        out.append(py::none());
        continue;
      }
      Tensor t = ag::detach(r.cast<Tensor>());
      ag::set_history(t, err);
      out.append(py::cast(t));
    }
    return out;
  });
}

}  // namespace ember
