// The backward engine: runs the graph from the roots to the leaves in dependency order
// (docs/design/architecture.md, "Autograd engine"; docs/design/autograd.md).
#pragma once
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <queue>
#include <unordered_map>
#include <vector>

#include "autograd/input_buffer.h"
#include "autograd/node.h"

namespace ember {
namespace autograd {

struct GraphTask;

struct NodeTask {
  std::weak_ptr<GraphTask> graph_task;
  std::shared_ptr<Node> fn;
  InputBuffer inputs;
  bool shutdown = false;  // tells a device worker thread to exit
};

// Tasks ordered by sequence number: the node created last runs first (a node's consumers were
// all created after it, so they have run by then when they are ready).
class ReadyQueue {
 public:
  void push(NodeTask task);
  NodeTask pop();  // blocks until a task is there
  bool empty() const;

 private:
  struct Later {
    bool operator()(const NodeTask& a, const NodeTask& b) const;
  };
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::priority_queue<NodeTask, std::vector<NodeTask>, Later> heap_;
};

// Which nodes a graph task runs when only some inputs are requested (autograd.grad, or
// backward(inputs=...)): `needed` on a path to a requested input; `captures` for autograd.grad.
struct ExecInfo {
  struct Capture {
    uint32_t input_nr;  // which input of the node carries the requested gradient
    size_t output_idx;  // where it goes in the result
  };
  bool needed = false;
  std::vector<Capture> captures;
  bool should_execute() const { return needed || !captures.empty(); }
};

struct GraphTask {
  GraphTask(bool keep_graph, bool create_graph, int reentrant_depth);

  bool keep_graph;
  bool create_graph;
  int reentrant_depth;
  std::mutex mutex;
  std::unordered_map<Node*, int> dependencies;
  std::unordered_map<Node*, InputBuffer> not_ready;
  std::unordered_map<Node*, ExecInfo> exec_info;  // empty: run every node
  variable_list captured;
  std::atomic<int> outstanding{0};
  std::exception_ptr error;
  bool completed = false;
  std::condition_variable done_cv;
  std::shared_ptr<ReadyQueue> cpu_queue;  // the queue the calling thread drains
};

class Engine {
 public:
  static Engine& get();

  // roots: the tensors' gradient edges; grads: one per root. outputs: gradient edges of the
  // requested inputs (empty: accumulate into every leaf). accumulate_grad: backward() (true)
  // or autograd.grad (false: the gradients at `outputs` are returned).
  variable_list execute(const edge_list& roots, const variable_list& grads, bool keep_graph,
                        bool create_graph, bool accumulate_grad, const edge_list& outputs);

  // Reentrant calls deeper than this on one thread continue on a pool thread.
  static constexpr int kMaxReentrantDepth = 60;

 private:
  Engine() = default;
  void run_graph_task(const std::shared_ptr<GraphTask>& task);
  void thread_main(const std::shared_ptr<GraphTask>& task);
  void evaluate(const std::shared_ptr<GraphTask>& task, NodeTask& nt);
  void run_on_pool_thread(const std::shared_ptr<GraphTask>& task);
};

// Checks and fixes the gradients a node produced against the metadata of the inputs they go to
// (shape: sums broadcast gradients down; dtype: casts; complex to real: takes the real part).
void validate_outputs(const edge_list& edges, variable_list& grads, const std::string& node_name);

}  // namespace autograd
}  // namespace ember
