#include "bindings/op_observer.h"

#include <frameobject.h>

#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "bindings/binding_walk.h"
#include "bindings/fastcall.h"
#include "core/profiler.h"

namespace ember::observer {

namespace detail {
std::atomic<bool> g_installed{false};
}

namespace {

using Record = py::detail::function_record;
using Impl = py::handle (*)(py::detail::function_call&);

struct Entry {
  Impl impl;               // the record's own impl, restored by uninstall
  std::string op_name;     // the name the tracer sees: the binding's ("__add__", "linear")
  std::string event_name;  // the profiler's: PyTorch's op name ("aten::add")
};

// Every observed record. Only grows, and only under the GIL: the observing impl (which runs
// with the GIL held) may keep a reference to an entry while its op runs without the GIL.
std::unordered_map<const Record*, Entry>& entries() {
  static auto* table = new std::unordered_map<const Record*, Entry>();
  return *table;
}

// The same records as a vector (the map's nodes do not move), for install / uninstall: they run
// twice per vmap call, and walking about a thousand map nodes took 20 us each time.
std::vector<std::pair<Record*, Entry*>>& entry_list() {
  static auto* list = new std::vector<std::pair<Record*, Entry*>>();
  return *list;
}

py::handle g_module;        // ember._C
py::handle g_tensor_class;  // ember._C.Tensor
py::object* g_tracer = nullptr;
// vmap (ember.func): calls with an argument of g_batched_type go to g_batch_handler instead,
// which applies the op's batching rule (Note [Batching through the observer] below).
py::object* g_batch_handler = nullptr;
PyObject* g_batched_type = nullptr;
// Random ops: while a vmap runs they go to the handler even with no batched argument, which
// applies the vmap's `randomness` (an error, one draw per sample, or one shared draw).
std::unordered_set<std::string>* g_random_ops = nullptr;
std::thread::id g_tracer_thread;

thread_local int t_depth = 0;       // observed ops running on this thread
thread_local int t_suppressed = 0;  // > 0 inside the tracer's callback: its own ops are not ops
                                    // of the traced program

// "__iadd__" -> "add_", "__radd__" -> "add", "__truediv__" -> "div": PyTorch's op names.
std::string pytorch_op_name(const std::string& name) {
  std::string base = name;
  bool inplace = false;
  if (name.size() > 4 && name.rfind("__", 0) == 0 && name.compare(name.size() - 2, 2, "__") == 0) {
    base = name.substr(2, name.size() - 4);
    static const char* const kReflected[] = {"radd", "rmul",      "rtruediv", "rmatmul",
                                             "rpow", "rand",      "ror",      "rxor",
                                             "rmod", "rfloordiv", "rlshift",  "rrshift"};
    static const char* const kInplace[] = {"iadd",      "isub",    "imul",   "itruediv", "imatmul",
                                           "ipow",      "iand",    "ior",    "ixor",     "imod",
                                           "ifloordiv", "ilshift", "irshift"};
    for (const char* r : kReflected) {
      if (base == r) base = base.substr(1);
    }
    for (const char* i : kInplace) {
      if (base == i) {
        base = base.substr(1);
        inplace = true;
      }
    }
    static const std::pair<const char*, const char*> kRenames[] = {
        {"truediv", "div"},        {"mod", "remainder"},     {"floordiv", "floor_divide"},
        {"and", "bitwise_and"},    {"or", "bitwise_or"},     {"xor", "bitwise_xor"},
        {"invert", "bitwise_not"}, {"getitem", "index"},     {"setitem", "index_put_"},
        {"pos", "positive"},       {"lshift", "__lshift__"}, {"rshift", "__rshift__"}};
    for (const auto& [from, to] : kRenames) {
      if (base == from) base = to;
    }
  }
  return "aten::" + base + (inplace ? "_" : "");
}

py::handle observed_impl(py::detail::function_call& call);

void observe(py::handle fn, const std::string& name) {
  for (Record* rec = function_records(fn); rec != nullptr; rec = rec->next) {
    if (rec->impl == &observed_impl) continue;
    auto it = entries().find(rec);
    if (it == entries().end()) {
      it = entries().emplace(rec, Entry{rec->impl, name, pytorch_op_name(name)}).first;
      entry_list().emplace_back(rec, &it->second);
    }
    it->second.impl = rec->impl;
    rec->impl = &observed_impl;
  }
}

void install() {
  if (detail::g_installed.load()) return;
  // The bindings are all defined when ember._C is imported, so the table of records made by
  // the first walk stays complete: later installs (one per vmap call) only swap the impls.
  static bool walked = false;
  if (!walked) {
    // Not the profiler's own functions: their calls are not the program's.
    for_each_binding(g_module, g_tensor_class,
                     [](const BindingVisit& v) { observe(v.function, v.name); },
                     {"ember._C._profiler"});
    walked = true;
  } else {
    for (auto& [rec, entry] : entry_list()) {
      if (rec->impl != &observed_impl) {
        entry->impl = rec->impl;
        rec->impl = &observed_impl;
      }
    }
  }
  detail::g_installed.store(true);
}

void uninstall() {
  if (!detail::g_installed.load()) return;
  // Tables only grow, so every record that has the observing impl is in it.
  for (auto& [rec, entry] : entry_list()) {
    if (rec->impl == &observed_impl) rec->impl = entry->impl;
  }
  detail::g_installed.store(false);
}

// Observing is wanted while a profile runs, a trace is being taken or a vmap runs.
void sync() {
  if (profiler::enabled() || g_tracer != nullptr || g_batch_handler != nullptr) {
    install();
  } else {
    uninstall();
  }
}

// The Python call stack, innermost first, as "file(line): function".
std::vector<std::string> python_stack() {
  std::vector<std::string> stack;
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  if (frame == nullptr) return stack;
  Py_INCREF(frame);
  for (int depth = 0; frame != nullptr && depth < 64; ++depth) {
    PyCodeObject* code = PyFrame_GetCode(frame);  // new reference
    const int line = PyFrame_GetLineNumber(frame);
    std::string entry = py::str(code->co_filename);
    entry += "(" + std::to_string(line) + "): " + std::string(py::str(code->co_name));
    Py_DECREF(code);
    stack.push_back(std::move(entry));
    PyFrameObject* back = PyFrame_GetBack(frame);  // new reference
    Py_DECREF(frame);
    frame = back;
  }
  Py_XDECREF(frame);
  return stack;
}

void fill_details(const py::detail::function_call& call) {
  profiler::Event* event = profiler::open_event();
  if (event == nullptr) return;
  const profiler::Config& config = profiler::config();
  if (config.record_shapes) {
    for (py::handle arg : call.args) {
      Tensor t;
      if (arg && fastcall::unwrap(arg.ptr(), t)) {
        const IntArrayRef sizes = t.sizes();
        event->input_shapes.emplace_back(sizes.begin(), sizes.end());
        event->input_dtypes.emplace_back(dtype_name(t.dtype()));
      } else {
        event->input_shapes.emplace_back();
        event->input_dtypes.emplace_back(arg && arg.ptr() != Py_None ? "Scalar" : "");
      }
    }
  }
  if (config.with_stack) event->stack = python_stack();
}

void report_to_tracer(const Entry& entry, const py::detail::function_call& call,
                      py::handle result) {
  py::tuple args(call.args.size());
  py::tuple names(call.args.size());
  for (size_t i = 0; i < call.args.size(); ++i) {
    args[i] = call.args[i] ? py::reinterpret_borrow<py::object>(call.args[i]) : py::none();
    const bool named = i < call.func.args.size() && call.func.args[i].name != nullptr;
    names[i] = named ? py::str(call.func.args[i].name) : py::str("");
  }
  ++t_suppressed;
  try {
    (*g_tracer)(entry.op_name, py::bool_(call.func.is_method), args, names,
                py::reinterpret_borrow<py::object>(result));
  } catch (...) {
    --t_suppressed;
    throw;
  }
  --t_suppressed;
}

bool holds_tensor(py::handle h) {
  if (!h) return false;
  if (is_tensor(h)) return true;
  if (PyTuple_Check(h.ptr()) || PyList_Check(h.ptr())) {
    for (py::handle item : h) {
      if (is_tensor(item)) return true;
    }
  }
  return false;
}

// An op takes or makes tensors: it returns one (or a tuple or list holding one), or it returns
// None after taking one (an in-place update such as an optimizer step).
bool is_op_call(const py::detail::function_call& call, py::handle result) {
  if (holds_tensor(result)) return true;
  if (!result || result.ptr() != Py_None) return false;
  for (py::handle arg : call.args) {
    if (holds_tensor(arg)) return true;
  }
  return false;
}

// Note [Batching through the observer]: vmap wraps its batched inputs in a Python class
// (ember.func's BatchedTensor: a Tensor subclass whose data is a detached alias, the real
// batched value being an attribute). While a vmap runs, every binding's impl is the observing
// one; a call that finds a BatchedTensor among its arguments (or in a list or tuple argument)
// is handed, before pybind11 converts anything, to the Python handler, which runs the op's
// batching rule on the real values. Rules call ops again: those calls have no BatchedTensor
// (or only ones of an outer vmap level) and take the ordinary path.
bool holds_batched(py::handle h) {
  if (!h) return false;
  if (PyObject_TypeCheck(h.ptr(), reinterpret_cast<PyTypeObject*>(g_batched_type))) return true;
  if (PyTuple_Check(h.ptr()) || PyList_Check(h.ptr())) {
    for (py::handle item : h) {
      if (PyObject_TypeCheck(item.ptr(), reinterpret_cast<PyTypeObject*>(g_batched_type))) {
        return true;
      }
    }
  }
  return false;
}

py::handle call_batch_handler(const Entry& entry, const py::detail::function_call& call) {
  py::tuple args(call.args.size());
  py::tuple names(call.args.size());
  for (size_t i = 0; i < call.args.size(); ++i) {
    args[i] = call.args[i] ? py::reinterpret_borrow<py::object>(call.args[i]) : py::none();
    const bool named = i < call.func.args.size() && call.func.args[i].name != nullptr;
    names[i] = named ? py::str(call.func.args[i].name) : py::str("");
  }
  py::object kwargs = call.kwargs_ref ? py::reinterpret_borrow<py::object>(call.kwargs_ref)
                                      : py::object(py::dict());
  // The capsule lets the rule call this same overload again, with other arguments.
  py::capsule binding(static_cast<const void*>(&call.func));
  py::object r = (*g_batch_handler)(entry.op_name, py::bool_(call.func.is_method), args, names,
                                    kwargs, binding);
  return r.release();
}

// Calls the binding a capsule names (its original impl, unobserved) with these arguments, in
// the order of its parameters.
py::object call_binding(const py::capsule& binding, const py::tuple& args, const py::dict& kwargs) {
  const auto* rec = static_cast<const Record*>(binding.get_pointer());
  auto it = entries().find(rec);
  EMBER_CHECK(it != entries().end(), "[vmap] unknown binding");
  py::detail::function_call c(*rec, py::none());
  for (py::handle a : args) {
    c.args.push_back(a);
    c.args_convert.push_back(true);
  }
  if (rec->has_kwargs) {
    c.kwargs_ref = kwargs;
  } else {
    EMBER_CHECK(kwargs.empty(), "[vmap] keyword arguments for a binding without **kwargs");
  }
  py::handle r = it->second.impl(c);
  if (r.ptr() == PYBIND11_TRY_NEXT_OVERLOAD) {
    throw py::type_error("[vmap] " + it->second.op_name +
                         ": the batching rule passed arguments this overload does not take");
  }
  return py::reinterpret_steal<py::object>(r);
}

py::handle observed_impl(py::detail::function_call& call) {
  // Present: only records in the table are given this impl.
  const Entry& entry = entries().find(&call.func)->second;
  if (g_batch_handler != nullptr) {
    bool batched = false;
    for (py::handle arg : call.args) batched = batched || holds_batched(arg);
    if (!batched && call.kwargs_ref) {
      for (auto item : py::reinterpret_borrow<py::dict>(call.kwargs_ref)) {
        batched = batched || holds_batched(item.second);
      }
    }
    if (batched || (g_random_ops != nullptr && g_random_ops->count(entry.op_name) != 0)) {
      return call_batch_handler(entry, call);
    }
  }
  if (t_suppressed > 0) return entry.impl(call);
  const bool trace =
      g_tracer != nullptr && t_depth == 0 && std::this_thread::get_id() == g_tracer_thread;
  int64_t range = -1;
  if (profiler::enabled()) {
    range = profiler::begin_range(entry.event_name, profiler::EventKind::kOp);
    if (range >= 0) fill_details(call);
  }
  py::handle result;
  ++t_depth;
  try {
    result = entry.impl(call);
  } catch (...) {
    --t_depth;
    profiler::end_range(range);
    throw;
  }
  --t_depth;
  if (result.ptr() == PYBIND11_TRY_NEXT_OVERLOAD || !is_op_call(call, result)) {
    // Not a call of this overload (pybind11 tries the next), or not an op: a query such as
    // Tensor.shape, ember.is_grad_enabled() or Tensor.item(), which PyTorch does not profile.
    profiler::cancel_range(range);
    return result;
  }
  profiler::end_range(range);
  if (trace) {
    try {
      report_to_tracer(entry, call, result);
    } catch (...) {
      result.dec_ref();
      throw;
    }
  }
  return result;
}

py::list events_to_python(const std::vector<profiler::Event>& events) {
  py::list out;
  for (const profiler::Event& e : events) {
    py::list shapes;
    for (const auto& s : e.input_shapes) shapes.append(py::cast(s));
    out.append(py::make_tuple(e.name, static_cast<int>(e.kind), e.id, e.parent_id, e.thread,
                              e.start_ns, e.end_ns, e.self_memory, e.total_memory, shapes,
                              py::cast(e.input_dtypes), py::cast(e.stack)));
  }
  return out;
}

}  // namespace

void init_observer(py::module_& m, py::handle tensor_class) {
  g_module = m;
  g_tensor_class = tensor_class;
  py::module_ p = m.def_submodule("_profiler", "profiler and tracer hooks (ember.profiler)");
  p.def(
      "_start",
      [](bool record_shapes, bool profile_memory, bool with_stack) {
        profiler::start({record_shapes, profile_memory, with_stack});
        sync();
      },
      py::arg("record_shapes"), py::arg("profile_memory"), py::arg("with_stack"));
  p.def("_stop", []() {
    std::vector<profiler::Event> events = profiler::stop();
    sync();
    return events_to_python(events);
  });
  p.def("_enabled", []() { return profiler::enabled(); });
  p.def("_now_ns", []() { return profiler::now_ns(); });
  p.def(
      "_push_range",
      [](std::string name) {
        const int64_t handle = profiler::begin_range(std::move(name), profiler::EventKind::kUser);
        profiler::Event* event = handle >= 0 ? profiler::open_event() : nullptr;
        if (event != nullptr && profiler::config().with_stack) event->stack = python_stack();
        return handle;
      },
      py::arg("name"));
  p.def(
      "_pop_range", [](int64_t handle) { profiler::end_range(handle); }, py::arg("handle"));
  p.def(
      "_set_tracer",
      [](py::object tracer) {
        EMBER_CHECK(tracer.is_none() || g_tracer == nullptr,
                    "[onnx.export] another export is tracing in this process; exports run one "
                    "at a time");
        delete g_tracer;
        g_tracer = nullptr;
        if (!tracer.is_none()) {
          g_tracer = new py::object(std::move(tracer));
          g_tracer_thread = std::this_thread::get_id();
        }
        sync();
      },
      py::arg("tracer"));
  p.def("_observing", []() { return installed(); });
  p.def(
      "_set_batch_handler",
      [](py::object handler, py::object batched_type, py::object random_ops) {
        delete g_batch_handler;
        g_batch_handler = nullptr;
        Py_XDECREF(g_batched_type);
        g_batched_type = nullptr;
        delete g_random_ops;
        g_random_ops = nullptr;
        if (!handler.is_none()) {
          g_batch_handler = new py::object(std::move(handler));
          g_batched_type = batched_type.release().ptr();
          if (!random_ops.is_none()) {
            g_random_ops = new std::unordered_set<std::string>();
            for (py::handle name : random_ops) g_random_ops->insert(name.cast<std::string>());
          }
        }
        sync();
      },
      py::arg("handler"), py::arg("batched_type"), py::arg("random_ops") = py::none());
  p.def("_call_binding", &call_binding, py::arg("binding"), py::arg("args"), py::arg("kwargs"));
  // The names the hooks see (the bindings' own): scripts/vmap_fallbacks.py lists those without a
  // batching rule.
  p.def("_binding_names", []() {
    std::set<std::string> names;
    for_each_binding(g_module, g_tensor_class, [&](const BindingVisit& v) { names.insert(v.name); },
                     {"ember._C._profiler"});
    return std::vector<std::string>(names.begin(), names.end());
  });
}

}  // namespace ember::observer
