// The autograd engine: dependency counting, accumulation from shared inputs, pruning with
// `inputs`, retain_graph, reentrant backward past the depth limit, exceptions, concurrency and
// freeing of saved tensors.
#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "api/creation.h"
#include "api/elementwise.h"
#include "api/reduce.h"
#include "api/unary.h"
#include "api/views.h"
#include "autograd/engine.h"
#include "autograd/functions.h"
#include "autograd/grad_mode.h"
#include "autograd/record.h"
#include "autograd/variable.h"
#include "core/allocator.h"

using namespace ember;
namespace ag = ember::autograd;

namespace {

Tensor leaf(std::initializer_list<double> values) {
  Tensor t = empty({static_cast<int64_t>(values.size())}, TensorOptions(ScalarType::Float64));
  double* p = t.data<double>();
  for (double v : values) *p++ = v;
  ag::set_requires_grad(t, true);
  return t;
}

Tensor ones_like_scalar(const Tensor& t) {
  return full(t.sizes(), Scalar(1.0), TensorOptions(t.dtype()));
}

double at(const Tensor& t, int64_t i) {
  Tensor c = contiguous(to_dtype(t, ScalarType::Float64));
  return c.data<double>()[i];
}

void backward(const Tensor& root, bool keep_graph = false) {
  ag::Engine::get().execute({ag::gradient_edge(root)}, {ones_like_scalar(root)}, keep_graph, false,
                            true, {});
}

// A node that counts its executions and passes the gradient through.
class Counting : public ag::Node {
 public:
  explicit Counting(std::atomic<int>* counter) : counter_(counter) {}
  ag::variable_list apply(ag::variable_list&& g) override {
    ++*counter_;
    return {g[0]};
  }
  std::string name() const override { return "Counting"; }

 private:
  std::atomic<int>* counter_;
};

// y = counting(x): a pass-through recorded op whose node counts executions.
Tensor counted(const Tensor& x, std::atomic<int>* counter) {
  auto node = std::make_shared<Counting>(counter);
  node->set_next_edges({ag::gradient_edge(x)});
  Tensor y = ag::detach(x);
  ag::set_history(y, node);
  return y;
}

}  // namespace

TEST_CASE("shared inputs accumulate and dependencies are counted", "[autograd]") {
  Tensor x = leaf({1.0, 2.0});
  std::atomic<int> runs{0};
  Tensor c = counted(x, &runs);
  // c feeds three consumers: the Counting node must run once, after all three delivered.
  Tensor y = sum(add(add(mul(c, c), c), exp(c)));
  backward(y);
  CHECK(runs == 1);
  CHECK(at(ag::grad(x), 0) == Approx(2 * 1.0 + 1 + std::exp(1.0)));
  CHECK(at(ag::grad(x), 1) == Approx(2 * 2.0 + 1 + std::exp(2.0)));
}

TEST_CASE("inputs= prunes nodes that do not lead to the requested inputs", "[autograd]") {
  Tensor a = leaf({1.0});
  Tensor b = leaf({2.0});
  std::atomic<int> on_a{0}, on_b{0};
  Tensor y = sum(add(mul(counted(a, &on_a), wrap_scalar(3.0)), counted(b, &on_b)));
  auto grads = ag::Engine::get().execute({ag::gradient_edge(y)}, {ones_like_scalar(y)}, false,
                                         false, false, {ag::gradient_edge(a)});
  REQUIRE(grads.size() == 1);
  CHECK(at(grads[0], 0) == Approx(3.0));
  CHECK(on_a == 1);
  CHECK(on_b == 0);                    // off the path to a: never executed
  CHECK_FALSE(ag::grad(a).defined());  // autograd.grad does not accumulate
}

TEST_CASE("retain_graph keeps saved tensors and a second backward without it raises",
          "[autograd]") {
  Tensor x = leaf({0.5});
  Tensor y = sum(exp(x));
  backward(y, /*keep_graph=*/true);
  backward(y, /*keep_graph=*/false);
  CHECK(at(ag::grad(x), 0) == Approx(2 * std::exp(0.5)));
  CHECK_THROWS_WITH(backward(y), Catch::Contains("backward through the graph a second time"));
}

TEST_CASE("an exception in a node reaches the caller and the engine stays usable", "[autograd]") {
  class Throwing : public ag::Node {
   public:
    ag::variable_list apply(ag::variable_list&&) override { throw Error("boom"); }
  };
  Tensor x = leaf({1.0});
  auto node = std::make_shared<Throwing>();
  node->set_next_edges({ag::gradient_edge(x)});
  Tensor y = ag::detach(x);
  ag::set_history(y, node);
  CHECK_THROWS_WITH(backward(sum(y)), Catch::Contains("boom"));
  backward(sum(mul(x, wrap_scalar(2.0))));
  CHECK(at(ag::grad(x), 0) == Approx(2.0));
}

namespace {

// Backward of this node runs a whole backward pass of its own, `depth` levels deep.
class Reentrant : public ag::Node {
 public:
  explicit Reentrant(int depth) : depth_(depth) {}
  ag::variable_list apply(ag::variable_list&& g) override {
    if (depth_ > 0) {
      ag::AutoGradMode enable(true);
      Tensor inner = leaf({1.0});
      auto node = std::make_shared<Reentrant>(depth_ - 1);
      node->set_next_edges({ag::gradient_edge(inner)});
      Tensor y = ag::detach(inner);
      ag::set_history(y, node);
      backward(sum(y));
      if (at(ag::grad(inner), 0) != 1.0) throw Error("wrong inner gradient");
    }
    return {g[0]};
  }

 private:
  int depth_;
};

}  // namespace

TEST_CASE("reentrant backward works past the per-thread depth limit", "[autograd]") {
  const int depth = ag::Engine::kMaxReentrantDepth + 40;
  Tensor x = leaf({1.0});
  auto node = std::make_shared<Reentrant>(depth);
  node->set_next_edges({ag::gradient_edge(x)});
  Tensor y = ag::detach(x);
  ag::set_history(y, node);
  backward(sum(y));
  CHECK(at(ag::grad(x), 0) == Approx(1.0));
}

TEST_CASE("concurrent backward calls on independent graphs", "[autograd]") {
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &failures] {
      for (int i = 0; i < 200; ++i) {
        Tensor x = leaf({static_cast<double>(t + 1)});
        backward(sum(mul(x, x)));
        if (at(ag::grad(x), 0) != 2.0 * (t + 1)) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures == 0);
}

TEST_CASE("saved tensors are freed after backward and deep graphs free iteratively", "[autograd]") {
  const int64_t before = cpu_allocator_stats().current_bytes;
  {
    Tensor x = leaf({1.0});
    ag::set_requires_grad(x, true);
    Tensor big = zeros({1 << 16}, TensorOptions(ScalarType::Float64));  // 512 KiB
    Tensor y = sum(mul(add(big, x), exp(add(big, x))));                 // saves big-sized tensors
    const int64_t with_graph = cpu_allocator_stats().current_bytes;
    CHECK(with_graph - before >= 3 * (int64_t(1) << 19));
    backward(y);
    big = Tensor();
    // Only x, its grad, y and small scalars remain: the saved 512 KiB tensors were released.
    CHECK(cpu_allocator_stats().current_bytes - before < (int64_t(1) << 16));
  }
  {
    Tensor x = leaf({1.0});
    Tensor y = x;
    for (int i = 0; i < 100000; ++i) y = mul(y, wrap_scalar(1.0));
    backward(sum(y));
    CHECK(at(ag::grad(x), 0) == Approx(1.0));
  }  // dropping a 100 000-node graph must not overflow the stack
  CHECK(cpu_allocator_stats().current_bytes == before);
}
