// Kernel interface of the padding and resampling ops (internal to ops/nn/pad.cpp,
// ops/nn/upsample.cpp and their CPU kernels).
#pragma once
#include <vector>

#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {
namespace native {

// Up to 3 trailing dims, each described by, for every output index along it, the input index
// it reads (reflect / replicate / circular padding). Unused leading dims have size 1 and the
// table {0}.
struct IndexMap {
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  std::vector<int64_t> src[3];
};
// out (B, out0, out1, out2) <- input (B, in0, in1, in2); both contiguous.
using IndexPadFn = void (*)(const IndexMap& m, const Tensor& input, const Tensor& out);
// grad_input (B, in...) <- sum of grad_output (B, out...) over the outputs reading each input.
using IndexPadBackwardFn = void (*)(const IndexMap& m, const Tensor& grad_output,
                                    const Tensor& grad_input);
EMBER_DECLARE_STUB(index_pad_stub, IndexPadFn);
EMBER_DECLARE_STUB(index_pad_backward_stub, IndexPadBackwardFn);

// Separable interpolation over up to 3 trailing dims: output index o along dim d reads `taps[d]`
// input indices idx[d][o * taps[d] + t] with weights w[d][o * taps[d] + t] (nearest: 1 tap,
// linear: 2, cubic: 4). out[b, o0, o1, o2] = sum over taps of the weights' product times the
// input there.
struct InterpTables {
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  int64_t taps[3] = {1, 1, 1};
  std::vector<int64_t> idx[3];
  std::vector<double> w[3];
};
using InterpFn = void (*)(const InterpTables& t, const Tensor& input, const Tensor& out);
using InterpBackwardFn = void (*)(const InterpTables& t, const Tensor& grad_output,
                                  const Tensor& grad_input);
EMBER_DECLARE_STUB(interp_stub, InterpFn);
EMBER_DECLARE_STUB(interp_backward_stub, InterpBackwardFn);

}  // namespace native
}  // namespace ember
