// ember._C._distributed: stores, the Gloo process group and its Work, behind ember.distributed
// (python/ember/distributed). Everything that can block (store waits, connecting, waiting for a
// collective) releases the GIL.
#include <optional>

#include "bindings/pybind_ember.h"

#ifdef EMBER_HAVE_GLOO
#include "distributed/arguments.h"
#include "distributed/process_group.h"
#include "distributed/store.h"
#endif

namespace ember {

#ifdef EMBER_HAVE_GLOO
namespace {

using namespace ember::distributed;
using py::arg;

Milliseconds millis(double seconds) {
  return timeout_from_seconds(seconds);
}

// A timeout as PyTorch's stores take it, a datetime.timedelta, or as seconds.
Milliseconds millis(py::handle timeout) {
  if (py::hasattr(timeout, "total_seconds")) {
    return millis(py::cast<double>(timeout.attr("total_seconds")()));
  }
  EMBER_CHECK_T(TypeError, PyNumber_Check(timeout.ptr()) && !PyBool_Check(timeout.ptr()),
                "[distributed] a timeout must be a datetime.timedelta or seconds, got ",
                Py_TYPE(timeout.ptr())->tp_name);
  return millis(py::cast<double>(timeout));
}

// world_size=None (PyTorch's default) means unknown, as -1.
int world_size_of(py::handle world_size) {
  return world_size.is_none() ? -1 : py::cast<int>(world_size);
}

// Keys and values may be str (UTF-8) or bytes, as in PyTorch.
Bytes value_bytes(py::handle value) {
  if (PyBytes_Check(value.ptr())) {
    std::string s = py::reinterpret_borrow<py::bytes>(value);
    return Bytes(s.begin(), s.end());
  }
  if (PyUnicode_Check(value.ptr())) {
    std::string s = py::reinterpret_borrow<py::str>(value);
    return Bytes(s.begin(), s.end());
  }
  if (PyByteArray_Check(value.ptr())) {
    const char* p = PyByteArray_AsString(value.ptr());
    return Bytes(p, p + PyByteArray_Size(value.ptr()));
  }
  EMBER_THROW(TypeError, "[Store] a value must be str or bytes, got ",
              Py_TYPE(value.ptr())->tp_name);
}

py::bytes to_py(const Bytes& b) {
  return py::bytes(b.data(), b.size());
}

void init_store_methods(py::class_<Store, std::shared_ptr<Store>>& cls) {
  using nogil = py::call_guard<py::gil_scoped_release>;
  cls.def("set",
          [](Store& s, const std::string& key, py::handle value) {
            Bytes bytes = value_bytes(value);
            py::gil_scoped_release release;
            s.set(key, bytes);
          })
      .def("get",
           [](Store& s, const std::string& key) {
             Bytes value;
             {
               py::gil_scoped_release release;
               value = s.get(key);
             }
             return to_py(value);
           })
      .def("add", &Store::add, arg("key"), arg("value"), nogil())
      .def("check", &Store::check, arg("keys"), nogil())
      .def("delete_key", &Store::delete_key, arg("key"), nogil())
      .def("num_keys", &Store::num_keys, nogil())
      .def(
          "wait",
          [](Store& s, const std::vector<std::string>& keys, py::object timeout) {
            const Milliseconds t = timeout.is_none() ? s.timeout() : millis(timeout);
            py::gil_scoped_release release;
            s.wait(keys, t);
          },
          arg("keys"), arg("timeout") = py::none())
      .def("compare_set",
           [](Store& s, const std::string& key, py::handle expected, py::handle desired) {
             Bytes e = value_bytes(expected), d = value_bytes(desired);
             Bytes value;
             {
               py::gil_scoped_release release;
               value = s.compare_set(key, e, d);
             }
             return to_py(value);
           })
      .def("set_timeout", [](Store& s, py::handle timeout) { s.set_timeout(millis(timeout)); })
      .def_property_readonly("timeout_seconds",
                             [](Store& s) { return s.timeout().count() / 1000.0; });
}

// Runs the collective on this thread when the caller will wait for it anyway.
struct Here {
  explicit Here(bool on) {
    if (on) scope.emplace();
  }
  std::optional<ProcessGroupGloo::InlineScope> scope;
};

}  // namespace

void init_distributed(py::module_& m) {
  py::module_ d = m.def_submodule("_distributed", "Gloo process groups and stores");
  d.attr("available") = true;
  static py::handle dist_error = py::exception<Error>(d, "DistError", PyExc_RuntimeError).release();
  static py::handle backend_error =
      py::exception<DistBackendError>(d, "DistBackendError", dist_error).release();
  static py::handle store_error =
      py::exception<DistStoreError>(d, "DistStoreError", dist_error).release();
  static py::handle network_error =
      py::exception<DistNetworkError>(d, "DistNetworkError", dist_error).release();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const DistBackendError& e) {
      PyErr_SetString(backend_error.ptr(), e.what());
    } catch (const DistStoreError& e) {
      PyErr_SetString(store_error.ptr(), e.what());
    } catch (const DistNetworkError& e) {
      PyErr_SetString(network_error.ptr(), e.what());
    }
  });

  py::class_<Store, std::shared_ptr<Store>> store(d, "Store");
  init_store_methods(store);
  py::class_<HashStore, Store, std::shared_ptr<HashStore>>(d, "HashStore")
      .def(
          py::init([](py::handle timeout) { return std::make_shared<HashStore>(millis(timeout)); }),
          arg("timeout") = 300.0);
  py::class_<PrefixStore, Store, std::shared_ptr<PrefixStore>>(d, "PrefixStore")
      .def(py::init<std::string, std::shared_ptr<Store>>(), arg("prefix"), arg("store"))
      .def_property_readonly("underlying_store", &PrefixStore::base);
  py::class_<FileStore, Store, std::shared_ptr<FileStore>>(d, "FileStore")
      .def(py::init([](const std::string& path, py::handle world_size, py::handle timeout) {
             const int size = world_size_of(world_size);
             const Milliseconds t = millis(timeout);
             py::gil_scoped_release release;
             return std::make_shared<FileStore>(path, size, t);
           }),
           arg("file_name"), arg("world_size") = -1, arg("timeout") = 300.0)
      .def_property_readonly("path", &FileStore::path);
  py::class_<TCPStore, Store, std::shared_ptr<TCPStore>>(d, "TCPStore")
      .def(py::init([](const std::string& host, int port, py::handle world_size, bool is_master,
                       py::handle timeout, bool wait_for_workers) {
             const int size = world_size_of(world_size);
             const Milliseconds t = millis(timeout);
             py::gil_scoped_release release;
             return std::make_shared<TCPStore>(host, port, is_master, t, wait_for_workers, size);
           }),
           arg("host_name"), arg("port"), arg("world_size") = py::none(), arg("is_master") = false,
           arg("timeout") = 300.0, arg("wait_for_workers") = true)
      .def_property_readonly("host", &TCPStore::host)
      .def_property_readonly("port", &TCPStore::port);

  py::class_<Work, std::shared_ptr<Work>>(d, "Work")
      .def(
          "wait",
          [](Work& w, double timeout) {
            py::gil_scoped_release release;
            w.wait(millis(timeout));
          },
          arg("timeout"))
      .def("is_completed", &Work::is_completed)
      .def("is_success", &Work::is_success)
      .def("error_message", &Work::error_message)
      .def_property_readonly("source_rank", &Work::source_rank)
      .def_readonly("description", &Work::description);

  using nogil = py::call_guard<py::gil_scoped_release>;
  py::class_<ProcessGroupGloo, std::shared_ptr<ProcessGroupGloo>>(d, "ProcessGroupGloo")
      .def(py::init([](std::shared_ptr<Store> store, int rank, int size, double timeout,
                       const std::string& hostname, const std::string& interface) {
             py::gil_scoped_release release;
             return std::make_shared<ProcessGroupGloo>(std::move(store), rank, size,
                                                       millis(timeout), hostname, interface);
           }),
           arg("store"), arg("rank"), arg("size"), arg("timeout"), arg("hostname"),
           arg("interface") = "")
      .def("rank", &ProcessGroupGloo::rank)
      .def("size", &ProcessGroupGloo::size)
      .def_property_readonly("timeout_seconds",
                             [](ProcessGroupGloo& g) { return g.timeout().count() / 1000.0; })
      .def(
          "allreduce",
          [](ProcessGroupGloo& g, const Tensor& t, int op, bool wait_here) {
            Here here(wait_here);
            return g.allreduce(t, reduce_op_from(op));
          },
          arg("tensor"), arg("op"), arg("inline") = false, nogil())
      .def(
          "reduce",
          [](ProcessGroupGloo& g, const Tensor& t, int root, int op, bool wait_here) {
            Here here(wait_here);
            return g.reduce(t, root, reduce_op_from(op));
          },
          arg("tensor"), arg("root"), arg("op"), arg("inline") = false, nogil())
      .def(
          "broadcast",
          [](ProcessGroupGloo& g, const Tensor& t, int root, bool wait_here) {
            Here here(wait_here);
            return g.broadcast(t, root);
          },
          arg("tensor"), arg("root"), arg("inline") = false, nogil())
      .def(
          "allgather",
          [](ProcessGroupGloo& g, const Tensor& out, const Tensor& in, bool wait_here) {
            Here here(wait_here);
            return g.allgather(out, in);
          },
          arg("output"), arg("input"), arg("inline") = false, nogil())
      .def(
          "gather",
          [](ProcessGroupGloo& g, const Tensor& out, const Tensor& in, int root, bool wait_here) {
            Here here(wait_here);
            return g.gather(out, in, root);
          },
          arg("output"), arg("input"), arg("root"), arg("inline") = false, nogil())
      .def(
          "scatter",
          [](ProcessGroupGloo& g, const Tensor& out, const Tensor& in, int root, bool wait_here) {
            Here here(wait_here);
            return g.scatter(out, in, root);
          },
          arg("output"), arg("input"), arg("root"), arg("inline") = false, nogil())
      .def(
          "alltoall",
          [](ProcessGroupGloo& g, const Tensor& out, const Tensor& in,
             const std::vector<int64_t>& out_counts, const std::vector<int64_t>& in_counts,
             bool wait_here) {
            Here here(wait_here);
            return g.alltoall(out, in, out_counts, in_counts);
          },
          arg("output"), arg("input"), arg("output_counts"), arg("input_counts"),
          arg("inline") = false, nogil())
      .def(
          "barrier",
          [](ProcessGroupGloo& g, bool wait_here) {
            Here here(wait_here);
            return g.barrier();
          },
          arg("inline") = false, nogil())
      .def(
          "declare_allreduce_plan",
          [](ProcessGroupGloo& g, const std::vector<Tensor>& tensors, int op) {
            // The signatures allreduce(t, op) has (process_group.cpp's Signature).
            std::vector<std::vector<int64_t>> calls;
            for (const Tensor& t : tensors)
              calls.push_back({0, static_cast<int64_t>(t.dtype()), t.numel(), -1,
                               static_cast<int64_t>(reduce_op_from(op)), 0});
            return g.declare_plan(calls);
          },
          arg("tensors"), arg("op"), nogil())
      .def("send", &ProcessGroupGloo::send, nogil())
      .def("recv", &ProcessGroupGloo::recv, nogil());
}

#else

void init_distributed(py::module_& m) {
  py::module_ d = m.def_submodule("_distributed", "Gloo process groups (not in this build)");
  d.attr("available") = false;
}

#endif

}  // namespace ember
