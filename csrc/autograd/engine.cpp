#include "autograd/engine.h"

#include <deque>
#include <functional>
#include <optional>
#include <sstream>
#include <thread>
#include <unordered_set>

#include "api/complex.h"
#include "api/reduce.h"
#include "api/unary.h"
#include "api/views.h"
#include "autograd/anomaly.h"
#include "autograd/functions.h"
#include "autograd/grad_mode.h"
#include "core/error.h"
#include "core/profiler.h"

namespace ember {
namespace autograd {

// ---- ReadyQueue -----------------------------------------------------------------------------

bool ReadyQueue::Later::operator()(const NodeTask& a, const NodeTask& b) const {
  // Shutdown and wake-up tasks (no fn) first; then the larger sequence number.
  if (!a.fn || !b.fn) return a.fn != nullptr;
  return a.fn->sequence_nr() < b.fn->sequence_nr();
}

void ReadyQueue::push(NodeTask task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    heap_.push(std::move(task));
  }
  cv_.notify_one();
}

NodeTask ReadyQueue::pop() {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [this] { return !heap_.empty(); });
  NodeTask t = std::move(const_cast<NodeTask&>(heap_.top()));
  heap_.pop();
  return t;
}

bool ReadyQueue::empty() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return heap_.empty();
}

GraphTask::GraphTask(bool keep, bool create, int depth)
    : keep_graph(keep),
      create_graph(create),
      reentrant_depth(depth),
      cpu_queue(std::make_shared<ReadyQueue>()) {}

// ---- helpers --------------------------------------------------------------------------------

namespace {

std::string shape_str(IntArrayRef s) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << "]";
  return os.str();
}

// Reentrant backward depth of this thread (backward called inside a backward function).
thread_local int tls_depth = 0;

// Threads for reentrant backward calls nested too deep to continue on the caller's stack. They
// live for the process (the pool is never destroyed, so exit never waits on them).
class ReentrantPool {
 public:
  static ReentrantPool& get() {
    static auto* pool = new ReentrantPool();
    return *pool;
  }
  void submit(std::function<void()> job) {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(std::move(job));
    if (idle_ == 0) {
      std::thread([this] { worker(); }).detach();
    } else {
      cv_.notify_one();
    }
  }

 private:
  void worker() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ++idle_;
        cv_.wait(lock, [this] { return !jobs_.empty(); });
        --idle_;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  int idle_ = 0;
};

// One worker thread per accelerator device, started on first use (Note [Device Threads]).
class DeviceThreads {
 public:
  static DeviceThreads& get() {
    static auto* d = new DeviceThreads();
    return *d;
  }
  std::shared_ptr<ReadyQueue> queue(Device device, const std::function<void(NodeTask&)>& run) {
    std::lock_guard<std::mutex> lock(mutex_);
    const int key = static_cast<int>(device.type) * 1024 + device.index;
    auto it = queues_.find(key);
    if (it != queues_.end()) return it->second;
    auto q = std::make_shared<ReadyQueue>();
    queues_[key] = q;
    std::thread([q, run] {
      for (;;) {
        NodeTask t = q->pop();
        if (t.shutdown) return;
        run(t);
      }
    }).detach();
    return q;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<int, std::shared_ptr<ReadyQueue>> queues_;
};

Device node_device(const Node& fn) {
  for (size_t i = 0; i < fn.num_inputs(); ++i) {
    if (fn.input_metadata(i).defined) return fn.input_metadata(i).device;
  }
  return Device();
}

void compute_dependencies(Node* root, GraphTask& task, uint64_t min_topo) {
  std::vector<Node*> stack{root};
  std::unordered_set<Node*> seen{root};
  while (!stack.empty()) {
    Node* fn = stack.back();
    stack.pop_back();
    for (const Edge& e : fn->next_edges()) {
      Node* next = e.function.get();
      if (!next || next->topological_nr() < min_topo) continue;
      ++task.dependencies[next];
      if (seen.insert(next).second) stack.push_back(next);
    }
  }
}

// Marks the nodes on a path from the root to a requested input (iterative DFS: graphs can be
// 100 000 nodes deep).
void init_to_execute(Node* root, GraphTask& task, const edge_list& outputs, bool accumulate_grad,
                     uint64_t min_topo) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    Node* fn = outputs[i].function.get();
    if (!fn) continue;
    ExecInfo& info = task.exec_info[fn];
    if (accumulate_grad) {
      info.needed = true;
    } else {
      info.captures.push_back({outputs[i].input_nr, i});
    }
  }
  auto should_execute = [&](Node* fn) {
    auto it = task.exec_info.find(fn);
    return it != task.exec_info.end() && it->second.should_execute();
  };
  struct Frame {
    Node* fn;
    size_t next = 0;
  };
  std::vector<Frame> stack{{root}};
  std::unordered_set<Node*> seen{root};
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.next < f.fn->num_outputs()) {
      Node* child = f.fn->next_edge(f.next++).function.get();
      if (!child || child->topological_nr() < min_topo) continue;
      if (!seen.insert(child).second) {
        if (should_execute(child)) task.exec_info[f.fn].needed = true;
        continue;
      }
      stack.push_back({child});
      continue;
    }
    Node* done = f.fn;
    stack.pop_back();
    if (!stack.empty() && should_execute(done)) task.exec_info[stack.back().fn].needed = true;
  }
}

void check_anomaly(const Node& fn, const variable_list& outputs) {
  if (!AnomalyMode::should_check_nan()) return;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& g = outputs[i];
    if (!g.defined() || !(is_floating(g.dtype()) || ember::is_complex(g.dtype()))) continue;
    NoGradGuard no_grad;
    const Tensor bad = any(isnan(g));
    if (*static_cast<const bool*>(bad.data_ptr())) {
      std::ostringstream os;
      os << "Function '" << fn.name() << "' returned nan values in its " << i << "th output.";
      if (!fn.forward_trace().empty()) {
        os << "\nTraceback of forward call that caused the error:\n" << fn.forward_trace();
      }
      throw Error(os.str());
    }
  }
}

}  // namespace

void validate_outputs(const edge_list& edges, variable_list& grads, const std::string& name) {
  EMBER_CHECK(grads.size() == edges.size(), "Function ", name,
              " returned an incorrect number of gradients (expected ", edges.size(), ", got ",
              grads.size(), ")");
  for (size_t i = 0; i < grads.size(); ++i) {
    const Edge& e = edges[i];
    if (!e.is_valid() || !grads[i].defined()) continue;
    const InputMetadata& md = e.function->input_metadata(e.input_nr);
    if (!md.defined) continue;
    Tensor& g = grads[i];
    if (!g.sizes().equals(md.shape)) {
      EMBER_CHECK(is_expandable_to(md.shape, g.sizes()), "Function ", name,
                  " returned an invalid gradient at index ", i, " - got ", shape_str(g.sizes()),
                  " but expected shape compatible with ", shape_str(md.shape));
      g = sum_to(g, md.shape);
    }
    if (g.dtype() != md.dtype) {
      if (!ember::is_complex(md.dtype) && g.is_complex()) g = real(g);
      g = to_dtype(g, md.dtype);
    }
    EMBER_CHECK(g.device() == md.device, "Function ", name,
                " returned an invalid gradient at index ", i, " - expected device ",
                md.device.str(), " but got ", g.device().str());
  }
}

// ---- Engine ---------------------------------------------------------------------------------

Engine& Engine::get() {
  static Engine engine;
  return engine;
}

void Engine::evaluate(const std::shared_ptr<GraphTask>& task, NodeTask& nt) {
  Node* fn = nt.fn.get();
  variable_list inputs = nt.inputs.release();
  if (!task->exec_info.empty()) {
    auto it = task->exec_info.find(fn);
    if (it != task->exec_info.end() && !it->second.captures.empty()) {
      variable_list hooked = inputs;
      fn->run_tensor_pre_hooks(hooked);
      std::lock_guard<std::mutex> lock(task->mutex);
      for (const auto& c : it->second.captures) task->captured[c.output_idx] = hooked[c.input_nr];
    }
    if (it == task->exec_info.end() || !it->second.needed) return;
  }
  fn->run_tensor_pre_hooks(inputs);
  for (const auto& [id, hook] : fn->pre_hooks().hooks) {
    std::optional<variable_list> r = hook(inputs);
    if (r) inputs = std::move(*r);
  }
  variable_list grad_outputs_copy;
  if (!fn->post_hooks().empty()) grad_outputs_copy = inputs;
  variable_list outputs;
  {
    // PyTorch's event name for a node, so that profiles read the same; nothing is built
    // while no profile runs.
    std::optional<profiler::Range> range;
    if (profiler::enabled()) {
      range.emplace("autograd::engine::evaluate_function: " + fn->name(),
                    profiler::EventKind::kBackward);
    }
    AutoGradMode mode(task->create_graph);
    outputs = fn->apply(std::move(inputs));
  }
  validate_outputs(fn->next_edges(), outputs, fn->name());
  for (const auto& [id, hook] : fn->post_hooks().hooks) {
    std::optional<variable_list> r = hook(outputs, grad_outputs_copy);
    if (r) outputs = std::move(*r);
  }
  if (!task->keep_graph) fn->release_variables();
  if (AnomalyMode::is_enabled()) check_anomaly(*fn, outputs);

  for (size_t i = 0; i < outputs.size(); ++i) {
    const Edge& e = fn->next_edge(i);
    if (!e.is_valid()) continue;
    Node* next = e.function.get();
    if (!task->exec_info.empty()) {
      auto it = task->exec_info.find(next);
      if (it == task->exec_info.end() || !it->second.should_execute()) continue;
    }
    NodeTask ready;
    {
      std::lock_guard<std::mutex> lock(task->mutex);
      auto dep = task->dependencies.find(next);
      EMBER_CHECK(dep != task->dependencies.end(), "[autograd] dependency not found for ",
                  next->name());
      const bool is_ready = --dep->second == 0;
      auto buf = task->not_ready.find(next);
      if (buf == task->not_ready.end()) {
        buf = task->not_ready.emplace(next, InputBuffer(next->num_inputs())).first;
      }
      buf->second.add(e.input_nr, std::move(outputs[i]));
      if (!is_ready) continue;
      ready = NodeTask{task, e.function, std::move(buf->second)};
      task->not_ready.erase(buf);
    }
    ++task->outstanding;
    const Device dev = node_device(*next);
    if (dev.type == DeviceType::CPU) {
      task->cpu_queue->push(std::move(ready));
    } else {
      DeviceThreads::get()
          .queue(dev,
                 [this](NodeTask& t) {
                   auto gt = t.graph_task.lock();
                   if (!gt) return;
                   if (!gt->error) {
                     try {
                       evaluate(gt, t);
                     } catch (...) {
                       std::lock_guard<std::mutex> lock(gt->mutex);
                       if (!gt->error) gt->error = std::current_exception();
                     }
                   }
                   --gt->outstanding;
                   gt->cpu_queue->push(NodeTask{gt, nullptr, InputBuffer()});  // wake the owner
                 })
          ->push(std::move(ready));
    }
  }
}

void Engine::thread_main(const std::shared_ptr<GraphTask>& task) {
  for (;;) {
    if (task->error || task->outstanding.load() == 0) break;
    NodeTask nt = task->cpu_queue->pop();
    if (!nt.fn) continue;  // a device thread finished a task: re-check completion
    if (!task->error) {
      try {
        evaluate(task, nt);
      } catch (...) {
        std::lock_guard<std::mutex> lock(task->mutex);
        if (!task->error) task->error = std::current_exception();
      }
    }
    --task->outstanding;
  }
  {
    std::lock_guard<std::mutex> lock(task->mutex);
    task->completed = true;
  }
  task->done_cv.notify_all();
}

void Engine::run_on_pool_thread(const std::shared_ptr<GraphTask>& task) {
  ReentrantPool::get().submit([this, task] {
    const int saved = tls_depth;
    tls_depth = 0;
    thread_main(task);
    tls_depth = saved;
  });
  std::unique_lock<std::mutex> lock(task->mutex);
  task->done_cv.wait(lock, [&] { return task->completed; });
}

variable_list Engine::execute(const edge_list& roots, const variable_list& grads, bool keep_graph,
                              bool create_graph, bool accumulate_grad, const edge_list& outputs) {
  EMBER_CHECK(roots.size() == grads.size(), "[backward] got ", roots.size(), " roots but ",
              grads.size(), " gradients");
  bool any_root = false;
  for (const Edge& e : roots) any_root = any_root || e.is_valid();
  EMBER_CHECK(any_root, "element 0 of tensors does not require grad and does not have a grad_fn");
  variable_list root_grads = grads;
  validate_outputs(roots, root_grads, "backward");
  auto root = std::make_shared<GraphRoot>(roots, root_grads);

  auto task = std::make_shared<GraphTask>(keep_graph, create_graph, tls_depth + 1);
  uint64_t min_topo = 0;
  if (!outputs.empty()) {
    min_topo = UINT64_MAX;
    for (const Edge& e : outputs) {
      if (e.function) min_topo = std::min(min_topo, e.function->topological_nr());
    }
  }
  compute_dependencies(root.get(), *task, min_topo);
  if (!outputs.empty()) {
    init_to_execute(root.get(), *task, outputs, accumulate_grad, min_topo);
    if (!accumulate_grad) task->captured.resize(outputs.size());
  }
  task->outstanding = 1;
  task->cpu_queue->push(NodeTask{task, root, InputBuffer(0)});
  if (tls_depth >= kMaxReentrantDepth) {
    run_on_pool_thread(task);
  } else {
    ++tls_depth;
    thread_main(task);
    --tls_depth;
  }
  if (task->error) std::rethrow_exception(task->error);
  return std::move(task->captured);
}

}  // namespace autograd
}  // namespace ember
