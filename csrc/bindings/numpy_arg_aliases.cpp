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

// Whether a keyword could be an alias: compared by length first, since the usual keywords
// (dim, keepdim, dtype, out) never match and most calls must pay next to nothing here.
bool may_be_alias(PyObject* key) {
  if (!PyUnicode_Check(key)) return false;
  const Py_ssize_t n = PyUnicode_GET_LENGTH(key);
  if (n != 1 && n != 2 && n != 4 && n != 8) return false;
  for (const Alias& a : kAliases) {
    if (PyUnicode_CompareWithASCIIString(key, a.alias) == 0) return true;
  }
  return false;
}

// kwargs with the aliases this function does not take renamed (a new dict), or nullptr when
// nothing needs renaming (or on error, with the error set).
PyObject* renamed_kwargs(PyObject* self, PyObject* kwargs) {
  bool any = false;
  Py_ssize_t pos = 0;
  PyObject *key, *value;
  while (!any && PyDict_Next(kwargs, &pos, &key, &value)) any = may_be_alias(key);
  if (!any) return nullptr;
  PyObject* renamed = nullptr;
  const py::detail::function_record* rec = py::detail::function_record_ptr_from_PyObject(self);
  for (const Alias& a : kAliases) {
    PyObject* alias_value = PyDict_GetItemString(kwargs, a.alias);  // borrowed
    if (alias_value == nullptr || PyDict_GetItemString(kwargs, a.canonical) != nullptr) continue;
    if (rec == nullptr || takes(rec, a.alias) || !takes(rec, a.canonical)) continue;
    if (renamed == nullptr) {
      renamed = PyDict_Copy(kwargs);
      if (renamed == nullptr) return nullptr;
    }
    Py_INCREF(alias_value);
    const bool ok = PyDict_DelItemString(renamed, a.alias) == 0 &&
                    PyDict_SetItemString(renamed, a.canonical, alias_value) == 0;
    Py_DECREF(alias_value);
    if (!ok) {
      Py_DECREF(renamed);
      return nullptr;
    }
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
