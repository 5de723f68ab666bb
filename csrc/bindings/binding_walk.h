// Visiting every pybind11 function Ember defines: the functions of ember._C and its submodules,
// the methods and property getters of the Tensor class, and the pybind11 fallbacks of the
// hand-written entry points (fastcall.h), which no attribute leads to. The passes that adjust
// every binding after they are all defined use it: strict bool arguments
// (strict_bool_args.cpp), NumPy's argument names (numpy_arg_aliases.cpp) and the op observer
// (op_observer.cpp).
#pragma once
#include <functional>
#include <string>

#include "bindings/pybind_ember.h"

namespace ember {

// The head of a pybind11 function object's overload chain, or nullptr for anything else.
py::detail::function_record* function_records(py::handle fn);

struct BindingVisit {
  py::handle function;  // the pybind11 function object (or property getter)
  std::string name;     // the attribute name it is reached by (the record's name for fallbacks)
  bool is_property = false;
};

// Calls visit for each pybind11 function of module m (recursively through submodules named
// ember._C.*, except those in `skip_modules`), of tensor_class, and each fallback.
void for_each_binding(py::handle m, py::handle tensor_class,
                      const std::function<void(const BindingVisit&)>& visit,
                      const std::vector<std::string>& skip_modules = {});

}  // namespace ember
