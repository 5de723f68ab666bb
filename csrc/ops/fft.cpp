// The FFT primitives (ops/fft.h): validation, result allocation, and one kernel call per
// transformed dim (the first reads the input, the others run in place on the result).
#include "ops/fft.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/factory.h"
#include "core/shape.h"
#include "dispatch/copy.h"
#include "ops/shape_util.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(fft_c2c_stub, FftC2CFn);
EMBER_DEFINE_STUB(fft_r2c_stub, FftR2CFn);
EMBER_DEFINE_STUB(fft_c2r_stub, FftC2RFn);

namespace {

double norm_scale(FftNorm norm, double signal_numel) {
  switch (norm) {
    case FftNorm::kNone:
      return 1.0;
    case FftNorm::kByRootN:
      return 1.0 / std::sqrt(signal_numel);
    case FftNorm::kByN:
      return 1.0 / signal_numel;
  }
  return 1.0;
}

void check_dims(const Tensor& self, IntArrayRef dims, const char* op) {
  for (size_t i = 0; i < dims.size(); ++i) {
    EMBER_CHECK(dims[i] >= 0 && dims[i] < self.dim(), "[", op, "] dim ", dims[i],
                " out of range for a tensor of ", self.dim(), " dimensions");
    for (size_t j = 0; j < i; ++j) {
      EMBER_CHECK(dims[i] != dims[j], "[", op, "] FFT dims must be unique");
    }
  }
}

// c2c along dims[first..] of `out` in place, the scale applied by the last one.
void c2c_in_place(const Tensor& out, const std::vector<int64_t>& dims, size_t first, bool forward,
                  double scale) {
  for (size_t i = first; i < dims.size(); ++i) {
    fft_c2c_stub(out.device(), out, out, dims[i], forward, i + 1 == dims.size() ? scale : 1.0);
  }
}

}  // namespace

Tensor fft_c2c(const Tensor& self, IntArrayRef dims, FftNorm norm, bool forward) {
  EMBER_CHECK(self.is_complex(), "[_fft_c2c] expects a complex input tensor, but got ",
              torch_type_name(self.dtype()));
  check_dims(self, dims, "_fft_c2c");
  Tensor out = empty_tensor(self.sizes(), self.dtype(), self.device(), "_fft_c2c");
  if (out.numel() == 0) return out;
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(self.size(d));
  const double scale = norm_scale(norm, n);
  if (dims.empty()) {
    copy_into(out, self, "_fft_c2c");
    return out;
  }
  // The last dim first: its rows are usually the contiguous ones, read once from self.
  std::vector<int64_t> order = dims.vec();
  std::reverse(order.begin(), order.end());
  fft_c2c_stub(self.device(), out, self, order[0], forward, order.size() == 1 ? scale : 1.0);
  c2c_in_place(out, order, 1, forward, scale);
  return out;
}

Tensor fft_r2c(const Tensor& self, IntArrayRef dims, FftNorm norm, bool onesided) {
  EMBER_CHECK(self.dtype() == ScalarType::Float32 || self.dtype() == ScalarType::Float64,
              "[_fft_r2c] expects a float32 or float64 input tensor, but got ",
              torch_type_name(self.dtype()));
  EMBER_CHECK(!dims.empty(), "[_fft_r2c] must transform at least one axis");
  check_dims(self, dims, "_fft_r2c");
  const int64_t last = dims.back();
  DimVector sizes(self.sizes());
  if (onesided) sizes[last] = sizes[last] / 2 + 1;
  Tensor out = empty_tensor(sizes, to_complex(self.dtype()), self.device(), "_fft_r2c");
  if (out.numel() == 0) return out;
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(self.size(d));
  const double scale = norm_scale(norm, n);
  fft_r2c_stub(self.device(), out, self, last, dims.size() == 1 ? scale : 1.0);
  const std::vector<int64_t> rest(dims.begin(), dims.end() - 1);
  c2c_in_place(out, rest, 0, /*forward=*/true, scale);
  return out;
}

Tensor fft_c2r(const Tensor& self, IntArrayRef dims, FftNorm norm, int64_t last_dim_size) {
  EMBER_CHECK(self.is_complex(), "[_fft_c2r] expects a complex input tensor, but got ",
              torch_type_name(self.dtype()));
  EMBER_CHECK(!dims.empty(), "[_fft_c2r] must transform at least one axis");
  check_dims(self, dims, "_fft_c2r");
  const int64_t last = dims.back();
  EMBER_CHECK(last_dim_size >= 1, "[_fft_c2r] Invalid number of data points (", last_dim_size,
              ") specified");
  EMBER_CHECK(self.size(last) >= last_dim_size / 2 + 1, "[_fft_c2r] expects at least ",
              last_dim_size / 2 + 1, " entries along dim ", last, " for ", last_dim_size,
              " output points, but got ", self.size(last));
  DimVector sizes(self.sizes());
  sizes[last] = last_dim_size;
  Tensor out = empty_tensor(sizes, to_real(self.dtype()), self.device(), "_fft_c2r");
  if (out.numel() == 0) return out;
  double n = static_cast<double>(last_dim_size);
  for (size_t i = 0; i + 1 < dims.size(); ++i) n *= static_cast<double>(self.size(dims[i]));
  const double scale = norm_scale(norm, n);
  Tensor half = self;
  if (dims.size() > 1) {
    // The other dims first (complex, inverse), on the entries the last dim reads.
    DimVector hsizes(self.sizes());
    hsizes[last] = last_dim_size / 2 + 1;
    half = empty_tensor(hsizes, self.dtype(), self.device(), "_fft_c2r");
    const std::vector<int64_t> rest(dims.begin(), dims.end() - 1);
    const Tensor src = make_view(self, hsizes, self.strides(), self.storage_offset());
    fft_c2c_stub(self.device(), half, src, rest.back(), /*forward=*/false, 1.0);
    c2c_in_place(half, std::vector<int64_t>(rest.begin(), rest.end() - 1), 0,
                 /*forward=*/false, 1.0);
  }
  fft_c2r_stub(self.device(), out, half, last, scale);
  return out;
}

}  // namespace native
}  // namespace ember
