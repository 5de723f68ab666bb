// ember.autograd.Function: the node of a Python-defined function (PyFunctionNode), created by
// Function.apply (python/ember/autograd/function.py). Its apply() takes the GIL and calls the
// Python backward; the engine releases the GIL around everything else.
#include <pybind11/stl.h>

#include "api/creation.h"
#include "autograd/functions.h"
#include "autograd/grad_mode.h"
#include "autograd/record.h"
#include "autograd/saved_variable.h"
#include "autograd/variable.h"
#include "bindings/pybind_ember.h"

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
