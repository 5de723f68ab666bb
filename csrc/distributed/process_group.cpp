// ProcessGroupGloo (process_group.h): Gloo contexts, the worker thread and the collectives.
#include "distributed/process_group.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include <algorithm>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "core/half.h"

namespace ember::distributed {

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "SUM";
    case ReduceOp::kAvg:
      return "AVG";
    case ReduceOp::kProduct:
      return "PRODUCT";
    case ReduceOp::kMin:
      return "MIN";
    case ReduceOp::kMax:
      return "MAX";
    case ReduceOp::kBand:
      return "BAND";
    case ReduceOp::kBor:
      return "BOR";
    case ReduceOp::kBxor:
      return "BXOR";
  }
  return "?";
}

// -- Work ----------------------------------------------------------------------------------------
void Work::finish(std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
    error_ = std::move(error);
  }
  done_changed_.notify_all();
}

// Note [Waits spin first]: a waiter first spins for up to kWaitSpin, yielding the core to any
// thread that can run, and only then sleeps on the condition variable. On a VM a core whose
// threads all sleep halts, and waking it again can take a host scheduler tick (4 ms): timed
// alone, a 4 KB to 1 MB all-reduce on 2 vCPUs took either 0.5 ms or 4 ms, in both libraries.
// A collective's own threads (Gloo's loop, the group's worker) wake promptly while the waiting
// thread keeps its core busy: DDP's step of a small MLP, which waits for its buckets here, went
// from 1.09-1.41x PyTorch's time to 0.60-0.77x. The spin yields at every turn, so it only burns
// time no other thread wants; past kWaitSpin the wait sleeps as before.
void Work::spin_until_done(Milliseconds budget) {
  const auto until = std::chrono::steady_clock::now() + budget;
  while (!done_.load(std::memory_order_acquire) && std::chrono::steady_clock::now() < until) {
    std::this_thread::yield();
  }
}

void Work::wait(Milliseconds timeout) {
  if (waiter_) {
    std::function<int(Milliseconds)> waiter = std::move(waiter_);
    waiter_ = nullptr;
    try {
      source_rank_ = waiter(timeout);
      finish();
    } catch (...) {
      finish(std::current_exception());
    }
  }
  spin_until_done(std::min(timeout, kWaitSpin));
  std::unique_lock<std::mutex> lock(mutex_);
  if (!done_changed_.wait_for(lock, timeout, [&] { return done_.load(); }))
    EMBER_THROW(distributed::DistBackendError, "[", description, "] timed out after ",
                timeout.count(), " ms; another rank may have died or not called it");
  if (error_) std::rethrow_exception(error_);
}

bool Work::is_completed() {
  if (poller_ && !done_.load() && poller_()) {
    // Finished on the device: the waiter returns at once and finishes the Work. An error stays
    // on the Work for wait() to raise.
    try {
      wait(Milliseconds(0));
    } catch (const std::exception&) {
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

bool Work::is_success() {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_ && !error_;
}

std::string Work::error_message() {
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    error = error_;
  }
  if (!error) return "";
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

// -- reductions ----------------------------------------------------------------------------------
namespace {

// Gloo needs only each element's size; the reduction functions below know the type.
template <size_t N>
struct alignas(N < 8 ? N : 8) Element {
  unsigned char bytes[N];
};

template <typename T>
using Accumulate =
    std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

template <typename T, typename F>
void elementwise(void* out, const void* a, const void* b, size_t n, F f) {
  T* o = static_cast<T*>(out);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) {
    using A = Accumulate<T>;
    o[i] = static_cast<T>(f(static_cast<A>(x[i]), static_cast<A>(y[i])));
  }
}

// NaN wins, as PyTorch's min and max propagate it.
template <typename T>
T maximum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a < b ? b : a;
}

template <typename T>
T minimum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return b < a ? b : a;
}

template <typename T>
gloo::AllreduceOptions::Func reduction(ReduceOp op, ScalarType dtype) {
  constexpr bool kComplex =
      std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;
  constexpr bool kIntegral = std::is_integral_v<T>;
  using A = Accumulate<T>;
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg:  // the sum; the caller divides
      if constexpr (std::is_same_v<T, bool>) {
        return [](void* o, const void* a, const void* b, size_t n) {
          elementwise<bool>(o, a, b, n, [](bool x, bool y) { return x || y; });
        };
      } else {
        return [](void* o, const void* a, const void* b, size_t n) {
          elementwise<T>(o, a, b, n, [](A x, A y) { return x + y; });
        };
      }
    case ReduceOp::kProduct:
      if constexpr (std::is_same_v<T, bool>) {
        return [](void* o, const void* a, const void* b, size_t n) {
          elementwise<bool>(o, a, b, n, [](bool x, bool y) { return x && y; });
        };
      } else {
        return [](void* o, const void* a, const void* b, size_t n) {
          elementwise<T>(o, a, b, n, [](A x, A y) { return x * y; });
        };
      }
    case ReduceOp::kMin:
    case ReduceOp::kMax:
      if constexpr (kComplex) {
        EMBER_THROW(TypeError, "[all_reduce] ", reduce_op_name(op),
                    " is not defined for complex tensors (", dtype_name(dtype), ")");
      } else if (op == ReduceOp::kMin) {
        return [](void* o, const void* a, const void* b, size_t n) {
          elementwise<T>(o, a, b, n, [](A x, A y) { return minimum(x, y); });
        };
      } else {
        return [](void* o, const void* a, const void* b, size_t n) {
          elementwise<T>(o, a, b, n, [](A x, A y) { return maximum(x, y); });
        };
      }
    case ReduceOp::kBand:
    case ReduceOp::kBor:
    case ReduceOp::kBxor:
      if constexpr (!kIntegral) {
        EMBER_THROW(TypeError, "[all_reduce] ", reduce_op_name(op),
                    " needs an integer or bool tensor, got ", dtype_name(dtype));
      } else if (op == ReduceOp::kBand) {
        return [](void* o, const void* a, const void* b, size_t n) {
          elementwise<T>(o, a, b, n, [](A x, A y) { return x & y; });
        };
      } else if (op == ReduceOp::kBor) {
        return [](void* o, const void* a, const void* b, size_t n) {
          elementwise<T>(o, a, b, n, [](A x, A y) { return x | y; });
        };
      } else {
        return [](void* o, const void* a, const void* b, size_t n) {
          elementwise<T>(o, a, b, n, [](A x, A y) { return x ^ y; });
        };
      }
  }
  EMBER_THROW(ValueError, "[all_reduce] unknown reduce op");
}

gloo::AllreduceOptions::Func reduction_for(ScalarType dtype, ReduceOp op) {
  switch (dtype) {
    case ScalarType::Bool:
      return reduction<bool>(op, dtype);
    case ScalarType::UInt8:
      return reduction<uint8_t>(op, dtype);
    case ScalarType::Int8:
      return reduction<int8_t>(op, dtype);
    case ScalarType::Int16:
      return reduction<int16_t>(op, dtype);
    case ScalarType::Int32:
      return reduction<int32_t>(op, dtype);
    case ScalarType::Int64:
      return reduction<int64_t>(op, dtype);
    case ScalarType::Float16:
      return reduction<Half>(op, dtype);
    case ScalarType::BFloat16:
      return reduction<BFloat16>(op, dtype);
    case ScalarType::Float32:
      return reduction<float>(op, dtype);
    case ScalarType::Float64:
      return reduction<double>(op, dtype);
    case ScalarType::Complex64:
      return reduction<std::complex<float>>(op, dtype);
    case ScalarType::Complex128:
      return reduction<std::complex<double>>(op, dtype);
    default:
      EMBER_THROW(TypeError, "[all_reduce] the gloo backend cannot reduce ", dtype_name(dtype),
                  " tensors");
  }
}

// Calls f(Element<size>{}) for the tensor's element size, so Gloo sees the right byte counts.
template <typename F>
void with_element(size_t element_size, F&& f) {
  switch (element_size) {
    case 1:
      return f(Element<1>{});
    case 2:
      return f(Element<2>{});
    case 4:
      return f(Element<4>{});
    case 8:
      return f(Element<8>{});
    case 16:
      return f(Element<16>{});
    default:
      EMBER_THROW(TypeError, "[distributed] unsupported element size ", element_size);
  }
}

template <typename E>
E* elements(const Tensor& t, size_t offset = 0) {
  return static_cast<E*>(t.data_ptr()) + offset;
}

// Gloo reports failures as gloo::Exception (a peer closed its connection, a timeout, a message
// of the wrong size); they become DistBackendError naming the operation and this rank.
[[noreturn]] void rethrow_as_backend_error(const std::string& description, int rank, int size) {
  try {
    throw;
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    EMBER_THROW(distributed::DistBackendError, "[", description, "] failed on rank ", rank, " of ",
                size, ": ", e.what(),
                " (another rank may have exited, or called a different collective or with "
                "other shapes)");
  }
}

// Slots of send/recv, apart from the collectives' (Gloo builds those from small prefixes).
constexpr uint8_t kDataSlotPrefix = 0xe7;
constexpr uint8_t kLengthSlotPrefix = 0xe8;

uint64_t point_to_point_slot(uint8_t prefix, uint32_t tag) {
  return (uint64_t{prefix} << 56) | tag;
}

}  // namespace

// -- argument checks -----------------------------------------------------------------------------
// Note [Checking collectives]: Gloo cannot survive ranks that disagree about a collective. A
// message longer than the buffer posted for it fails an assertion on Gloo's event-loop thread,
// which aborts the process. So before each collective the ranks exchange a fixed-size signature
// (operation, dtype, element count, root, reduce op) through one small allreduce of fixed size,
// which every rank can always receive whatever the others called (the maximum of each field and
// of its negation tells whether all agree), and all of them raise the same DistBackendError,
// naming what each rank passed (gathered then), when the signatures differ.
//
// That round trip costs as much as a small all_reduce, so a rank checks only when its
// signature differs from that of its previous collective on the group, which was checked or
// equal to the one before. By induction, a rank that skips the check runs the same collective
// as every other rank that skips it. When only some ranks' signatures changed, the ones that
// check wait for a check message the others never send, and the others' data waits, unread, in
// slots nobody posts a receive for. Both time out with an error, and no message meets a receive
// of the wrong size. When every rank changed, which is where a mismatch usually starts, the
// error comes at once. Training loops repeat the same collectives, so they rarely pay for it.
// EMBER_DISTRIBUTED_CHECK=0 turns it off, for jobs known to be consistent, where a mismatch then
// aborts as in PyTorch.
namespace {

constexpr const char* kOpNames[] = {"all_reduce", "reduce",     "broadcast", "all_gather", "gather",
                                    "scatter",    "all_to_all", "barrier",   "a DDP plan"};
constexpr int64_t kNumOpNames = sizeof(kOpNames) / sizeof(kOpNames[0]);

std::string describe(const int64_t* s) {
  const int64_t op = s[0];
  std::string out = op >= 0 && op < kNumOpNames ? kOpNames[op] : "?";
  if (op == 7 || op == 8) return out;  // barrier, plan
  const int64_t dtype = s[1];
  out += str_cat(
      " of ",
      dtype >= 0 && dtype < kNumScalarTypes ? dtype_name(static_cast<ScalarType>(dtype)) : "?",
      " x ", s[2]);
  if (s[3] >= 0) out += str_cat(", root ", s[3]);
  if (s[4] >= 0) out += str_cat(", op ", reduce_op_name(static_cast<ReduceOp>(s[4])));
  return out;
}

bool checks_enabled() {
  const char* value = std::getenv("EMBER_DISTRIBUTED_CHECK");
  return value == nullptr || std::strcmp(value, "0") != 0;
}

}  // namespace

void ProcessGroupGloo::verify(const Signature& signature, uint32_t tag) {
  if (!check_arguments_ || size_ == 1) return;
  const int64_t mine[kSignatureSize] = {signature.op,   signature.dtype,  signature.numel,
                                        signature.root, signature.reduce, signature.extra};
  if (!plan_.empty()) {
    const int64_t* expected = plan_[plan_position_].data();
    if (std::equal(mine, mine + kSignatureSize, expected)) {
      plan_position_ = (plan_position_ + 1) % plan_.size();
      return;
    }
    plan_.clear();  // off the plan: check this one (never fall back to the previous-call rule)
  } else if (has_verified_ && std::equal(mine, mine + kSignatureSize, last_verified_)) {
    return;
  }
  has_verified_ = false;
  // The maximum of each field and of its negation: both equal this rank's values on every rank
  // exactly when all ranks agree. An allreduce of 96 bytes is Gloo's quickest round trip.
  int64_t extremes[2 * kSignatureSize];
  for (int i = 0; i < kSignatureSize; ++i) {
    extremes[i] = mine[i];
    extremes[kSignatureSize + i] = -mine[i];
  }
  gloo::AllreduceOptions agree(context_);
  agree.setOutput(extremes, 2 * kSignatureSize);
  agree.setReduceFunction(reduction_for(ScalarType::Int64, ReduceOp::kMax));
  agree.setTag(tag);
  agree.setTimeout(timeout_);
  gloo::allreduce(agree);
  bool same = true;
  for (int i = 0; i < kSignatureSize; ++i)
    same = same && extremes[i] == mine[i] && extremes[kSignatureSize + i] == -mine[i];
  if (same) {
    std::copy(mine, mine + kSignatureSize, last_verified_);
    has_verified_ = true;
    return;
  }
  // Rare: gather every rank's signature to say who called what.
  std::vector<int64_t> all(static_cast<size_t>(kSignatureSize) * size_);
  gloo::AllgatherOptions opts(context_);
  opts.setInput(const_cast<int64_t*>(mine), kSignatureSize);
  opts.setOutput(all.data(), all.size());
  opts.setTag(tag + 4);
  opts.setTimeout(timeout_);
  gloo::allgather(opts);
  std::string calls;
  for (int r = 0; r < size_; ++r)
    calls += str_cat(r ? "; " : "", "rank ", r, ": ", describe(all.data() + r * kSignatureSize));
  EMBER_THROW(distributed::DistBackendError, "[", describe(mine),
              "] the ranks called different collectives, or with different arguments: ", calls);
}

// all_to_all's splits: what rank r sends to rank j must be what rank j expects from rank r. Each
// rank sends each other one count (fixed-size messages, always safe), then they agree on the
// outcome with an allreduce, so every rank raises or none does.
void ProcessGroupGloo::verify_counts(const std::vector<int64_t>& output_counts,
                                     const std::vector<int64_t>& input_counts, uint32_t tag) {
  if (!check_arguments_ || size_ == 1) return;
  std::vector<int64_t> sent(input_counts), expected(static_cast<size_t>(size_));
  gloo::AlltoallOptions exchange(context_);
  exchange.setInput(sent.data(), sent.size());
  exchange.setOutput(expected.data(), expected.size());
  exchange.setTag(tag);
  exchange.setTimeout(timeout_);
  gloo::alltoall(exchange);
  int64_t bad_from = -1;
  for (int r = 0; r < size_; ++r)
    if (expected[r] != output_counts[r]) bad_from = r;
  int64_t any_bad = bad_from >= 0 ? 1 : 0;
  gloo::AllreduceOptions agree(context_);
  agree.setOutput(&any_bad, 1);
  agree.setReduceFunction(reduction_for(ScalarType::Int64, ReduceOp::kMax));
  agree.setTag(tag + 2);
  agree.setTimeout(timeout_);
  gloo::allreduce(agree);
  if (any_bad == 0) return;
  if (bad_from >= 0)
    EMBER_THROW(distributed::DistBackendError, "[all_to_all] rank ", bad_from, " sends ",
                expected[bad_from], " elements to rank ", rank_,
                ", whose output_split_sizes expect ", output_counts[bad_from]);
  EMBER_THROW(distributed::DistBackendError,
              "[all_to_all] the split sizes of the ranks do not match (another rank found the "
              "mismatch)");
}

// -- ProcessGroupGloo ----------------------------------------------------------------------------
ProcessGroupGloo::ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size,
                                   Milliseconds timeout, const std::string& hostname,
                                   const std::string& interface)
    : rank_(rank),
      size_(size),
      timeout_(timeout),
      check_arguments_(checks_enabled()),
      store_(std::move(store)) {
  EMBER_CHECK_T(ValueError, size >= 1, "[init_process_group] world_size must be >= 1, got ", size);
  EMBER_CHECK_T(ValueError, rank >= 0 && rank < size, "[init_process_group] rank ", rank,
                " is not in [0, ", size, ")");
  gloo::transport::tcp::attr attr;
  if (!interface.empty()) {
    attr.iface = interface;
  } else {
    attr.hostname = hostname;
  }
  std::shared_ptr<gloo::transport::Device> device;
  try {
    device = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context->setTimeout(timeout);
    context->connectFullMesh(*store_, device);
    context_ = std::move(context);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    EMBER_THROW(distributed::DistNetworkError, "[init_process_group] rank ", rank, " of ", size,
                " could not connect to the other ranks: ", e.what());
  }
  worker_ = std::thread([this] { run_queue(); });
}

ProcessGroupGloo::~ProcessGroupGloo() {
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    stopping_ = true;
  }
  queue_changed_.notify_all();
  worker_.join();
}

namespace {
thread_local int inline_depth = 0;
}

ProcessGroupGloo::InlineScope::InlineScope() {
  ++inline_depth;
}
ProcessGroupGloo::InlineScope::~InlineScope() {
  --inline_depth;
}

void ProcessGroupGloo::run_queue() {
  while (true) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(queue_mutex_);
      queue_changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job();
  }
}

void ProcessGroupGloo::wait_turn(uint64_t sequence) {
  std::unique_lock<std::mutex> lock(queue_mutex_);
  turn_changed_.wait(lock, [&] { return turn_ == sequence; });
}

void ProcessGroupGloo::end_turn() {
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    ++turn_;
  }
  turn_changed_.notify_all();
}

// Note [Collectives in order]: every collective gets a sequence number and a tag when called,
// and runs when its turn comes, so each rank runs them in call order (Gloo matches messages by
// tag, and a rank running them out of order could wait for a peer that waits for it). An
// asynchronous call runs on the group's worker thread. A synchronous one (InlineScope, from the
// bindings) runs on the calling thread: handing it to the worker and back costs two thread
// wake-ups, which on a loaded machine take longer than a small all_reduce.
std::shared_ptr<Work> ProcessGroupGloo::enqueue(std::string description, Signature signature,
                                                std::function<void(uint32_t)> run) {
  auto work = std::make_shared<Work>();
  work->description = description;
  auto execute = [this, work, run, description, signature](uint32_t tag, uint64_t sequence) {
    wait_turn(sequence);
    try {
      try {
        verify(signature, tag);
        run(tag + 1);
      } catch (...) {
        rethrow_as_backend_error(description, rank_, size_);
      }
      work->finish();
    } catch (...) {
      work->finish(std::current_exception());
    }
    end_turn();
  };
  uint32_t tag = 0;
  uint64_t sequence = 0;
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    EMBER_CHECK(!stopping_, "[", description, "] the process group is destroyed");
    tag = next_tag_;
    next_tag_ += kTagsPerOperation;
    sequence = next_sequence_++;
    if (inline_depth == 0)
      queue_.emplace_back([execute, tag, sequence] { execute(tag, sequence); });
  }
  if (inline_depth > 0) {
    execute(tag, sequence);
  } else {
    queue_changed_.notify_one();
  }
  return work;
}

void ProcessGroupGloo::check_rank(int r, const char* op, const char* what) const {
  EMBER_CHECK_T(ValueError, r >= 0 && r < size_, "[", op, "] ", what, " ", r,
                " is not a rank of this group (size ", size_, ")");
}

std::shared_ptr<Work> ProcessGroupGloo::allreduce(const Tensor& tensor, ReduceOp op) {
  auto reduce = reduction_for(tensor.dtype(), op);
  return enqueue("all_reduce",
                 Signature{0, static_cast<int64_t>(tensor.dtype()), tensor.numel(), -1,
                           static_cast<int64_t>(op), 0},
                 [this, tensor, reduce](uint32_t tag) {
                   if (tensor.numel() == 0) return;
                   with_element(element_size(tensor.dtype()), [&](auto e) {
                     using E = decltype(e);
                     gloo::AllreduceOptions opts(context_);
                     opts.setOutput(elements<E>(tensor), static_cast<size_t>(tensor.numel()));
                     opts.setReduceFunction(reduce);
                     opts.setTag(tag);
                     opts.setTimeout(timeout_);
                     gloo::allreduce(opts);
                   });
                 });
}

std::shared_ptr<Work> ProcessGroupGloo::reduce(const Tensor& tensor, int root, ReduceOp op) {
  check_rank(root, "reduce", "dst");
  auto reduce = reduction_for(tensor.dtype(), op);
  return enqueue("reduce",
                 Signature{1, static_cast<int64_t>(tensor.dtype()), tensor.numel(), root,
                           static_cast<int64_t>(op), 0},
                 [this, tensor, root, reduce](uint32_t tag) {
                   if (tensor.numel() == 0) return;
                   with_element(element_size(tensor.dtype()), [&](auto e) {
                     using E = decltype(e);
                     gloo::ReduceOptions opts(context_);
                     opts.setOutput(elements<E>(tensor), static_cast<size_t>(tensor.numel()));
                     opts.setRoot(root);
                     opts.setReduceFunction(reduce);
                     opts.setTag(tag);
                     opts.setTimeout(timeout_);
                     gloo::reduce(opts);
                   });
                 });
}

std::shared_ptr<Work> ProcessGroupGloo::broadcast(const Tensor& tensor, int root) {
  check_rank(root, "broadcast", "src");
  return enqueue("broadcast",
                 Signature{2, static_cast<int64_t>(tensor.dtype()), tensor.numel(), root, -1, 0},
                 [this, tensor, root](uint32_t tag) {
                   if (tensor.numel() == 0) return;
                   with_element(element_size(tensor.dtype()), [&](auto e) {
                     using E = decltype(e);
                     gloo::BroadcastOptions opts(context_);
                     opts.setOutput(elements<E>(tensor), static_cast<size_t>(tensor.numel()));
                     opts.setRoot(root);
                     opts.setTag(tag);
                     opts.setTimeout(timeout_);
                     gloo::broadcast(opts);
                   });
                 });
}

std::shared_ptr<Work> ProcessGroupGloo::allgather(const Tensor& output, const Tensor& input) {
  EMBER_CHECK_T(ValueError, output.numel() == input.numel() * size_, "[all_gather] the output has ",
                output.numel(), " elements, expected ", size_, " x ", input.numel());
  return enqueue("all_gather",
                 Signature{3, static_cast<int64_t>(input.dtype()), input.numel(), -1, -1, 0},
                 [this, output, input](uint32_t tag) {
                   if (input.numel() == 0) return;
                   with_element(element_size(input.dtype()), [&](auto e) {
                     using E = decltype(e);
                     gloo::AllgatherOptions opts(context_);
                     opts.setInput(elements<E>(input), static_cast<size_t>(input.numel()));
                     opts.setOutput(elements<E>(output), static_cast<size_t>(output.numel()));
                     opts.setTag(tag);
                     opts.setTimeout(timeout_);
                     gloo::allgather(opts);
                   });
                 });
}

std::shared_ptr<Work> ProcessGroupGloo::gather(const Tensor& output, const Tensor& input,
                                               int root) {
  check_rank(root, "gather", "dst");
  if (rank_ == root)
    EMBER_CHECK_T(ValueError, output.numel() == input.numel() * size_, "[gather] the output has ",
                  output.numel(), " elements, expected ", size_, " x ", input.numel());
  return enqueue("gather",
                 Signature{4, static_cast<int64_t>(input.dtype()), input.numel(), root, -1, 0},
                 [this, output, input, root](uint32_t tag) {
                   if (input.numel() == 0) return;
                   with_element(element_size(input.dtype()), [&](auto e) {
                     using E = decltype(e);
                     gloo::GatherOptions opts(context_);
                     opts.setInput(elements<E>(input), static_cast<size_t>(input.numel()));
                     if (rank_ == root)
                       opts.setOutput(elements<E>(output), static_cast<size_t>(output.numel()));
                     opts.setRoot(root);
                     opts.setTag(tag);
                     opts.setTimeout(timeout_);
                     gloo::gather(opts);
                   });
                 });
}

std::shared_ptr<Work> ProcessGroupGloo::scatter(const Tensor& output, const Tensor& input,
                                                int root) {
  check_rank(root, "scatter", "src");
  if (rank_ == root)
    EMBER_CHECK_T(ValueError, input.numel() == output.numel() * size_, "[scatter] the input has ",
                  input.numel(), " elements, expected ", size_, " x ", output.numel());
  return enqueue("scatter",
                 Signature{5, static_cast<int64_t>(output.dtype()), output.numel(), root, -1, 0},
                 [this, output, input, root](uint32_t tag) {
                   if (output.numel() == 0) return;
                   with_element(element_size(output.dtype()), [&](auto e) {
                     using E = decltype(e);
                     gloo::ScatterOptions opts(context_);
                     const size_t n = static_cast<size_t>(output.numel());
                     if (rank_ == root) {
                       std::vector<E*> chunks;
                       for (int r = 0; r < size_; ++r) chunks.push_back(elements<E>(input, r * n));
                       opts.setInputs(chunks, n);
                     }
                     opts.setOutput(elements<E>(output), n);
                     opts.setRoot(root);
                     opts.setTag(tag);
                     opts.setTimeout(timeout_);
                     gloo::scatter(opts);
                   });
                 });
}

std::shared_ptr<Work> ProcessGroupGloo::alltoall(const Tensor& output, const Tensor& input,
                                                 const std::vector<int64_t>& output_counts,
                                                 const std::vector<int64_t>& input_counts) {
  EMBER_CHECK_T(ValueError,
                static_cast<int>(output_counts.size()) == size_ &&
                    static_cast<int>(input_counts.size()) == size_,
                "[all_to_all] needs one split per rank (", size_, ")");
  int64_t in_total = 0, out_total = 0;
  for (int r = 0; r < size_; ++r) {
    EMBER_CHECK_T(ValueError, input_counts[r] >= 0 && output_counts[r] >= 0,
                  "[all_to_all] split sizes must be >= 0");
    in_total += input_counts[r];
    out_total += output_counts[r];
  }
  EMBER_CHECK_T(ValueError, in_total == input.numel() && out_total == output.numel(),
                "[all_to_all] the splits add up to ", in_total, " and ", out_total,
                " elements, the tensors have ", input.numel(), " and ", output.numel());
  return enqueue("all_to_all", Signature{6, static_cast<int64_t>(input.dtype()), -1, -1, -1, 0},
                 [this, output, input, output_counts, input_counts](uint32_t tag) {
                   verify_counts(output_counts, input_counts, tag);
                   with_element(element_size(input.dtype()), [&](auto e) {
                     using E = decltype(e);
                     gloo::AlltoallvOptions opts(context_);
                     opts.setInput(elements<E>(input), input_counts);
                     opts.setOutput(elements<E>(output), output_counts);
                     opts.setTag(tag + 1);
                     opts.setTimeout(timeout_);
                     gloo::alltoallv(opts);
                   });
                 });
}

std::shared_ptr<Work> ProcessGroupGloo::declare_plan(
    const std::vector<std::vector<int64_t>>& calls) {
  std::vector<std::array<int64_t, kSignatureSize>> plan;
  uint64_t hash = 1469598103934665603ull;  // FNV-1a over the fields
  for (const auto& call : calls) {
    EMBER_CHECK_T(ValueError, call.size() == static_cast<size_t>(kSignatureSize),
                  "[declare_plan] each call needs ", kSignatureSize, " fields");
    std::array<int64_t, kSignatureSize> fields{};
    std::copy(call.begin(), call.end(), fields.begin());
    for (int64_t v : fields) hash = (hash ^ static_cast<uint64_t>(v)) * 1099511628211ull;
    plan.push_back(fields);
  }
  EMBER_CHECK_T(ValueError, !plan.empty(), "[declare_plan] the plan is empty");
  auto work = std::make_shared<Work>();
  work->description = "declare_plan";
  const Signature signature{kPlanOp, -1, static_cast<int64_t>(plan.size()),
                            -1,      -1, static_cast<int64_t>(hash >> 1)};
  uint32_t tag = 0;
  uint64_t sequence = 0;
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    EMBER_CHECK(!stopping_, "[declare_plan] the process group is destroyed");
    tag = next_tag_;
    next_tag_ += kTagsPerOperation;
    sequence = next_sequence_++;
    queue_.emplace_back([this, work, plan = std::move(plan), signature, tag, sequence] {
      wait_turn(sequence);
      try {
        // Already following this plan from its start: nothing to agree on. Every rank's state
        // is the same (Note [Checking collectives]), so every rank decides the same.
        if (!(plan_ == plan && plan_position_ == 0)) {
          try {
            verify(signature, tag);
          } catch (...) {
            rethrow_as_backend_error("declare_plan", rank_, size_);
          }
          plan_ = plan;
          plan_position_ = 0;
        }
        work->finish();
      } catch (...) {
        work->finish(std::current_exception());
      }
      end_turn();
    });
  }
  queue_changed_.notify_one();
  return work;
}

std::shared_ptr<Work> ProcessGroupGloo::barrier() {
  return enqueue("barrier", Signature{7, -1, -1, -1, -1, 0}, [this](uint32_t tag) {
    gloo::BarrierOptions opts(context_);
    opts.setTag(tag);
    opts.setTimeout(timeout_);
    gloo::barrier(opts);
  });
}

// Note [Point-to-point sizes]: a message longer than the receive posted for it aborts the
// process inside Gloo, so each send first sends its length (8 bytes, in a slot of its own), and
// the receiver posts the data receive only once that length matches its tensor. On a mismatch it
// drains the message into scratch memory (so the sender completes) and raises an error naming
// both sizes. Gloo delivers a message only once its receive is posted, so the receiving side runs
// on a thread of its own per receive: receives posted by irecv make progress while the caller
// does other things, as they would if posted at once.
std::shared_ptr<Work> ProcessGroupGloo::send(const Tensor& tensor, int destination, uint32_t tag) {
  check_rank(destination, "send", "dst");
  EMBER_CHECK_T(ValueError, destination != rank_, "[send] a rank cannot send to itself (rank ",
                rank_, ")");
  auto work = std::make_shared<Work>();
  work->description = "send";
  const size_t bytes = static_cast<size_t>(tensor.numel()) * element_size(tensor.dtype());
  auto length = std::make_shared<int64_t>(static_cast<int64_t>(bytes));
  std::shared_ptr<gloo::transport::UnboundBuffer> header, data;
  try {
    header = context_->createUnboundBuffer(length.get(), sizeof(int64_t));
    header->send(destination, point_to_point_slot(kLengthSlotPrefix, tag));
    if (bytes > 0) {
      data = context_->createUnboundBuffer(tensor.data_ptr(), bytes);
      data->send(destination, point_to_point_slot(kDataSlotPrefix, tag));
    }
  } catch (...) {
    rethrow_as_backend_error("send", rank_, size_);
  }
  const int rank = rank_, size = size_;
  work->set_waiter([rank, size, header, data, length, tensor](Milliseconds timeout) {
    try {
      if (!header->waitSend(timeout) || (data && !data->waitSend(timeout)))
        EMBER_THROW(distributed::DistBackendError, "[send] aborted");
    } catch (...) {
      rethrow_as_backend_error("send", rank, size);
    }
    return rank;
  });
  return work;
}

std::shared_ptr<Work> ProcessGroupGloo::recv(const Tensor& tensor, int source, uint32_t tag) {
  if (source >= 0) {
    check_rank(source, "recv", "src");
    EMBER_CHECK_T(ValueError, source != rank_, "[recv] a rank cannot receive from itself (rank ",
                  rank_, ")");
  }
  auto work = std::make_shared<Work>();
  work->description = "recv";
  const size_t bytes = static_cast<size_t>(tensor.numel()) * element_size(tensor.dtype());
  auto length = std::make_shared<int64_t>(-1);
  std::shared_ptr<gloo::transport::UnboundBuffer> header;
  try {
    header = context_->createUnboundBuffer(length.get(), sizeof(int64_t));
    if (source >= 0) {
      header->recv(source, point_to_point_slot(kLengthSlotPrefix, tag));
    } else {
      std::vector<int> sources;
      for (int r = 0; r < size_; ++r)
        if (r != rank_) sources.push_back(r);
      header->recv(sources, point_to_point_slot(kLengthSlotPrefix, tag));
    }
  } catch (...) {
    rethrow_as_backend_error("recv", rank_, size_);
  }
  std::shared_ptr<gloo::Context> context = context_;
  const int rank = rank_, size = size_;
  const Milliseconds timeout = timeout_;
  std::thread([work, context, header, length, tensor, bytes, tag, rank, size, timeout] {
    try {
      int from = -1;
      try {
        if (!header->waitRecv(&from, timeout))
          EMBER_THROW(distributed::DistBackendError, "[recv] aborted");
        const uint64_t slot = point_to_point_slot(kDataSlotPrefix, tag);
        if (*length != static_cast<int64_t>(bytes)) {
          const int64_t sent = *length;
          if (sent > 0) {
            std::vector<char> scratch(static_cast<size_t>(sent));
            auto drain = context->createUnboundBuffer(scratch.data(), scratch.size());
            drain->recv(from, slot);
            drain->waitRecv(timeout);
          }
          EMBER_THROW(distributed::DistBackendError, "[recv] rank ", from, " sent ", sent,
                      " bytes, but this rank receives into a tensor of ", bytes, " bytes (",
                      tensor.numel(), " x ", dtype_name(tensor.dtype()), ")");
        }
        if (bytes > 0) {
          auto data = context->createUnboundBuffer(tensor.data_ptr(), bytes);
          data->recv(from, slot);
          if (!data->waitRecv(timeout))
            EMBER_THROW(distributed::DistBackendError, "[recv] aborted");
        }
      } catch (...) {
        rethrow_as_backend_error("recv", rank, size);
      }
      work->set_source_rank(from);
      work->finish();
    } catch (...) {
      work->finish(std::current_exception());
    }
  }).detach();
  return work;
}

}  // namespace ember::distributed
