#include "bindings/binding_walk.h"

#include "bindings/fastcall.h"

namespace ember {

py::detail::function_record* function_records(py::handle fn) {
  py::handle func = py::detail::get_function(fn);
  if (!func || !PyCFunction_Check(func.ptr())) return nullptr;
  py::handle self = PyCFunction_GET_SELF(func.ptr());
  if (!self) return nullptr;
  return py::detail::function_record_ptr_from_PyObject(self.ptr());
}

namespace {

void walk_scope(py::handle scope, int depth, const std::function<void(const BindingVisit&)>& visit,
                const std::vector<std::string>& skip_modules) {
  // A class's __dict__ is a mappingproxy, so go through items() rather than the dict API.
  py::object members = scope.attr("__dict__").attr("items")();
  for (py::handle item : members) {
    auto pair = py::reinterpret_borrow<py::tuple>(item);
    const std::string name = py::str(pair[0]);
    py::object value = pair[1];
    if (PyModule_Check(value.ptr())) {
      const std::string module_name = py::str(value.attr("__name__"));
      bool skipped = false;
      for (const std::string& s : skip_modules) skipped = skipped || s == module_name;
      if (depth < 3 && module_name.rfind("ember._C", 0) == 0 && !skipped) {
        walk_scope(value, depth + 1, visit, skip_modules);
      }
      continue;
    }
    if (PyObject_TypeCheck(value.ptr(), &PyProperty_Type)) {
      py::object getter = value.attr("fget");
      if (function_records(getter) != nullptr) visit({getter, name, true});
      continue;
    }
    if (function_records(value) != nullptr) visit({value, name, false});
  }
}

}  // namespace

void for_each_binding(py::handle m, py::handle tensor_class,
                      const std::function<void(const BindingVisit&)>& visit,
                      const std::vector<std::string>& skip_modules) {
  walk_scope(m, 0, visit, skip_modules);
  walk_scope(tensor_class, 3, visit, skip_modules);
  for (PyObject* fallback : fastcall::fallbacks()) {
    py::detail::function_record* rec = function_records(fallback);
    if (rec != nullptr) visit({fallback, rec->name ? rec->name : "", false});
  }
}

}  // namespace ember
