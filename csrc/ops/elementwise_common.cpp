#include "ops/elementwise_common.h"

#include <cstdlib>

#include "core/shape.h"
#include "ops/creation.h"

namespace ember {

namespace {

// Elements from the first to one past the last reachable one (for dense tensors: numel).
int64_t element_extent(const Tensor& t) {
  if (t.numel() == 0) return 0;
  int64_t extent = 1;
  for (int64_t d = 0; d < t.dim(); ++d) extent += (t.size(d) - 1) * std::abs(t.stride(d));
  return extent;
}

// PyTorch's rule: an input that shares memory with the output must either be the output's exact
// alias (same start, strides and sizes: each element is read before it is written) or be
// disjoint from it. A partial overlap would make the result depend on the iteration order.
// Strided (non-dense) tensors are too hard to judge exactly and are let through, as in PyTorch.
void check_no_partial_overlap(const char* op, const Tensor& out, const Tensor& in) {
  if (!out.defined() || !in.defined() || in.is_same(out) || in.storage() != out.storage()) return;
  const int64_t out_n = element_extent(out), in_n = element_extent(in);
  if (out_n != out.numel() || in_n != in.numel() || out_n == 0 || in_n == 0) return;
  const char* ob = static_cast<const char*>(out.data_ptr());
  const char* ib = static_cast<const char*>(in.data_ptr());
  const char* oe = ob + out_n * static_cast<int64_t>(out.itemsize());
  const char* ie = ib + in_n * static_cast<int64_t>(in.itemsize());
  if (oe <= ib || ie <= ob) return;  // disjoint
  const bool full = ob == ib && oe == ie && out.itemsize() == in.itemsize() &&
                    out.sizes().equals(in.sizes()) && out.strides().equals(in.strides());
  EMBER_CHECK(full, "[", op,
              "] unsupported operation: some elements of the input tensor and the "
              "written-to tensor refer to a single memory location. Please clone() the tensor "
              "before performing the operation.");
}

void prepare_output(const char* op, const Tensor& out, std::initializer_list<Tensor> inputs) {
  if (!out.defined()) return;
  for (const Tensor& t : inputs) check_no_partial_overlap(op, out, t);
  EMBER_CHECK(!out.storage()->read_only(), "[", op,
              "] cannot write to a tensor backed by a read-only NumPy array");
  // out= tensors that are not also inputs are resized to the broadcast shape.
  bool is_input = false;
  for (const Tensor& t : inputs) is_input = is_input || t.is_same(out);
  if (!is_input) {
    DimVector shape;
    for (const Tensor& t : inputs) shape = broadcast_shapes(shape, t.sizes(), op);
    resize_output(out, shape, op);
  }
}
}  // namespace

TensorIterator build_elementwise_typed(const char* op, ScalarType result, const Tensor& out,
                                       std::initializer_list<Tensor> inputs) {
  prepare_output(op, out, inputs);
  TensorIteratorConfig cfg;
  cfg.name(op).check_all_same_dtype(false).cast_common_dtype_to_outputs(true);
  if (result != inputs.begin()->dtype()) cfg.output_dtype(result);
  cfg.add_output(out);
  for (const Tensor& t : inputs) cfg.add_input(t);
  return cfg.build();
}

TensorIterator build_elementwise(const char* op, ResultKind kind, const Tensor& out,
                                 std::initializer_list<Tensor> inputs) {
  TensorIteratorConfig cfg;
  cfg.name(op);
  prepare_output(op, out, inputs);
  cfg.add_output(out);
  for (const Tensor& t : inputs) cfg.add_input(t);
  switch (kind) {
    case ResultKind::Promote:
      cfg.promote_inputs_to_common_dtype(true).cast_common_dtype_to_outputs(true);
      break;
    case ResultKind::PromoteToFloat:
      cfg.promote_inputs_to_common_dtype(true)
          .promote_integer_inputs_to_float(true)
          .cast_common_dtype_to_outputs(true);
      break;
    case ResultKind::Bool:
      cfg.promote_inputs_to_common_dtype(true)
          .output_dtype(ScalarType::Bool)
          .cast_common_dtype_to_outputs(true);
      break;
    case ResultKind::SameAsInput:
      break;
  }
  return cfg.build();
}

Tensor finish_elementwise(TensorIterator& iter, const Tensor& out) {
  iter.cast_outputs();
  if (out.defined()) out.bump_version();
  return iter.output(0);
}

}  // namespace ember
