// ember._C_nccl.ProcessGroupNCCL: the NCCL process group behind ember.distributed's "nccl"
// backend, in a module of its own so that libnccl loads only when such a group is made. Its
// methods take the same arguments as ember._C._distributed.ProcessGroupGloo's, so
// python/ember/distributed/_c10d.py drives either; `inline` only matters to Gloo and is ignored.
// Every call that can block releases the GIL.
#include <memory>
#include <vector>

#include "bindings/cuda/pybind_cuda.h"
#include "distributed/arguments.h"
#include "distributed/nccl/process_group_nccl.h"

namespace ember {

namespace {

using namespace ember::distributed;
using py::arg;

// Destroying the group finalizes its communicator, which waits for the operations in flight (up
// to the timeout); other Python threads, other ranks of this process among them, run meanwhile.
void destroy(ProcessGroupNCCL* group) {
  if (PyGILState_Check()) {
    py::gil_scoped_release release;
    delete group;
  } else {
    delete group;
  }
}

}  // namespace

void init_nccl(py::module_& m) {
  using nogil = py::call_guard<py::gil_scoped_release>;
  using Group = ProcessGroupNCCL;
  py::class_<Group, std::shared_ptr<Group>>(m, "ProcessGroupNCCL")
      .def(py::init(
               [](std::shared_ptr<Store> store, int rank, int size, double timeout, int device) {
                 const Milliseconds t = timeout_from_seconds(timeout);
                 py::gil_scoped_release release;
                 return std::shared_ptr<Group>(new Group(std::move(store), rank, size, t, device),
                                               destroy);
               }),
           arg("store"), arg("rank"), arg("size"), arg("timeout"), arg("device"))
      .def("rank", &Group::rank)
      .def("size", &Group::size)
      .def_property_readonly("timeout_seconds",
                             [](Group& g) { return g.timeout().count() / 1000.0; })
      .def_property_readonly("device", &Group::device)
      .def("is_broken", &Group::is_broken)
      .def(
          "allreduce",
          [](Group& g, const Tensor& t, int op, bool) {
            return g.allreduce(t, reduce_op_from(op));
          },
          arg("tensor"), arg("op"), arg("inline") = false, nogil())
      .def(
          "reduce",
          [](Group& g, const Tensor& t, int root, int op, bool) {
            return g.reduce(t, root, reduce_op_from(op));
          },
          arg("tensor"), arg("root"), arg("op"), arg("inline") = false, nogil())
      .def(
          "broadcast",
          [](Group& g, const Tensor& t, int root, bool) { return g.broadcast(t, root); },
          arg("tensor"), arg("root"), arg("inline") = false, nogil())
      .def(
          "allgather",
          [](Group& g, const Tensor& out, const Tensor& in, bool) { return g.allgather(out, in); },
          arg("output"), arg("input"), arg("inline") = false, nogil())
      .def(
          "reduce_scatter",
          [](Group& g, const Tensor& out, const Tensor& in, int op, bool) {
            return g.reduce_scatter(out, in, reduce_op_from(op));
          },
          arg("output"), arg("input"), arg("op"), arg("inline") = false, nogil())
      .def(
          "gather",
          [](Group& g, const Tensor& out, const Tensor& in, int root, bool) {
            return g.gather(out, in, root);
          },
          arg("output"), arg("input"), arg("root"), arg("inline") = false, nogil())
      .def(
          "scatter",
          [](Group& g, const Tensor& out, const Tensor& in, int root, bool) {
            return g.scatter(out, in, root);
          },
          arg("output"), arg("input"), arg("root"), arg("inline") = false, nogil())
      .def(
          "alltoall",
          [](Group& g, const Tensor& out, const Tensor& in, const std::vector<int64_t>& out_counts,
             const std::vector<int64_t>& in_counts,
             bool) { return g.alltoall(out, in, out_counts, in_counts); },
          arg("output"), arg("input"), arg("output_counts"), arg("input_counts"),
          arg("inline") = false, nogil())
      .def(
          "barrier", [](Group& g, bool) { return g.barrier(); }, arg("inline") = false, nogil())
      .def(
          "declare_allreduce_plan",
          [](Group& g, const std::vector<Tensor>& tensors, int op) {
            return g.declare_allreduce_plan(tensors, reduce_op_from(op));
          },
          arg("tensors"), arg("op"), nogil())
      .def("send", &Group::send, arg("tensor"), arg("dst"), arg("tag"), nogil())
      .def("recv", &Group::recv, arg("tensor"), arg("src"), arg("tag"), nogil());
}

}  // namespace ember

PYBIND11_MODULE(_C_nccl, m) {
  m.doc() = "Ember's NCCL process group";
  ember::init_nccl(m);
}
