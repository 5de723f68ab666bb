#include "autograd/saved_variable.h"

#include <sstream>

#include "autograd/variable.h"
#include "core/error.h"
#include "core/factory.h"

namespace ember {
namespace autograd {

namespace {

// The tensor's type as PyTorch prints it in this error: [torch.FloatTensor [2, 3]].
std::string describe(const Tensor& t) {
  std::ostringstream os;
  os << "[ember." << dtype_name(t.dtype()) << " tensor [";
  for (int64_t d = 0; d < t.dim(); ++d) os << (d ? ", " : "") << t.size(d);
  os << "]]";
  return os.str();
}

}  // namespace

SavedVariable::SavedVariable(const Tensor& t, bool is_output) {
  if (!t.defined()) return;
  EMBER_CHECK(!t.impl()->is_inference(),
              "Inference tensors cannot be saved for backward. To work around you can make a "
              "clone to get a normal tensor and use it in autograd.");
  was_defined_ = true;
  is_output_ = is_output;
  saved_version_ = t.impl()->version();
  if (is_output) {
    output_nr_ = output_nr(t);
    data_ = detach(t);
    forward_ad::share_tangents(t, data_);  // forward-over-reverse reads the saved tangents
  } else {
    data_ = t;
  }
}

void SavedVariable::reset_data() {
  data_ = Tensor();
  released_ = true;
}

Tensor SavedVariable::unpack(const std::shared_ptr<Node>& saved_for) const {
  if (!was_defined_) return Tensor();
  EMBER_CHECK(!released_,
              "Trying to backward through the graph a second time (or directly access saved "
              "tensors after they have already been freed). Saved intermediate values of the "
              "graph are freed when you call .backward() or autograd.grad(). Specify "
              "retain_graph=True if you need to backward through the graph a second time or if "
              "you need to access saved tensors after calling backward.");
  const uint32_t current = data_.impl()->version();
  if (current != saved_version_) {
    std::ostringstream os;
    os << "one of the variables needed for gradient computation has been modified by an "
          "inplace operation: "
       << describe(data_);
    if (is_output_ && saved_for) {
      os << ", which is output " << output_nr_ << " of " << saved_for->name() << ",";
    } else if (saved_for) {
      os << ", which is an input saved by " << saved_for->name() << ",";
    }
    os << " is at version " << current << "; expected version " << saved_version_
       << " instead. Hint: the operation that modified it in place can be made out of place, "
          "or the tensor can be saved with .clone() before it is modified.";
    throw Error(os.str());
  }
  if (!is_output_) return data_;
  // Re-attach the history: a fresh alias whose grad_fn is the saving node.
  Tensor t = detach(data_);
  forward_ad::share_tangents(data_, t);
  if (saved_for) {
    AutogradMeta& m = materialize_meta(t);
    m.grad_fn = saved_for;
    m.output_nr = output_nr_;
  }
  return t;
}

}  // namespace autograd
}  // namespace ember
