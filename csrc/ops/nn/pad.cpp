// constant_pad_nd (any number of dims, negative pads crop) and the index-mapped reflect /
// replicate / circular paddings of the last 1 to 3 dims, with PyTorch's checks. F.pad itself is
// in api/nn/sampling.cpp.
#include <algorithm>

#include "core/factory.h"
#include "kernels/nn/sampling_stubs.h"
#include "ops/creation.h"
#include "ops/nn/conv_util.h"
#include "ops/nn/sampling.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(index_pad_stub, IndexPadFn);
EMBER_DEFINE_STUB(index_pad_backward_stub, IndexPadBackwardFn);
EMBER_DEFINE_STUB(interp_stub, InterpFn);
EMBER_DEFINE_STUB(interp_backward_stub, InterpBackwardFn);

const char* pad_mode_name(PadMode mode) {
  switch (mode) {
    case PadMode::kReflect:
      return "reflect";
    case PadMode::kReplicate:
      return "replicate";
    default:
      return "circular";
  }
}

Tensor constant_pad_nd(const Tensor& input, IntArrayRef pad, const Scalar& value) {
  const char* op = "constant_pad_nd";
  const int64_t dim = input.dim();
  EMBER_CHECK(pad.size() % 2 == 0, "[", op, "] Length of pad must be even but instead it equals ",
              pad.size());
  EMBER_CHECK(static_cast<int64_t>(pad.size()) / 2 <= dim, "[", op,
              "] Length of pad should be no more than twice the number of dimensions of the "
              "input. Pad length is ",
              pad.size(), " while the input has ", dim, " dimensions.");
  DimVector shape(input.sizes());
  const int64_t n = static_cast<int64_t>(pad.size()) / 2;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t d = dim - 1 - i;
    const int64_t size = input.size(d) + pad[2 * i] + pad[2 * i + 1];
    EMBER_CHECK(size >= 0, "[", op, "] The input size ", input.size(d), ", plus negative padding ",
                pad[2 * i], " and ", pad[2 * i + 1],
                " resulted in a negative output size, which is invalid. Check dimension ", d,
                " of your input.");
    shape[d] = size;
  }
  // Python numbers follow PyTorch's conversion to the tensor's dtype (2.5 -> 2 for integers).
  Scalar fill = value;
  if (input.dtype() == ScalarType::Bool) {
    fill = Scalar(value.to_double() != 0.0);
  } else if (is_integral(input.dtype(), false) && value.is_floating()) {
    fill = Scalar(static_cast<int64_t>(value.to_double()));
  }
  Tensor out = full(shape, fill, TensorOptions(input.dtype(), input.device()));
  // The region of the output that receives input values (and the input slice that goes there).
  Tensor dst = out, src = input;
  bool empty = false;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t d = dim - 1 - i;
    const int64_t lo = pad[2 * i], hi = pad[2 * i + 1];
    const int64_t src_start = std::max<int64_t>(0, -lo);
    const int64_t src_len = input.size(d) - src_start - std::max<int64_t>(0, -hi);
    if (src_len <= 0) {
      empty = true;
      break;
    }
    src = narrow(src, d, src_start, src_len);
    dst = narrow(dst, d, std::max<int64_t>(0, lo), src_len);
  }
  if (!empty && src.numel() > 0) copy_(dst, src);
  return out;
}

namespace {

// Source index along one dim of size `in` padded by (lo, hi).
std::vector<int64_t> source_indices(int64_t in, int64_t lo, int64_t out, PadMode mode) {
  std::vector<int64_t> src(static_cast<size_t>(out));
  // circular: negative pads crop first; the padding then wraps around the cropped range.
  const int64_t hi = out - in - lo;
  const int64_t crop_lo = std::max<int64_t>(0, -lo);
  const int64_t kept = in - crop_lo - std::max<int64_t>(0, -hi);
  for (int64_t o = 0; o < out; ++o) {
    int64_t i = o - lo;
    if (mode == PadMode::kReflect) {
      if (in == 1) {
        i = 0;
      } else {
        const int64_t period = 2 * (in - 1);
        i = ((i % period) + period) % period;
        if (i >= in) i = period - i;
      }
    } else if (mode == PadMode::kReplicate) {
      i = std::clamp<int64_t>(i, 0, in - 1);
    } else {
      // kept is 0 only for an empty input (check_index_pad), whose indices are never read.
      const int64_t j = o - std::max<int64_t>(lo, 0);
      i = kept > 0 ? crop_lo + ((j % kept) + kept) % kept : 0;
    }
    src[static_cast<size_t>(o)] = i;
  }
  return src;
}

IndexMap index_map(IntArrayRef in_sizes, IntArrayRef pad, PadMode mode) {
  IndexMap m;
  const int64_t n = static_cast<int64_t>(pad.size()) / 2;
  const int64_t dim = static_cast<int64_t>(in_sizes.size());
  for (int k = 0; k < 3; ++k) m.src[k] = {0};
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = 2 - i;  // table slot: innermost dim last
    const int64_t in = in_sizes[dim - 1 - i];
    const int64_t out = in + pad[2 * i] + pad[2 * i + 1];
    m.in[k] = in;
    m.out[k] = out;
    m.src[k] = source_indices(in, pad[2 * i], out, mode);
  }
  return m;
}

std::string dims_letters(int64_t n) {
  return n == 1 ? "W" : n == 2 ? "H, W" : "D, H, W";
}

void check_index_pad(const Tensor& input, IntArrayRef pad, PadMode mode, const char* op) {
  const int64_t n = static_cast<int64_t>(pad.size()) / 2, dim = input.dim();
  EMBER_CHECK(pad.size() % 2 == 0 && n >= 1 && n <= 3 && (dim == n + 1 || dim == n + 2), "[", op,
              "] ", pad_mode_name(mode), " padding of ", n, " dims expects a ", n + 1, "D or ",
              n + 2, "D input, but got input of size ", sizes_list(input.sizes()));
  if (mode != PadMode::kCircular) {
    EMBER_CHECK_T(NotImplementedError, input.dtype() != ScalarType::Bool, "[", op, "] \"",
                  mode == PadMode::kReflect ? "reflection_pad" : "replication_pad", n,
                  "d\" not implemented for 'Bool'");
    bool ok = true;
    for (int64_t d = dim == n + 2 ? 1 : 0; d < dim; ++d) ok = ok && input.size(d) > 0;
    EMBER_CHECK(ok, "[", op, "] Expected ", n + 1, "D or ", n + 2,
                "D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions "
                "for input, but got: ",
                sizes_list(input.sizes()));
  }
  std::string out_s;
  bool out_ok = true;
  for (int64_t i = n - 1; i >= 0; --i) {
    const int64_t d = dim - 1 - i;
    const int64_t in = input.size(d), lo = pad[2 * i], hi = pad[2 * i + 1];
    if (mode == PadMode::kReflect) {
      EMBER_CHECK(lo < in && hi < in, "[", op,
                  "] Argument #4: Padding size should be less than the corresponding input "
                  "dimension, but got: padding (",
                  lo, ", ", hi, ") at dimension ", d, " of input ", sizes_list(input.sizes()));
    } else if (mode == PadMode::kCircular) {
      EMBER_CHECK(lo <= in && hi <= in, "[", op,
                  "] Padding value causes wrapping around more than once.");
      EMBER_CHECK(in + lo + hi > 0 || input.numel() == 0, "[", op,
                  "] Negative padding value is resulting in an empty dimension");
      // The padding wraps around what the negative pads leave: with nothing left there is
      // nothing to wrap (PyTorch returns uninitialised memory here).
      const int64_t kept = in - std::max<int64_t>(0, -lo) - std::max<int64_t>(0, -hi);
      EMBER_CHECK(kept > 0 || in + lo + hi == 0 || input.numel() == 0, "[", op,
                  "] circular padding (", lo, ", ", hi, ") of dimension ", d, " (size ", in,
                  ") crops the whole dimension and then pads it: there is nothing left to wrap "
                  "around; crop less, or pad with another mode");
    }
    out_s += (out_s.empty() ? "" : ", ") + std::to_string(in + lo + hi);
    out_ok = out_ok && in + lo + hi >= 1;
  }
  if (mode != PadMode::kCircular) {
    EMBER_CHECK(out_ok, "[", op, "] input (", dims_letters(n), ") of size ",
                sizes_list(input.sizes()), " is too small. Calculated output ", dims_letters(n),
                ": (", out_s, ")");
  }
}

}  // namespace

Tensor index_pad(const Tensor& input, IntArrayRef pad, PadMode mode) {
  const char* op = "pad";
  check_index_pad(input, pad, mode, op);
  const IndexMap m = index_map(input.sizes(), pad, mode);
  DimVector shape(input.sizes());
  const int64_t n = static_cast<int64_t>(pad.size()) / 2;
  for (int64_t i = 0; i < n; ++i) shape[input.dim() - 1 - i] = m.out[2 - i];
  Tensor out = empty_tensor(shape, input.dtype(), input.device(), op);
  if (out.numel() > 0) index_pad_stub(input.device(), m, contiguous(input), out);
  return out;
}

Tensor index_pad_backward(const Tensor& grad_output, IntArrayRef input_sizes, IntArrayRef pad,
                          PadMode mode) {
  const char* op = "pad_backward";
  const IndexMap m = index_map(input_sizes, pad, mode);
  DimVector out_shape(input_sizes);
  const int64_t n = static_cast<int64_t>(pad.size()) / 2;
  for (int64_t i = 0; i < n; ++i) out_shape[out_shape.size() - 1 - i] = m.out[2 - i];
  EMBER_CHECK(grad_output.sizes().equals(out_shape), "[", op, "] expected grad_output of size ",
              sizes_list(out_shape), ", but got ", sizes_list(grad_output.sizes()));
  Tensor grad_input = empty_tensor(input_sizes, grad_output.dtype(), grad_output.device(), op);
  if (grad_input.numel() > 0) {
    index_pad_backward_stub(grad_output.device(), m, contiguous(grad_output), grad_input);
  }
  return grad_input;
}

}  // namespace native
}  // namespace ember
