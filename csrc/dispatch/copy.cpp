#include "dispatch/copy.h"

#include "core/factory.h"
#include "dispatch/tensor_iterator.h"

namespace ember {

EMBER_DEFINE_STUB(copy_stub, CopyFn);

void copy_into(const Tensor& dst, const Tensor& src, const char* op, bool bump_version) {
  EMBER_CHECK(!dst.storage()->read_only(), "[", op,
              "] cannot write to a tensor backed by a read-only NumPy array");
  auto iter = TensorIteratorConfig()
                  .name(op)
                  .add_output(dst)
                  .add_input(src)
                  .check_all_same_dtype(false)
                  .build();
  if (iter.numel() > 0) copy_stub(dst.device(), iter);
  if (bump_version) dst.bump_version();
}

Tensor converted_copy(const Tensor& src, ScalarType dtype, const char* op) {
  Tensor out = empty_tensor(src.sizes(), dtype, src.device(), op);
  auto iter = TensorIteratorConfig()
                  .name(op)
                  .add_output(out)
                  .add_input(src)
                  .check_all_same_dtype(false)
                  .build();
  if (iter.numel() > 0) copy_stub(src.device(), iter);
  if (src.impl()->is_wrapped_number()) out.impl()->set_wrapped_number(true);
  return out;
}

}  // namespace ember
