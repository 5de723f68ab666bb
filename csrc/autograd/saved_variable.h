// SavedVariable: a tensor a backward formula needs, with the version it had when saved, so that
// an in-place change made after the forward is caught instead of giving a wrong gradient.
#pragma once
#include <memory>
#include <string>

#include "autograd/node.h"
#include "core/tensor.h"

namespace ember {
namespace autograd {

class SavedVariable {
 public:
  SavedVariable() = default;
  // is_output: `t` is an output of the node that saves it. It is then stored without its
  // grad_fn (which would be the saving node: a reference cycle) and re-attached on unpack.
  SavedVariable(const Tensor& t, bool is_output);

  // The saved tensor; `saved_for` is the node that saved it (needed for outputs). Raises if the
  // tensor was modified in place since, or if the graph was freed.
  Tensor unpack(const std::shared_ptr<Node>& saved_for) const;
  void reset_data();
  bool defined() const { return was_defined_; }

 private:
  Tensor data_;
  uint32_t saved_version_ = 0;
  uint32_t output_nr_ = 0;
  bool is_output_ = false;
  bool was_defined_ = false;
  bool released_ = false;
};

}  // namespace autograd
}  // namespace ember
