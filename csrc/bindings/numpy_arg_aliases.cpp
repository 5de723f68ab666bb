// NumPy's argument names, accepted wherever PyTorch accepts them: `axis` for `dim`, `keepdims`
// for `keepdim`, `x`/`a`/`x1` for `input` and `x2` for `other` (x.sum(axis=1),
// torch.mean(a, axis=0, keepdims=True)). PyTorch's argument parser maps these names for every
// op; pybind11 matches keywords by exact name, so after every binding is defined this pass
// replaces the entry point of each function with one that renames such keywords, when the
// function takes the canonical name and not the alias, before pybind11's dispatcher sees them.
// Calls without keywords go straight to the dispatcher.
#include <cstring>
#include <string>

#include "bindings/binding_walk.h"

namespace ember {

namespace {

struct Alias {
  const char* alias;
  const char* canonical;
};
constexpr Alias kAliases[] = {{"axis", "dim"}, {"keepdims", "keepdim"}, {"x", "input"},
                              {"a", "input"},  {"x1", "input"},         {"x2", "other"}};

PyCFunctionWithKeywords g_dispatcher = nullptr;  // pybind11's, the same for every function

bool takes(const py::detail::function_record* rec, const char* name) {
  for (; rec != nullptr; rec = rec->next) {
    for (const auto& arg : rec->args) {
      if (arg.name != nullptr && std::strcmp(arg.name, name) == 0) return true;
    }
  }
  return false;
}

// kwargs with the aliases this function does not take renamed (a new dict), or nullptr when
// nothing needs renaming.
PyObject* renamed_kwargs(PyObject* self, PyObject* kwargs) {
  PyObject* renamed = nullptr;
  const py::detail::function_record* rec = py::detail::function_record_ptr_from_PyObject(self);
  for (const Alias& a : kAliases) {
    PyObject* value = PyDict_GetItemString(kwargs, a.alias);  // borrowed
    if (value == nullptr || PyDict_GetItemString(kwargs, a.canonical) != nullptr) continue;
    if (rec == nullptr || takes(rec, a.alias) || !takes(rec, a.canonical)) continue;
    if (renamed == nullptr) {
      renamed = PyDict_Copy(kwargs);
      if (renamed == nullptr) return nullptr;
    }
    Py_INCREF(value);
    PyDict_DelItemString(renamed, a.alias);
    PyDict_SetItemString(renamed, a.canonical, value);
    Py_DECREF(value);
  }
  return renamed;
}

PyObject* aliasing_dispatcher(PyObject* self, PyObject* args, PyObject* kwargs) {
  if (kwargs != nullptr && PyDict_GET_SIZE(kwargs) > 0) {
    PyObject* renamed = renamed_kwargs(self, kwargs);
    if (renamed != nullptr) {
      PyObject* result = g_dispatcher(self, args, renamed);
      Py_DECREF(renamed);
      return result;
    }
    if (PyErr_Occurred()) return nullptr;
  }
  return g_dispatcher(self, args, kwargs);
}

void add_aliases(py::handle fn) {
  py::detail::function_record* rec = function_records(fn);
  if (rec == nullptr || rec->def == nullptr) return;
  auto* current =
      reinterpret_cast<PyCFunctionWithKeywords>(reinterpret_cast<void (*)()>(rec->def->ml_meth));
  if (current == &aliasing_dispatcher) return;
  if (g_dispatcher == nullptr) g_dispatcher = current;
  if (current != g_dispatcher) return;  // not pybind11's dispatcher: leave it alone
  bool takes_any = false;
  for (const Alias& a : kAliases) takes_any = takes_any || takes(rec, a.canonical);
  if (!takes_any) return;
  rec->def->ml_meth =
      reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&aliasing_dispatcher));
}

}  // namespace

void add_numpy_argument_aliases(py::module_& m, py::handle tensor_class) {
  for_each_binding(m, tensor_class, [](const BindingVisit& v) { add_aliases(v.function); });
}

}  // namespace ember
