// bool arguments as PyTorch parses them. pybind11's bool caster is a full specialization that
// cannot be replaced (unlike the int64 one, pybind_ember.h), and when it may convert it accepts
// anything with __bool__: sum(x, 0, keepdim=2) would run where PyTorch raises TypeError. A
// function with one overload is always called in pybind11's converting pass, so the only way to
// refuse is the argument's `convert` flag (py::arg(...).noconvert()), which keeps True, False and
// NumPy bools. Writing .noconvert() on hundreds of arguments would be easy to forget on the next
// one, so after every binding is defined this pass sets the flag on each argument whose type in
// the generated signature is `bool`, for every function of ember._C, its submodules and the
// Tensor class, and for the pybind11 fallbacks of the hand-written entry points (fastcall.h),
// which no attribute leads to.
#include <string>
#include <vector>

#include "bindings/binding_walk.h"
#include "bindings/pybind_ember.h"

namespace ember {

namespace {

// The parameter types of a pybind11 signature "(a: int, b: bool = False, *, c: object) -> T",
// in order; markers (`*`, `/`) are skipped. Empty when the signature cannot be read.
std::vector<std::string> parameter_types(const char* signature) {
  std::vector<std::string> types;
  if (signature == nullptr || signature[0] != '(') return types;
  const std::string s(signature);
  int depth = 0;
  size_t start = 1;
  for (size_t i = 1; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '[' || c == '(') {
      ++depth;
    } else if (c == ']' || (c == ')' && depth > 0)) {
      --depth;
    } else if ((c == ',' && depth == 0) || (c == ')' && depth == 0)) {
      std::string item = s.substr(start, i - start);
      while (!item.empty() && item.front() == ' ') item.erase(item.begin());
      if (!item.empty() && item != "*" && item != "/") {
        const size_t colon = item.find(": ");
        if (colon == std::string::npos) return {};
        std::string type = item.substr(colon + 2);
        const size_t eq = type.find(" = ");
        if (eq != std::string::npos) type.resize(eq);
        types.push_back(type);
      }
      start = i + 1;
      if (c == ')') break;
    }
  }
  return types;
}

void make_strict(py::handle fn) {
  for (py::detail::function_record* rec = function_records(fn); rec != nullptr; rec = rec->next) {
    const std::vector<std::string> types = parameter_types(rec->signature);
    // Only fully annotated functions: their argument records line up with the parameters.
    if (types.size() != rec->args.size() || types.size() != rec->nargs) continue;
    for (size_t i = 0; i < types.size(); ++i) {
      if (types[i] == "bool") rec->args[i].convert = false;
    }
  }
}

}  // namespace

void make_bool_arguments_strict(py::module_& m, py::handle tensor_class) {
  for_each_binding(m, tensor_class, [](const BindingVisit& v) { make_strict(v.function); });
}

}  // namespace ember
