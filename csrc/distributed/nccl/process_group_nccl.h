// A process group on NCCL: the collectives of ember.distributed's "nccl" backend over CUDA
// tensors of one device (docs/design/distributed.md).
//
// Design:
// - Collectives are enqueued, in call order, on one CUDA stream of the group and return a Work
//   at once; the Work completes when the CUDA event recorded after the operation does.
//   Work::wait polls that event on the host (so that a timeout or a peer's failure is noticed
//   rather than hanging in a stream synchronization) and then makes the legacy default stream
//   wait for it, so the order of later work on that stream is explicit. Every rank must call
//   the same collectives in the same order, as NCCL matches them by order on the communicator;
//   one mutex orders the enqueueing of the threads of this process.
// - Ember's CUDA kernels, fills and copies run on the legacy default stream, and the group's
//   stream is a non-blocking one (which does not synchronize with the legacy stream), so each
//   operation first records an event on the legacy stream and makes the group's stream wait
//   for it: the collective reads the tensor as the caller's earlier work left it.
// - The communicator is non-blocking (ncclConfig_t::blocking = 0). A blocking
//   ncclCommInitRank, or the first operation that has to connect to a peer, waits forever for
//   a rank that died or never came; here every such step is polled with ncclCommGetAsyncError
//   and bounded by the group's timeout. A timeout or an NCCL error aborts the communicator
//   (ncclCommAbort, which also ends its kernels) and raises DistBackendError; the group is then
//   broken, and each later call raises DistBackendError at once.
// - send/recv ignore their tag: NCCL delivers the messages between two ranks in the order they
//   were posted, so a matching order of sends and receives is all that pairs them. A receive
//   needs its source rank (no receive from any source). All operations share the one stream,
//   so two ranks that each send to the other before receiving can wait for each other (while
//   connecting the first time, or on the device for messages larger than NCCL's buffers)
//   until the timeout aborts them.
// - The group keeps each operation's tensors alive until its event has completed, even when
//   the Work is dropped unwaited: their memory must not be freed (or, by a caching allocator,
//   handed to other work) while NCCL still reads or writes it.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "distributed/process_group.h"
#include "distributed/store.h"

// The CUDA and NCCL handle types, so that this header needs neither library's headers.
struct CUstream_st;
struct CUevent_st;
struct ncclComm;

namespace ember::distributed {

class ProcessGroupNCCL {
 public:
  // Creates the communicator of `size` ranks on CUDA device `device` (rank 0's ncclUniqueId is
  // exchanged through `store`); raises DistBackendError when the other ranks do not join
  // within `timeout`.
  ProcessGroupNCCL(std::shared_ptr<Store> store, int rank, int size, Milliseconds timeout,
                   int device);
  ~ProcessGroupNCCL();
  ProcessGroupNCCL(const ProcessGroupNCCL&) = delete;
  ProcessGroupNCCL& operator=(const ProcessGroupNCCL&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  Milliseconds timeout() const { return timeout_; }
  int device() const { return device_; }
  // Whether an error or a timeout has aborted the communicator.
  bool is_broken() const;

  // Tensors are contiguous CUDA tensors on device(), of one dtype.
  std::shared_ptr<Work> allreduce(const Tensor& tensor, ReduceOp op);
  std::shared_ptr<Work> reduce(const Tensor& tensor, int root, ReduceOp op);
  std::shared_ptr<Work> broadcast(const Tensor& tensor, int root);
  // output holds size() chunks of input's numel, rank r's at chunk r.
  std::shared_ptr<Work> allgather(const Tensor& output, const Tensor& input);
  // input holds size() chunks of output's numel; rank r receives the reduction of chunk r.
  std::shared_ptr<Work> reduce_scatter(const Tensor& output, const Tensor& input, ReduceOp op);
  // output (root only; ignored, and may be empty, elsewhere) holds size() chunks of input's
  // numel.
  std::shared_ptr<Work> gather(const Tensor& output, const Tensor& input, int root);
  // input (root only; ignored, and may be empty, elsewhere) holds size() chunks of output's
  // numel; rank r receives chunk r.
  std::shared_ptr<Work> scatter(const Tensor& output, const Tensor& input, int root);
  // Chunk sizes in elements: what this rank receives from each rank, and sends to each.
  std::shared_ptr<Work> alltoall(const Tensor& output, const Tensor& input,
                                 const std::vector<int64_t>& output_counts,
                                 const std::vector<int64_t>& input_counts);
  std::shared_ptr<Work> barrier();
  // The Gloo group checks a declared plan of all-reduces once; NCCL checks no arguments, so
  // there is nothing to declare: the Work returned is complete.
  std::shared_ptr<Work> declare_allreduce_plan(const std::vector<Tensor>& tensors, ReduceOp op);
  // The tag is ignored (see above); source must be a rank, not -1.
  std::shared_ptr<Work> send(const Tensor& tensor, int destination, uint32_t tag);
  std::shared_ptr<Work> recv(const Tensor& tensor, int source, uint32_t tag);

  // The communicator and the operations in flight, shared with the Works so that a Work
  // outliving the group stays safe.
  struct Comm;
  // One enqueued operation: its completion event and the tensors it uses.
  struct Pending;

 private:
  // Enqueues `enqueue` on the group's stream after the default stream's queued work, records
  // the completion event and returns the Work; `tensors` stay alive until it completes.
  std::shared_ptr<Work> launch(
      const std::string& op, std::vector<Tensor> tensors,
      const std::function<void(ncclComm* comm, CUstream_st* stream)>& enqueue,
      int source_rank = -1);
  // gather (to_root) and scatter: each rank's `chunk` to or from its slot of the root's `whole`.
  std::shared_ptr<Work> exchange_with_root(const std::string& name, const Tensor& chunk,
                                           const Tensor& whole, int root, bool to_root);
  void check_tensor(const Tensor& t, const std::string& op, const char* what) const;
  void check_rank(int r, const std::string& op, const char* what) const;
  // Ends the communicator (finalized when healthy, else aborted) and frees the CUDA resources;
  // never throws.
  void release() noexcept;

  int rank_;
  int size_;
  Milliseconds timeout_;
  int device_;
  std::shared_ptr<Comm> comm_;
  CUstream_st* stream_ = nullptr;
  CUevent_st* ready_ = nullptr;      // recorded on the default stream before each operation
  float* barrier_buffer_ = nullptr;  // one float on the device, all-reduced by barrier()
};

}  // namespace ember::distributed
