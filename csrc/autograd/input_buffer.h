// InputBuffer: the gradients arriving at one node's inputs, summed when several edges lead to
// the same input.
#pragma once
#include <vector>

#include "core/tensor.h"

namespace ember {
namespace autograd {

class InputBuffer {
 public:
  InputBuffer() = default;
  explicit InputBuffer(size_t size) : buffer_(size) {}
  void add(size_t pos, Tensor grad);
  std::vector<Tensor> release() { return std::move(buffer_); }
  size_t size() const { return buffer_.size(); }

 private:
  std::vector<Tensor> buffer_;
};

}  // namespace autograd
}  // namespace ember
