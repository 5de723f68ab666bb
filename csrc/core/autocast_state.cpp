#include "core/autocast_state.h"

#include <unordered_map>

namespace ember {
namespace autocast_state {

Flags& flags() {
  thread_local Flags f;  // trivially destructible: no guard, no destructor at thread exit
  return f;
}

namespace {

struct Entry {
  Tensor source;  // keeps the key's TensorImpl alive
  Tensor cast;
};
using Cache = std::unordered_map<const TensorImpl*, Entry>;

// The cache lives on the heap behind a trivially destructible thread-local pointer, made on the
// first cached cast and deleted by clear_cache(). A thread_local map would be destroyed at
// thread exit in an order relative to the engine's own thread-locals (the node release list of
// autograd/node.cpp) that nothing fixes, and destroying a cast releases its autograd node. A
// thread that ends inside an autocast region leaves its entries behind instead.
Cache*& cache() {
  thread_local Cache* c = nullptr;
  return c;
}

}  // namespace

Tensor cached_cast(const TensorImpl* src) {
  const Cache* c = cache();
  if (c == nullptr) return Tensor();
  auto it = c->find(src);
  return it == c->end() ? Tensor() : it->second.cast;
}

void cache_cast(const Tensor& src, const Tensor& cast) {
  Cache*& c = cache();
  if (c == nullptr) c = new Cache();
  (*c)[src.impl()] = Entry{src, cast};
}

void clear_cache() {
  Cache*& c = cache();
  Cache* old = c;
  c = nullptr;  // detached first: releasing the tensors below never sees a half-cleared cache
  delete old;
}

size_t cache_size() {
  const Cache* c = cache();
  return c == nullptr ? 0 : c->size();
}

}  // namespace autocast_state
}  // namespace ember
