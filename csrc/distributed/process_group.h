// A process group on Gloo: the collectives of ember.distributed's "gloo" backend over CPU
// tensors (docs/design/distributed.md).
//
// Collectives run in call order on one worker thread per group and return a Work; the caller
// waits on it (with the GIL released), at once for a synchronous call, later for async_op=True.
// Every rank must call the same collectives in the same order: each gets the next tag, which
// keeps Gloo's messages of different operations apart. Point-to-point send/recv post their
// buffer at once and complete in Work::wait.
#pragma once
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/tensor.h"
#include "distributed/store.h"

namespace gloo {
class Context;
}

namespace ember::distributed {

enum class ReduceOp { kSum, kAvg, kProduct, kMin, kMax, kBand, kBor, kBxor };

const char* reduce_op_name(ReduceOp op);

// The completion of one operation.
class Work {
 public:
  // Blocks until the operation ends or `timeout` passes (DistBackendError then); rethrows the
  // operation's error. For send/recv the wait itself completes the transfer.
  void wait(Milliseconds timeout);
  bool is_completed();
  bool is_success();
  std::string error_message();
  int source_rank() const { return source_rank_; }  // recv from any source: who sent
  void set_source_rank(int rank) { source_rank_ = rank; }

  // The operation's side.
  void finish(std::exception_ptr error = nullptr);
  void set_waiter(std::function<int(Milliseconds)> waiter) { waiter_ = std::move(waiter); }
  // Work that ends on a device (NCCL): is_completed() asks `poller` whether it has, and then runs
  // the waiter to finish it, so a Work that nobody waits on still completes when polled.
  void set_poller(std::function<bool()> poller) { poller_ = std::move(poller); }
  std::string description;

  // How long wait() spins before it sleeps (Note [Waits spin first]).
  static constexpr Milliseconds kWaitSpin{5};

 private:
  void spin_until_done(Milliseconds budget);
  std::mutex mutex_;
  std::condition_variable done_changed_;
  std::atomic<bool> done_{false};  // written under mutex_; read without it while spinning
  std::exception_ptr error_;
  std::function<int(Milliseconds)> waiter_;  // send/recv: completes on the waiting thread
  std::function<bool()> poller_;
  int source_rank_ = -1;
};

class ProcessGroupGloo {
 public:
  // Connects to every other rank through `store` (the addresses are exchanged there), binding
  // to `hostname` (or `interface` when given).
  ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size, Milliseconds timeout,
                   const std::string& hostname, const std::string& interface);
  ~ProcessGroupGloo();
  ProcessGroupGloo(const ProcessGroupGloo&) = delete;
  ProcessGroupGloo& operator=(const ProcessGroupGloo&) = delete;

  // While one lives, collectives called on this thread run on it, in their turn (Note
  // [Collectives in order]); the Work returned is complete.
  class InlineScope {
   public:
    InlineScope();
    ~InlineScope();
    InlineScope(const InlineScope&) = delete;
    InlineScope& operator=(const InlineScope&) = delete;
  };

  int rank() const { return rank_; }
  int size() const { return size_; }
  Milliseconds timeout() const { return timeout_; }

  // Tensors are contiguous CPU tensors of one dtype (the Python layer makes them so).
  std::shared_ptr<Work> allreduce(const Tensor& tensor, ReduceOp op);
  std::shared_ptr<Work> reduce(const Tensor& tensor, int root, ReduceOp op);
  std::shared_ptr<Work> broadcast(const Tensor& tensor, int root);
  // output holds size() chunks of input's size, rank r's at chunk r.
  std::shared_ptr<Work> allgather(const Tensor& output, const Tensor& input);
  // output (root only; ignored elsewhere) holds size() chunks of input's size.
  std::shared_ptr<Work> gather(const Tensor& output, const Tensor& input, int root);
  // input (root only) holds size() chunks of output's size; rank r receives chunk r.
  std::shared_ptr<Work> scatter(const Tensor& output, const Tensor& input, int root);
  // Chunk sizes in elements: what this rank sends to each rank, and receives from each.
  std::shared_ptr<Work> alltoall(const Tensor& output, const Tensor& input,
                                 const std::vector<int64_t>& output_counts,
                                 const std::vector<int64_t>& input_counts);
  std::shared_ptr<Work> barrier();
  // Declares the collectives that will follow, in a cycle (each as the 6 signature fields, see
  // Signature), after checking once that every rank declares the same; calls that follow the
  // plan then skip their argument checks (Note [Checking collectives]). DDP declares its
  // buckets' all-reduces.
  std::shared_ptr<Work> declare_plan(const std::vector<std::vector<int64_t>>& calls);
  std::shared_ptr<Work> send(const Tensor& tensor, int destination, uint32_t tag);
  std::shared_ptr<Work> recv(const Tensor& tensor, int source, uint32_t tag);  // -1: any

 private:
  // What a rank passed to a collective (Note [Checking collectives]); -1 where not relevant.
  struct Signature {
    int64_t op, dtype, numel, root, reduce, extra;
  };
  static constexpr int kSignatureSize = 6;
  static constexpr int64_t kPlanOp = 8;
  // Tags per collective: the argument check (+0, and +4 for its report), the collective (+1) and
  // its sub-steps (+2, +3).
  static constexpr uint32_t kTagsPerOperation = 8;

  std::shared_ptr<Work> enqueue(std::string description, Signature signature,
                                std::function<void(uint32_t tag)> run);
  void verify(const Signature& signature, uint32_t tag);
  void verify_counts(const std::vector<int64_t>& output_counts,
                     const std::vector<int64_t>& input_counts, uint32_t tag);
  void run_queue();
  void wait_turn(uint64_t sequence);
  void end_turn();
  void check_rank(int r, const char* op, const char* what) const;

  int rank_;
  int size_;
  Milliseconds timeout_;
  bool check_arguments_;
  // The last signature all ranks agreed on (Note [Checking collectives]); used only by the
  // collective whose turn it is.
  bool has_verified_ = false;
  int64_t last_verified_[kSignatureSize] = {};
  std::vector<std::array<int64_t, kSignatureSize>> plan_;  // a declared cycle of calls
  size_t plan_position_ = 0;
  std::shared_ptr<Store> store_;
  std::shared_ptr<gloo::Context> context_;

  std::mutex queue_mutex_;
  std::condition_variable queue_changed_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  uint32_t next_tag_ = 0;
  uint64_t next_sequence_ = 0;
  uint64_t turn_ = 0;  // the sequence number allowed to run
  std::condition_variable turn_changed_;
  std::thread worker_;
};

}  // namespace ember::distributed
