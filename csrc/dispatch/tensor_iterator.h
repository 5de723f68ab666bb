// TensorIterator: the one engine under every elementwise op and reduction (docs/design/
// architecture.md, "Dispatch"). It broadcasts the operands, computes the common dtype, allocates
// outputs (preserving the inputs' memory layout), orders and coalesces dimensions so the
// innermost loop is as long and as contiguous as possible, and runs a 1-D loop body over the
// result in parallel chunks above kGrainSize. See docs/design/tensor-iterator.md.
#pragma once
#include <cstdint>
#include <vector>

#include "core/parallel.h"
#include "core/tensor.h"
#include "dispatch/function_ref.h"

namespace ember {

// The loop body: data[i] points at operand i's first element (outputs first), strides[i] is its
// inner stride in bytes, and n elements are processed.
using LoopFn = function_ref<void(char** data, const int64_t* strides, int64_t n)>;

struct IterOperand {
  Tensor tensor;    // what the kernel reads or writes
  Tensor original;  // the caller's output when `tensor` is a common-dtype temporary
  ScalarType dtype = ScalarType::Undefined;
  bool is_output = false;
  DimVector strides;  // bytes, per iteration dim
  char* data = nullptr;
};

class TensorIterator;

class TensorIteratorConfig {
 public:
  TensorIteratorConfig() {
    outputs_.reserve(2);
    inputs_.reserve(3);
  }
  TensorIteratorConfig& name(const char* n) {
    name_ = n;
    return *this;
  }
  // An undefined tensor asks the iterator to allocate the output.
  TensorIteratorConfig& add_output(const Tensor& t) {
    outputs_.push_back(t);
    return *this;
  }
  TensorIteratorConfig& add_input(const Tensor& t) {
    inputs_.push_back(t);
    return *this;
  }
  // Inputs are converted to result_type(inputs) before the kernel runs.
  TensorIteratorConfig& promote_inputs_to_common_dtype(bool v) {
    promote_ = v;
    return *this;
  }
  // An integral (or bool) common dtype becomes the default float dtype (true_divide, exp, ...).
  TensorIteratorConfig& promote_integer_inputs_to_float(bool v) {
    int_to_float_ = v;
    return *this;
  }
  // A defined output of another dtype receives the result by a cast (checked with can_cast).
  TensorIteratorConfig& cast_common_dtype_to_outputs(bool v) {
    cast_outputs_ = v;
    return *this;
  }
  // Inputs and outputs must all share one dtype (no promotion at all).
  TensorIteratorConfig& check_all_same_dtype(bool v) {
    same_dtype_ = v;
    return *this;
  }
  // dtype of allocated outputs when it differs from the common dtype (comparisons: Bool).
  TensorIteratorConfig& output_dtype(ScalarType t) {
    output_dtype_ = t;
    return *this;
  }
  // The iteration shape is fixed by the caller; outputs are not resized (reductions).
  TensorIteratorConfig& static_shape(IntArrayRef s) {
    static_shape_ = DimVector(s);
    has_static_shape_ = true;
    return *this;
  }
  // Outputs may have zero strides (a reduction writes many inputs into one output element).
  TensorIteratorConfig& is_reduction(bool v) {
    is_reduction_ = v;
    return *this;
  }
  // Element conversion between an input's dtype and the common dtype happens in the kernel.
  TensorIteratorConfig& allow_cpu_scalars(bool v) {
    allow_cpu_scalars_ = v;
    return *this;
  }

  // Whether build() checks that no output overlaps itself (expanded) or partially overlaps an
  // input (dispatch/mem_overlap.h). On by default, as in PyTorch; writes of one value (fill_)
  // turn it off.
  TensorIteratorConfig& check_mem_overlap(bool v) {
    check_mem_overlap_ = v;
    return *this;
  }

  TensorIterator build();

 private:
  // The common case of tiny-op overhead: one allocated output, inputs that are contiguous with
  // one shape or 0-d. Returns false when the general path is needed.
  bool try_build_fast(TensorIterator& it);
  friend class TensorIterator;
  const char* name_ = "op";
  std::vector<Tensor> outputs_, inputs_;
  DimVector static_shape_;
  ScalarType output_dtype_ = ScalarType::Undefined;
  bool promote_ = false, int_to_float_ = false, cast_outputs_ = false, same_dtype_ = true;
  bool has_static_shape_ = false, is_reduction_ = false, allow_cpu_scalars_ = true;
  bool check_mem_overlap_ = true;
};

class TensorIterator {
 public:
  int ntensors() const { return static_cast<int>(ops_.size()); }
  int noutputs() const { return noutputs_; }
  int ninputs() const { return ntensors() - noutputs_; }
  // The iteration shape after reordering and coalescing; shape()[0] is the innermost dim.
  IntArrayRef shape() const { return shape_; }
  int64_t numel() const { return numel_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  ScalarType common_dtype() const { return common_dtype_; }
  ScalarType dtype(int i) const { return ops_[i].dtype; }
  Device device() const { return device_; }
  const char* name() const { return name_; }
  const IterOperand& operand(int i) const { return ops_[i]; }
  // The caller-visible output i (after cast_outputs() it holds the result).
  const Tensor& output(int i = 0) const {
    return ops_[i].original.defined() ? ops_[i].original : ops_[i].tensor;
  }
  const Tensor& input(int i) const { return ops_[noutputs_ + i].tensor; }
  // Operand i has zero stride in every dim (a scalar or fully broadcast value).
  bool is_scalar(int i) const;
  // Every operand is contiguous along a single coalesced dim.
  bool is_contiguous() const;
  // Stride in bytes of operand i in iteration dim d.
  int64_t stride(int i, int d) const { return ops_[i].strides[d]; }

  // Runs loop over all elements, in parallel chunks when numel() >= grain.
  void for_each(LoopFn loop, int64_t grain = kGrainSize) const;
  // Runs loop over linear elements [begin, end) of the iteration space on this thread.
  void serial_for_each(LoopFn loop, int64_t begin, int64_t end) const;
  // Reductions: splits the outermost iteration dim whose output stride is non-zero across
  // threads, so no two threads write one output element. Falls back to serial.
  void for_each_reduction_safe(LoopFn loop, int64_t grain = kGrainSize) const;

  // Copies results computed in common-dtype temporaries into the caller's outputs.
  void cast_outputs();

 private:
  friend class TensorIteratorConfig;
  void serial_for_each_box(LoopFn loop, const int64_t* box_begin, const int64_t* box_end) const;

  std::vector<IterOperand> ops_;
  DimVector shape_;
  int64_t numel_ = 0;
  int noutputs_ = 0;
  ScalarType common_dtype_ = ScalarType::Undefined;
  Device device_;
  const char* name_ = "op";
};

// torch.result_type over tensors (0-d tensors and wrapped numbers take part by category only).
ScalarType result_type(const std::vector<Tensor>& tensors);

}  // namespace ember
