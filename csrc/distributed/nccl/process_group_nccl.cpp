// ProcessGroupNCCL (process_group_nccl.h): the communicator's set-up and end, the enqueueing of
// collectives on the group's stream, and the Works that wait for them.
#include "distributed/nccl/process_group_nccl.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

#include "core/shape.h"
#include "distributed/errors.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_device.h"

namespace ember::distributed {

[[noreturn]] static void throw_nccl_error(const std::string& op, ncclComm_t comm,
                                          ncclResult_t status, const char* call) {
  // The last error's text says what failed (a peer's connection, a bad argument); it is empty
  // when NCCL has nothing to add.
  const char* detail = ncclGetLastError(comm);
  EMBER_THROW(distributed::DistBackendError, "[", op, "] NCCL error in ", call, ": ",
              ncclGetErrorString(status),
              detail != nullptr && detail[0] != '\0' ? str_cat(" (", detail, ")") : "");
}

}  // namespace ember::distributed

// Calls an NCCL function and raises DistBackendError naming `op` when it fails. ncclInProgress
// is not a failure: a non-blocking communicator finishes the call in the background
// (wait_enqueued polls for it).
#define EMBER_NCCL_CHECK(op, comm, call)                                               \
  do {                                                                                 \
    const ncclResult_t ember_nccl_status_ = (call);                                    \
    if (ember_nccl_status_ != ncclSuccess && ember_nccl_status_ != ncclInProgress)     \
      ::ember::distributed::throw_nccl_error((op), (comm), ember_nccl_status_, #call); \
  } while (0)

namespace ember::distributed {

namespace {

using Clock = std::chrono::steady_clock;

// Polls of a state that changes on the device or on NCCL's threads: yield for the first
// Work::kWaitSpin (Note [Waits spin first] in process_group.cpp), then sleep, up to 1 ms.
class Backoff {
 public:
  void pause() {
    if (Clock::now() < spin_until_) {
      std::this_thread::yield();
      return;
    }
    std::this_thread::sleep_for(sleep_);
    sleep_ = std::min(sleep_ * 2, std::chrono::microseconds(1000));
  }

 private:
  Clock::time_point spin_until_ = Clock::now() + Work::kWaitSpin;
  std::chrono::microseconds sleep_{10};
};

// ncclGroupStart .. ncclGroupEnd; the group is closed even when a call inside it throws, so
// that NCCL's per-thread group state does not leak into the next operation.
class NcclGroup {
 public:
  explicit NcclGroup(const std::string& op) : op_(op) {
    EMBER_NCCL_CHECK(op_, nullptr, ncclGroupStart());
  }
  void end(ncclComm_t comm) {
    open_ = false;
    EMBER_NCCL_CHECK(op_, comm, ncclGroupEnd());
  }
  ~NcclGroup() {
    if (open_) ncclGroupEnd();
  }
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;

 private:
  const std::string& op_;
  bool open_ = true;
};

// A dtype as NCCL sees it: complex numbers travel as pairs of their real type.
struct NcclType {
  ncclDataType_t type;
  int64_t scalars;  // NCCL elements per tensor element
};

NcclType nccl_type(ScalarType dtype, const std::string& op) {
  switch (dtype) {
    case ScalarType::Bool:  // one byte per element, as PyTorch sends them
    case ScalarType::UInt8:
      return {ncclUint8, 1};
    case ScalarType::Int8:
      return {ncclInt8, 1};
    case ScalarType::Int32:
      return {ncclInt32, 1};
    case ScalarType::Int64:
      return {ncclInt64, 1};
    case ScalarType::Float16:
      return {ncclFloat16, 1};
    case ScalarType::BFloat16:
      return {ncclBfloat16, 1};
    case ScalarType::Float32:
      return {ncclFloat32, 1};
    case ScalarType::Float64:
      return {ncclFloat64, 1};
    case ScalarType::Complex64:
      return {ncclFloat32, 2};
    case ScalarType::Complex128:
      return {ncclFloat64, 2};
    default:
      EMBER_THROW(TypeError, "[", op, "] the nccl backend does not support ", dtype_name(dtype),
                  " tensors (it supports bool, uint8, int8, int32, int64, float16, bfloat16, "
                  "float32, float64, complex64 and complex128)");
  }
}

ncclRedOp_t nccl_reduce_op(ReduceOp op, ScalarType dtype, const std::string& name) {
  if (op == ReduceOp::kBand || op == ReduceOp::kBor || op == ReduceOp::kBxor)
    EMBER_THROW(ValueError, "[", name, "] ReduceOp.", reduce_op_name(op),
                " is not supported by NCCL");
  // Pairs of reals add and average as complex numbers do; they do not multiply or compare so.
  if (is_complex(dtype) && op != ReduceOp::kSum && op != ReduceOp::kAvg)
    EMBER_THROW(TypeError, "[", name, "] ReduceOp.", reduce_op_name(op), " is not defined for ",
                dtype_name(dtype), " tensors on the nccl backend (only SUM and AVG are)");
  if (op == ReduceOp::kAvg && !is_floating(dtype) && !is_complex(dtype))
    EMBER_THROW(TypeError, "[", name,
                "] ReduceOp.AVG needs a floating-point or complex tensor, got ", dtype_name(dtype));
  // Bools are bytes of 0 or 1: any (SUM) is their maximum and all (PRODUCT) their minimum,
  // which keeps them 0 or 1, as in PyTorch.
  if (dtype == ScalarType::Bool) {
    if (op == ReduceOp::kSum) return ncclMax;
    if (op == ReduceOp::kProduct) return ncclMin;
  }
  switch (op) {
    case ReduceOp::kSum:
      return ncclSum;
    case ReduceOp::kProduct:
      return ncclProd;
    case ReduceOp::kMin:
      return ncclMin;
    case ReduceOp::kMax:
      return ncclMax;
    case ReduceOp::kAvg:
      return ncclAvg;
    default:
      break;
  }
  EMBER_THROW(ValueError, "[", name, "] unknown reduce op");
}

std::string describe(const Tensor& t) {
  return str_cat(shape_str(t.sizes()), " ", dtype_name(t.dtype()));
}

char* bytes_of(const Tensor& t) {
  return static_cast<char*>(t.impl()->device_data());
}

}  // namespace

// -- the shared state ----------------------------------------------------------------------------
struct ProcessGroupNCCL::Pending {
  cudaEvent_t done = nullptr;  // recorded on the group's stream after the operation
  std::vector<Tensor> tensors;
  // Set when the communicator was aborted before the event completed: the event then completes
  // without the operation having done its work.
  std::atomic<bool> aborted{false};

  Pending() = default;
  Pending(const Pending&) = delete;
  Pending& operator=(const Pending&) = delete;
  ~Pending() {
    if (done != nullptr) cudaEventDestroy(done);
  }
};

struct ProcessGroupNCCL::Comm {
  // Guards every use of `handle` (NCCL's calls on one communicator must not race its abort) and
  // orders the enqueueing of operations.
  std::mutex mutex;
  ncclComm_t handle = nullptr;  // null once aborted or destroyed
  std::atomic<bool> broken{false};
  std::string reason;  // why it was aborted
  int rank = 0;
  int size = 0;
  int device = 0;
  // Operations not yet seen complete, in enqueue order (the order they complete in).
  std::deque<std::shared_ptr<Pending>> in_flight;

  // Under mutex.
  void check_usable(const std::string& op) const {
    if (broken)
      EMBER_THROW(distributed::DistBackendError, "[", op,
                  "] the NCCL communicator was aborted after an earlier error: ", reason,
                  "; create a new process group");
  }

  // Under mutex. Aborting ends the kernels of every operation in flight, whose events then
  // complete: mark those operations failed first.
  void abort_locked(const std::string& why) noexcept {
    for (const auto& pending : in_flight)
      if (cudaEventQuery(pending->done) != cudaSuccess) pending->aborted = true;
    if (handle != nullptr) {
      ncclCommAbort(handle);
      handle = nullptr;
    }
    if (!broken) {
      reason = why;
      broken = true;
    }
  }

  // Aborts the communicator and raises DistBackendError for `op`.
  [[noreturn]] void fail(const std::string& op, const std::string& what) {
    const std::string message = str_cat("[", op, "] ", what, " (rank ", rank, " of ", size,
                                        "; the NCCL communicator is aborted)");
    {
      std::lock_guard<std::mutex> lock(mutex);
      abort_locked(message);
    }
    throw DistBackendError(message);
  }

  [[noreturn]] void fail_aborted(const std::string& op) {
    std::lock_guard<std::mutex> lock(mutex);
    EMBER_THROW(distributed::DistBackendError, "[", op,
                "] did not complete: the NCCL communicator was aborted: ", reason);
  }

  // An error NCCL met in the background (a peer's connection broke), or "" when none. Only
  // looks when the mutex is free, unless `block`: a thread that holds it is enqueueing, and
  // checks for errors itself.
  std::string async_failure(bool block) {
    std::unique_lock<std::mutex> lock(mutex, std::defer_lock);
    if (block) {
      lock.lock();
    } else if (!lock.try_lock()) {
      return "";
    }
    if (handle == nullptr) return "";
    ncclResult_t state = ncclSuccess;
    const ncclResult_t status = ncclCommGetAsyncError(handle, &state);
    if (status != ncclSuccess) state = status;
    if (state == ncclSuccess || state == ncclInProgress) return "";
    const char* detail = ncclGetLastError(handle);
    return str_cat("NCCL error: ", ncclGetErrorString(state),
                   detail != nullptr && detail[0] != '\0' ? str_cat(" (", detail, ")") : "");
  }

  // Under mutex: drops the operations whose events have completed, releasing their tensors.
  void release_completed() {
    while (!in_flight.empty() && cudaEventQuery(in_flight.front()->done) == cudaSuccess)
      in_flight.pop_front();
  }
};

namespace {

// Under comm.mutex: a non-blocking communicator may still be setting up the call just made
// (connecting to a peer for the first time); wait until it is enqueued, at most `timeout`.
void wait_enqueued(ProcessGroupNCCL::Comm& comm, const std::string& op, Milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  Backoff backoff;
  while (true) {
    ncclResult_t state = ncclSuccess;
    EMBER_NCCL_CHECK(op, comm.handle, ncclCommGetAsyncError(comm.handle, &state));
    if (state == ncclSuccess) return;
    if (state != ncclInProgress) throw_nccl_error(op, comm.handle, state, "the communicator");
    if (Clock::now() >= deadline)
      EMBER_THROW(distributed::DistBackendError, "[", op, "] timed out after ", timeout.count(),
                  " ms while NCCL set up the operation; another rank may have died or not "
                  "called it");
    backoff.pause();
  }
}

// The waiter of an operation's Work (on the thread that waits): polls its event, the
// communicator's errors and the clock, then orders the default stream after the operation.
int wait_for(ProcessGroupNCCL::Comm& comm, ProcessGroupNCCL::Pending& pending,
             const std::string& op, Milliseconds timeout, int source_rank) {
  const auto deadline = Clock::now() + timeout;
  Backoff backoff;
  while (!pending.aborted) {
    const cudaError_t status = cudaEventQuery(pending.done);
    if (status == cudaSuccess) break;
    if (status != cudaErrorNotReady)
      comm.fail(op, str_cat("CUDA error while waiting: ", cudaGetErrorName(status), " (",
                            cudaGetErrorString(status), ")"));
    const bool late = Clock::now() >= deadline;
    // Past the deadline, wait for the lock: an error NCCL saw explains more than the timeout.
    const std::string error = comm.async_failure(late);
    if (!error.empty()) comm.fail(op, error);
    if (late)
      comm.fail(op, str_cat("timed out after ", timeout.count(),
                            " ms; another rank may have died or not called it"));
    backoff.pause();
  }
  if (pending.aborted) comm.fail_aborted(op);
  cuda::DeviceGuard device(comm.device);
  EMBER_CUDA_CHECK(op.c_str(), cudaStreamWaitEvent(cudaStreamLegacy, pending.done, 0));
  return source_rank;
}

}  // namespace

// -- ProcessGroupNCCL ----------------------------------------------------------------------------
ProcessGroupNCCL::ProcessGroupNCCL(std::shared_ptr<Store> store, int rank, int size,
                                   Milliseconds timeout, int device)
    : rank_(rank),
      size_(size),
      timeout_(timeout),
      device_(device),
      comm_(std::make_shared<Comm>()) {
  const std::string op = "init_process_group";
  EMBER_CHECK_T(ValueError, size >= 1, "[", op, "] world_size must be >= 1, got ", size);
  EMBER_CHECK_T(ValueError, rank >= 0 && rank < size, "[", op, "] rank ", rank, " is not in [0, ",
                size, ")");
  const int devices = cuda::device_count();
  EMBER_CHECK_T(ValueError, device >= 0 && device < devices, "[", op, "] CUDA device ", device,
                " does not exist (", devices, " visible)");
  comm_->rank = rank;
  comm_->size = size;
  comm_->device = device;
  try {
    cuda::DeviceGuard guard(device);
    // Rank 0's id names the communicator; the others read it from the store (waiting up to the
    // store's timeout for rank 0 to write it).
    ncclUniqueId id;
    const std::string key = "nccl_unique_id";
    if (rank == 0) {
      EMBER_NCCL_CHECK(op, nullptr, ncclGetUniqueId(&id));
      const char* bytes = reinterpret_cast<const char*>(&id);
      store->set(key, Bytes(bytes, bytes + sizeof(id)));
    } else {
      const Bytes bytes = store->get(key);
      EMBER_CHECK_T(distributed::DistBackendError, bytes.size() == sizeof(id), "[", op,
                    "] the store's ", key, " has ", bytes.size(), " bytes, expected ", sizeof(id));
      std::memcpy(&id, bytes.data(), sizeof(id));
    }

    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclComm_t handle = nullptr;
    const ncclResult_t started = ncclCommInitRankConfig(&handle, size, id, rank, &config);
    if (started != ncclSuccess && started != ncclInProgress) {
      if (handle != nullptr) ncclCommAbort(handle);
      throw_nccl_error(op, nullptr, started, "ncclCommInitRankConfig");
    }
    const auto deadline = Clock::now() + timeout;
    Backoff backoff;
    ncclResult_t state = ncclInProgress;
    while (true) {
      const ncclResult_t status = ncclCommGetAsyncError(handle, &state);
      if (status != ncclSuccess) state = status;
      if (state != ncclInProgress) break;
      if (Clock::now() >= deadline) {
        ncclCommAbort(handle);
        EMBER_THROW(distributed::DistBackendError, "[", op, "] rank ", rank, " of ", size,
                    " timed out after ", timeout.count(),
                    " ms setting up the NCCL communicator; another rank may have died or not "
                    "joined");
      }
      backoff.pause();
    }
    if (state != ncclSuccess) {
      const char* detail = ncclGetLastError(handle);
      const std::string message =
          str_cat("[", op, "] rank ", rank, " of ", size,
                  " could not set up the NCCL communicator: ", ncclGetErrorString(state),
                  detail != nullptr && detail[0] != '\0' ? str_cat(" (", detail, ")") : "");
      ncclCommAbort(handle);
      throw DistBackendError(message);
    }
    comm_->handle = handle;

    cudaStream_t stream = nullptr;
    EMBER_CUDA_CHECK(op.c_str(), cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    stream_ = stream;
    cudaEvent_t ready = nullptr;
    EMBER_CUDA_CHECK(op.c_str(), cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
    ready_ = ready;
    void* buffer = nullptr;
    EMBER_CUDA_CHECK(op.c_str(), cudaMalloc(&buffer, sizeof(float)));
    barrier_buffer_ = static_cast<float*>(buffer);
    EMBER_CUDA_CHECK(op.c_str(), cudaMemset(buffer, 0, sizeof(float)));
  } catch (...) {
    release();
    throw;
  }
}

ProcessGroupNCCL::~ProcessGroupNCCL() {
  release();
}

void ProcessGroupNCCL::release() noexcept {
  Comm& comm = *comm_;
  std::lock_guard<std::mutex> lock(comm.mutex);
  int previous = -1;
  const bool switched = cudaGetDevice(&previous) == cudaSuccess && previous != device_ &&
                        cudaSetDevice(device_) == cudaSuccess;
  if (comm.handle != nullptr) {
    // Finalizing lets the operations in flight complete; when that fails or takes longer than
    // the timeout (a peer is gone), abort instead, as a destructor must not hang.
    bool finalized = false;
    const ncclResult_t started = ncclCommFinalize(comm.handle);
    if (started == ncclSuccess || started == ncclInProgress) {
      const auto deadline = Clock::now() + timeout_;
      Backoff backoff;
      ncclResult_t state = ncclInProgress;
      while (true) {
        if (ncclCommGetAsyncError(comm.handle, &state) != ncclSuccess) state = ncclInternalError;
        if (state != ncclInProgress || Clock::now() >= deadline) break;
        backoff.pause();
      }
      finalized = state == ncclSuccess;
    }
    if (finalized) {
      ncclCommDestroy(comm.handle);
      comm.handle = nullptr;
    } else {
      comm.abort_locked("the process group was destroyed before the operation completed");
    }
  }
  if (stream_ != nullptr) {
    if (!comm.broken) cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
    stream_ = nullptr;
  }
  comm.in_flight.clear();
  if (ready_ != nullptr) {
    cudaEventDestroy(ready_);
    ready_ = nullptr;
  }
  if (barrier_buffer_ != nullptr) {
    cudaFree(barrier_buffer_);
    barrier_buffer_ = nullptr;
  }
  if (switched) cudaSetDevice(previous);
}

bool ProcessGroupNCCL::is_broken() const {
  return comm_->broken;
}

void ProcessGroupNCCL::check_tensor(const Tensor& t, const std::string& op,
                                    const char* what) const {
  EMBER_CHECK_T(ValueError, t.defined(), "[", op, "] the ", what, " is undefined");
  const Device d = t.device();
  EMBER_CHECK_T(ValueError, d.type == DeviceType::CUDA && d.index == device_, "[", op, "] the ",
                what, " is on ", d.str(), ", but this process group uses cuda:", device_);
  EMBER_CHECK_T(ValueError, t.is_contiguous(), "[", op, "] the ", what, " (", describe(t),
                ") must be contiguous");
}

void ProcessGroupNCCL::check_rank(int r, const std::string& op, const char* what) const {
  EMBER_CHECK_T(ValueError, r >= 0 && r < size_, "[", op, "] ", what, " ", r,
                " is not a rank of this group (size ", size_, ")");
}

// Note [Ordering after the default stream]: the event recorded on the legacy default stream
// before each operation makes the group's (non-blocking) stream wait for the kernels and copies
// that produced the tensors; the Work's waiter makes the default stream wait for the
// operation's event in turn. Between the two the caller's work and the communication overlap.
std::shared_ptr<Work> ProcessGroupNCCL::launch(
    const std::string& op, std::vector<Tensor> tensors,
    const std::function<void(ncclComm* comm, CUstream_st* stream)>& enqueue, int source_rank) {
  auto work = std::make_shared<Work>();
  work->description = op;
  Comm& comm = *comm_;
  std::lock_guard<std::mutex> lock(comm.mutex);
  comm.check_usable(op);
  if (!enqueue) {  // nothing to move (every rank agrees: the sizes are the same everywhere)
    work->set_source_rank(source_rank);
    work->finish();
    return work;
  }
  cuda::DeviceGuard device(device_);
  auto pending = std::make_shared<Pending>();
  EMBER_CUDA_CHECK(op.c_str(), cudaEventCreateWithFlags(&pending->done, cudaEventDisableTiming));
  pending->tensors = std::move(tensors);
  try {
    EMBER_CUDA_CHECK(op.c_str(), cudaEventRecord(ready_, cudaStreamLegacy));
    EMBER_CUDA_CHECK(op.c_str(), cudaStreamWaitEvent(stream_, ready_, 0));
    enqueue(comm.handle, stream_);
    wait_enqueued(comm, op, timeout_);
    EMBER_CUDA_CHECK(op.c_str(), cudaEventRecord(pending->done, stream_));
  } catch (const std::exception& e) {
    // The other ranks may have enqueued their side and would wait for this one: abort, so that
    // this rank fails now and theirs when their waits time out or see the broken connection.
    const std::string message =
        str_cat(e.what(), " (rank ", rank_, " of ", size_, "; the NCCL communicator is aborted)");
    comm.abort_locked(message);
    throw DistBackendError(message);
  }
  comm.release_completed();
  comm.in_flight.push_back(pending);

  std::shared_ptr<Comm> shared = comm_;
  work->set_poller([shared, pending] {
    if (pending->aborted) return true;
    // Done, or a CUDA error that the waiter reports.
    if (cudaEventQuery(pending->done) != cudaErrorNotReady) return true;
    return !shared->async_failure(false).empty();
  });
  work->set_waiter([shared, pending, op, source_rank](Milliseconds timeout) {
    return wait_for(*shared, *pending, op, timeout, source_rank);
  });
  return work;
}

// -- collectives ---------------------------------------------------------------------------------
std::shared_ptr<Work> ProcessGroupNCCL::allreduce(const Tensor& tensor, ReduceOp op) {
  const std::string name = "nccl allreduce";
  check_tensor(tensor, name, "tensor");
  const NcclType type = nccl_type(tensor.dtype(), name);
  const ncclRedOp_t reduce = nccl_reduce_op(op, tensor.dtype(), name);
  if (tensor.numel() == 0) return launch(name, {}, nullptr);
  const size_t count = static_cast<size_t>(tensor.numel() * type.scalars);
  void* data = bytes_of(tensor);
  return launch(name, {tensor}, [=](ncclComm_t comm, cudaStream_t stream) {
    EMBER_NCCL_CHECK(name, comm, ncclAllReduce(data, data, count, type.type, reduce, comm, stream));
  });
}

std::shared_ptr<Work> ProcessGroupNCCL::reduce(const Tensor& tensor, int root, ReduceOp op) {
  const std::string name = "nccl reduce";
  check_rank(root, name, "dst");
  check_tensor(tensor, name, "tensor");
  const NcclType type = nccl_type(tensor.dtype(), name);
  const ncclRedOp_t reduce = nccl_reduce_op(op, tensor.dtype(), name);
  if (tensor.numel() == 0) return launch(name, {}, nullptr);
  const size_t count = static_cast<size_t>(tensor.numel() * type.scalars);
  void* data = bytes_of(tensor);
  return launch(name, {tensor}, [=](ncclComm_t comm, cudaStream_t stream) {
    EMBER_NCCL_CHECK(name, comm,
                     ncclReduce(data, data, count, type.type, reduce, root, comm, stream));
  });
}

std::shared_ptr<Work> ProcessGroupNCCL::broadcast(const Tensor& tensor, int root) {
  const std::string name = "nccl broadcast";
  check_rank(root, name, "src");
  check_tensor(tensor, name, "tensor");
  const NcclType type = nccl_type(tensor.dtype(), name);
  if (tensor.numel() == 0) return launch(name, {}, nullptr);
  const size_t count = static_cast<size_t>(tensor.numel() * type.scalars);
  void* data = bytes_of(tensor);
  return launch(name, {tensor}, [=](ncclComm_t comm, cudaStream_t stream) {
    EMBER_NCCL_CHECK(name, comm, ncclBroadcast(data, data, count, type.type, root, comm, stream));
  });
}

std::shared_ptr<Work> ProcessGroupNCCL::allgather(const Tensor& output, const Tensor& input) {
  const std::string name = "nccl allgather";
  check_tensor(output, name, "output tensor");
  check_tensor(input, name, "input tensor");
  EMBER_CHECK_T(TypeError, output.dtype() == input.dtype(), "[", name, "] the output is ",
                dtype_name(output.dtype()), " but the input is ", dtype_name(input.dtype()));
  EMBER_CHECK_T(ValueError, output.numel() == input.numel() * size_, "[", name, "] the output (",
                describe(output), ") has ", output.numel(), " elements, expected ", size_,
                " x the input's (", describe(input), ") ", input.numel());
  const NcclType type = nccl_type(input.dtype(), name);
  if (input.numel() == 0) return launch(name, {}, nullptr);
  const size_t count = static_cast<size_t>(input.numel() * type.scalars);
  const void* in = bytes_of(input);
  void* out = bytes_of(output);
  return launch(name, {output, input}, [=](ncclComm_t comm, cudaStream_t stream) {
    EMBER_NCCL_CHECK(name, comm, ncclAllGather(in, out, count, type.type, comm, stream));
  });
}

std::shared_ptr<Work> ProcessGroupNCCL::reduce_scatter(const Tensor& output, const Tensor& input,
                                                       ReduceOp op) {
  const std::string name = "nccl reduce_scatter";
  check_tensor(output, name, "output tensor");
  check_tensor(input, name, "input tensor");
  EMBER_CHECK_T(TypeError, output.dtype() == input.dtype(), "[", name, "] the output is ",
                dtype_name(output.dtype()), " but the input is ", dtype_name(input.dtype()));
  EMBER_CHECK_T(ValueError, input.numel() == output.numel() * size_, "[", name, "] the input (",
                describe(input), ") has ", input.numel(), " elements, expected ", size_,
                " x the output's (", describe(output), ") ", output.numel());
  const NcclType type = nccl_type(output.dtype(), name);
  const ncclRedOp_t reduce = nccl_reduce_op(op, output.dtype(), name);
  if (output.numel() == 0) return launch(name, {}, nullptr);
  const size_t count = static_cast<size_t>(output.numel() * type.scalars);
  const void* in = bytes_of(input);
  void* out = bytes_of(output);
  return launch(name, {output, input}, [=](ncclComm_t comm, cudaStream_t stream) {
    EMBER_NCCL_CHECK(name, comm,
                     ncclReduceScatter(in, out, count, type.type, reduce, comm, stream));
  });
}

// gather and scatter as grouped point-to-point calls: the root exchanges a chunk with every other
// rank and copies its own on the stream.
std::shared_ptr<Work> ProcessGroupNCCL::gather(const Tensor& output, const Tensor& input,
                                               int root) {
  return exchange_with_root("nccl gather", input, output, root, /*to_root=*/true);
}

std::shared_ptr<Work> ProcessGroupNCCL::scatter(const Tensor& output, const Tensor& input,
                                                int root) {
  return exchange_with_root("nccl scatter", output, input, root, /*to_root=*/false);
}

std::shared_ptr<Work> ProcessGroupNCCL::exchange_with_root(const std::string& name,
                                                           const Tensor& chunk, const Tensor& whole,
                                                           int root, bool to_root) {
  check_rank(root, name, to_root ? "dst" : "src");
  const char* chunk_name = to_root ? "input" : "output";
  const char* whole_name = to_root ? "output" : "input";
  check_tensor(chunk, name, chunk_name);
  const bool is_root = rank_ == root;
  if (is_root) {  // elsewhere `whole` is ignored, as in PyTorch
    check_tensor(whole, name, whole_name);
    EMBER_CHECK_T(TypeError, whole.dtype() == chunk.dtype(), "[", name, "] the ", whole_name,
                  " is ", dtype_name(whole.dtype()), " but the ", chunk_name, " is ",
                  dtype_name(chunk.dtype()));
    EMBER_CHECK_T(ValueError, whole.numel() == chunk.numel() * size_, "[", name, "] the ",
                  whole_name, " (", describe(whole), ") has ", whole.numel(),
                  " elements, expected ", size_, " x the ", chunk_name, "'s (", describe(chunk),
                  ") ", chunk.numel());
  }
  const NcclType type = nccl_type(chunk.dtype(), name);
  if (chunk.numel() == 0) return launch(name, {}, nullptr);
  const size_t count = static_cast<size_t>(chunk.numel() * type.scalars);
  const size_t bytes = static_cast<size_t>(chunk.numel()) * element_size(chunk.dtype());
  char* mine = bytes_of(chunk);
  char* all = is_root ? bytes_of(whole) : nullptr;
  std::vector<Tensor> tensors{chunk};
  if (is_root) tensors.push_back(whole);
  const int rank = rank_, size = size_;
  return launch(name, std::move(tensors), [=](ncclComm_t comm, cudaStream_t stream) {
    if (!is_root) {
      EMBER_NCCL_CHECK(name, comm,
                       to_root ? ncclSend(mine, count, type.type, root, comm, stream)
                               : ncclRecv(mine, count, type.type, root, comm, stream));
      return;
    }
    char* own_slot = all + static_cast<size_t>(rank) * bytes;
    if (own_slot != mine) {
      EMBER_CUDA_CHECK(name.c_str(),
                       cudaMemcpyAsync(to_root ? own_slot : mine, to_root ? mine : own_slot, bytes,
                                       cudaMemcpyDeviceToDevice, stream));
    }
    NcclGroup group(name);
    for (int r = 0; r < size; ++r) {
      if (r == rank) continue;
      char* slot = all + static_cast<size_t>(r) * bytes;
      EMBER_NCCL_CHECK(name, comm,
                       to_root ? ncclRecv(slot, count, type.type, r, comm, stream)
                               : ncclSend(slot, count, type.type, r, comm, stream));
    }
    group.end(comm);
  });
}

std::shared_ptr<Work> ProcessGroupNCCL::alltoall(const Tensor& output, const Tensor& input,
                                                 const std::vector<int64_t>& output_counts,
                                                 const std::vector<int64_t>& input_counts) {
  const std::string name = "nccl alltoall";
  check_tensor(output, name, "output tensor");
  check_tensor(input, name, "input tensor");
  EMBER_CHECK_T(TypeError, output.dtype() == input.dtype(), "[", name, "] the output is ",
                dtype_name(output.dtype()), " but the input is ", dtype_name(input.dtype()));
  EMBER_CHECK_T(ValueError,
                static_cast<int>(output_counts.size()) == size_ &&
                    static_cast<int>(input_counts.size()) == size_,
                "[", name, "] needs one split per rank (", size_, "), got ", output_counts.size(),
                " output and ", input_counts.size(), " input splits");
  int64_t in_total = 0, out_total = 0;
  for (int r = 0; r < size_; ++r) {
    EMBER_CHECK_T(ValueError, input_counts[r] >= 0 && output_counts[r] >= 0, "[", name,
                  "] split sizes must be >= 0");
    in_total += input_counts[r];
    out_total += output_counts[r];
  }
  EMBER_CHECK_T(ValueError, in_total == input.numel() && out_total == output.numel(), "[", name,
                "] the splits add up to ", in_total, " (input) and ", out_total,
                " (output) elements, but the input is ", describe(input), " and the output ",
                describe(output));
  EMBER_CHECK_T(ValueError, input_counts[rank_] == output_counts[rank_], "[", name, "] rank ",
                rank_, " sends itself ", input_counts[rank_], " elements but expects ",
                output_counts[rank_]);
  const NcclType type = nccl_type(input.dtype(), name);
  const size_t item = element_size(input.dtype());
  const char* in = bytes_of(input);
  char* out = bytes_of(output);
  const int rank = rank_, size = size_;
  // A chunk of 0 elements is neither sent nor received; both sides skip it alike.
  return launch(name, {output, input}, [=](ncclComm_t comm, cudaStream_t stream) {
    size_t in_offset = 0, out_offset = 0;  // in bytes
    NcclGroup group(name);
    for (int r = 0; r < size; ++r) {
      const size_t send = static_cast<size_t>(input_counts[r]);
      const size_t receive = static_cast<size_t>(output_counts[r]);
      if (r == rank) {
        if (send > 0 && out + out_offset != in + in_offset)
          EMBER_CUDA_CHECK(name.c_str(),
                           cudaMemcpyAsync(out + out_offset, in + in_offset, send * item,
                                           cudaMemcpyDeviceToDevice, stream));
      } else {
        if (send > 0)
          EMBER_NCCL_CHECK(
              name, comm,
              ncclSend(in + in_offset, send * type.scalars, type.type, r, comm, stream));
        if (receive > 0)
          EMBER_NCCL_CHECK(
              name, comm,
              ncclRecv(out + out_offset, receive * type.scalars, type.type, r, comm, stream));
      }
      in_offset += send * item;
      out_offset += receive * item;
    }
    group.end(comm);
  });
}

std::shared_ptr<Work> ProcessGroupNCCL::barrier() {
  const std::string name = "nccl barrier";
  float* buffer = barrier_buffer_;
  return launch(name, {}, [=](ncclComm_t comm, cudaStream_t stream) {
    EMBER_NCCL_CHECK(name, comm,
                     ncclAllReduce(buffer, buffer, 1, ncclFloat32, ncclSum, comm, stream));
  });
}

std::shared_ptr<Work> ProcessGroupNCCL::declare_allreduce_plan(const std::vector<Tensor>& tensors,
                                                               ReduceOp op) {
  auto work = std::make_shared<Work>();
  work->description = "nccl declare_allreduce_plan";
  work->finish();
  return work;
}

// NCCL pairs a rank's sends to a peer with the peer's receives from it in the order they were
// posted, so the tag has nothing left to match.
std::shared_ptr<Work> ProcessGroupNCCL::send(const Tensor& tensor, int destination, uint32_t tag) {
  const std::string name = "nccl send";
  check_rank(destination, name, "dst");
  EMBER_CHECK_T(ValueError, destination != rank_, "[", name,
                "] a rank cannot send to itself (rank ", rank_, ")");
  check_tensor(tensor, name, "tensor");
  const NcclType type = nccl_type(tensor.dtype(), name);
  if (tensor.numel() == 0) return launch(name, {}, nullptr);
  const size_t count = static_cast<size_t>(tensor.numel() * type.scalars);
  const void* data = bytes_of(tensor);
  return launch(name, {tensor}, [=](ncclComm_t comm, cudaStream_t stream) {
    EMBER_NCCL_CHECK(name, comm, ncclSend(data, count, type.type, destination, comm, stream));
  });
}

std::shared_ptr<Work> ProcessGroupNCCL::recv(const Tensor& tensor, int source, uint32_t tag) {
  const std::string name = "nccl recv";
  EMBER_CHECK_T(ValueError, source != -1, "[", name,
                "] NCCL needs the source rank: a receive from any source is not supported");
  check_rank(source, name, "src");
  EMBER_CHECK_T(ValueError, source != rank_, "[", name,
                "] a rank cannot receive from itself (rank ", rank_, ")");
  check_tensor(tensor, name, "tensor");
  const NcclType type = nccl_type(tensor.dtype(), name);
  if (tensor.numel() == 0) return launch(name, {}, nullptr, source);
  const size_t count = static_cast<size_t>(tensor.numel() * type.scalars);
  void* data = bytes_of(tensor);
  return launch(
      name, {tensor},
      [=](ncclComm_t comm, cudaStream_t stream) {
        EMBER_NCCL_CHECK(name, comm, ncclRecv(data, count, type.type, source, comm, stream));
      },
      source);
}

}  // namespace ember::distributed
