#include "ops/elementwise_common.h"

#include "core/shape.h"
#include "ops/creation.h"

namespace ember {
namespace native {

namespace {

void prepare_output(const char* op, const Tensor& out, std::initializer_list<Tensor> inputs) {
  if (!out.defined()) return;
  // The iterator checks overlap between out and the inputs (dispatch/mem_overlap.h).
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

}  // namespace native
}  // namespace ember
