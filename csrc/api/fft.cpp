// torch.fft's functions over the three recording primitives. The argument handling follows
// PyTorch's (dtype promotion, norm strings, n / s / dim canonicalisation, padding or trimming the
// input); docs/design/fft.md lists how each function maps onto the primitives.
#include "api/fft.h"

#include <algorithm>

#include "api/complex.h"
#include "api/fft_derivatives.h"
#include "api/nn/sampling.h"
#include "api/views.h"
#include "autograd/record.h"
#include "core/shape.h"
#include "ops/creation.h"
#include "ops/shape_util.h"

namespace ember {

using native::FftNorm;

Tensor fft_c2c(const Tensor& self, IntArrayRef dims, FftNorm norm, bool forward) {
  if (autograd::should_record(self)) return derivatives::fft_c2c(self, dims, norm, forward);
  return native::fft_c2c(self, dims, norm, forward);
}

Tensor fft_r2c(const Tensor& self, IntArrayRef dims, FftNorm norm, bool onesided) {
  if (autograd::should_record(self)) return derivatives::fft_r2c(self, dims, norm, onesided);
  return native::fft_r2c(self, dims, norm, onesided);
}

Tensor fft_c2r(const Tensor& self, IntArrayRef dims, FftNorm norm, int64_t last_dim_size) {
  if (autograd::should_record(self)) return derivatives::fft_c2r(self, dims, norm, last_dim_size);
  return native::fft_c2r(self, dims, norm, last_dim_size);
}

namespace fft {
namespace {

using Dims = std::vector<int64_t>;

// "backward" (the default) scales the inverse by 1/n, "forward" the forward transform,
// "ortho" both by 1/sqrt(n).
FftNorm norm_from_string(const OptNorm& norm, bool forward, const char* op) {
  if (!norm || *norm == "backward") return forward ? FftNorm::kNone : FftNorm::kByN;
  if (*norm == "forward") return forward ? FftNorm::kByN : FftNorm::kNone;
  if (*norm == "ortho") return FftNorm::kByRootN;
  EMBER_THROW(Error, "[fft.", op, "] Invalid normalization mode: \"", *norm,
              "\" (expected \"forward\", \"backward\" or \"ortho\")");
}

// Integers and bools compute in the default float dtype; float16 / bfloat16 are refused, as on
// PyTorch's CPU backend.
Tensor promote(const Tensor& t, bool require_complex, const char* op) {
  if (t.is_complex()) return t;
  ScalarType st = is_floating(t.dtype()) ? t.dtype() : default_dtype();
  if (st != ScalarType::Float32 && st != ScalarType::Float64) {
    EMBER_THROW(NotImplementedError, "[fft.", op, "] Unsupported dtype ",
                native::torch_type_name(st), " (the CPU FFTs take float32 and float64)");
  }
  if (require_complex) st = to_complex(st);
  return st == t.dtype() ? t : ember::to_dtype(t, st);
}

int64_t wrap_fft_dim(int64_t dim, const Tensor& t, const char* op) {
  EMBER_CHECK_T(IndexError, t.dim() > 0, "[fft.", op, "] Dimension specified as ", dim,
                " but tensor has no dimensions");
  return wrap_dim(dim, t.dim(), op);
}

// Zero-pads or trims x along each dims[i] to sizes[i] entries.
Tensor resize_input(Tensor x, const Dims& dims, const Dims& sizes) {
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = dims[i], cur = x.size(d), n = sizes[i];
    if (cur > n) {
      x = ember::narrow(x, d, 0, n);
    } else if (cur < n) {
      Dims pad(2 * (x.dim() - d), 0);
      pad.back() = n - cur;
      x = ember::constant_pad_nd(x, pad);
    }
  }
  return x;
}

void check_points(int64_t n, const char* op) {
  EMBER_CHECK(n >= 1, "[fft.", op, "] Invalid number of data points (", n, ") specified");
}

// out=: out's kind must match the result's (complex or real floating); a result of another
// precision is converted, as PyTorch copies into out.
Tensor finish(const Tensor& result, const Tensor& out, const Tensor& input, const char* op) {
  if (!out.defined()) return result;
  if (result.is_complex()) {
    EMBER_CHECK(out.is_complex(), "[fft.", op, "] ", op,
                " expects a complex output tensor, but got ", native::torch_type_name(out.dtype()));
  } else {
    EMBER_CHECK(out.is_floating_point(), "[fft.", op, "] ", op,
                " expects a floating point output tensor, but got ",
                native::torch_type_name(out.dtype()));
  }
  if (autograd::should_record(input)) autograd::check_out_arg(out, {input}, op);
  const Tensor r = result.dtype() == out.dtype() ? result : ember::to_dtype(result, out.dtype());
  return native::finish_out(r, out, op);
}

struct ShapeAndDims {
  Dims shape, dims;
};

ShapeAndDims canonicalize(const Tensor& input, const OptSizes& s, const OptSizes& dim,
                          const char* op) {
  ShapeAndDims r;
  const int64_t ndim = input.dim();
  if (dim) {
    for (int64_t d : *dim) r.dims.push_back(wrap_fft_dim(d, input, op));
    Dims sorted = r.dims;
    std::sort(sorted.begin(), sorted.end());
    EMBER_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), "[fft.", op,
                "] FFT dims must be unique");
  }
  if (s) {
    EMBER_CHECK(!dim || dim->size() == s->size(), "[fft.", op,
                "] When given, dim and shape arguments must have the same length");
    const auto k = static_cast<int64_t>(s->size());
    EMBER_CHECK(k <= ndim, "[fft.", op, "] Got shape with ", k,
                " values but input tensor only has ", ndim, " dimensions.");
    if (!dim) {
      for (int64_t d = ndim - k; d < ndim; ++d) r.dims.push_back(d);
    }
    for (int64_t i = 0; i < k; ++i) {
      const int64_t n = (*s)[i];
      r.shape.push_back(n == -1 ? input.size(r.dims[i]) : n);
    }
  } else {
    if (!dim) {
      for (int64_t d = 0; d < ndim; ++d) r.dims.push_back(d);
    }
    for (int64_t d : r.dims) r.shape.push_back(input.size(d));
  }
  for (int64_t n : r.shape) check_points(n, op);
  return r;
}

// The c2r functions' shapes: the last dim's output length defaults to 2 (m - 1) of its m input
// entries, and the input is resized to length / 2 + 1 there.
int64_t c2r_canonicalize(const Tensor& input, const OptSizes& s, ShapeAndDims& desc,
                         const char* op) {
  EMBER_CHECK(!desc.shape.empty(), "[fft.", op, "] ", op, " must transform at least one axis");
  int64_t last = desc.shape.back();
  if (!s || s->back() == -1) last = 2 * (input.size(desc.dims.back()) - 1);
  check_points(last, op);
  desc.shape.back() = last / 2 + 1;
  return last;
}

Tensor c2c_1d(const Tensor& input, OptLen n, int64_t dim, const OptNorm& norm, bool forward,
              const Tensor& out, const char* op) {
  const int64_t d = wrap_fft_dim(dim, input, op);
  const int64_t len = n.value_or(input.size(d));
  check_points(len, op);
  const FftNorm nm = norm_from_string(norm, forward, op);
  Tensor r;
  if (input.is_complex()) {
    Tensor x = promote(input, true, op);
    x = resize_input(x, {d}, {len});
    r = ember::fft_c2c(x, {d}, nm, forward);
  } else {
    // Real input: the two-sided real transform (the inverse conjugates the forward one).
    Tensor x = promote(input, false, op);
    x = resize_input(x, {d}, {len});
    r = ember::fft_r2c(x, {d}, nm, /*onesided=*/false);
    if (!forward) r = ember::conj(r);
  }
  return finish(r, out, input, op);
}

Tensor r2c_1d(const Tensor& input, OptLen n, int64_t dim, const OptNorm& norm, bool forward,
              const Tensor& out, const char* op) {
  EMBER_CHECK_T(TypeError, !input.is_complex(), "[fft.", op, "] ", op,
                " expects a real input tensor, but got ", native::torch_type_name(input.dtype()));
  const int64_t d = wrap_fft_dim(dim, input, op);
  const int64_t len = n.value_or(input.size(d));
  check_points(len, op);
  const FftNorm nm = norm_from_string(norm, forward, op);
  Tensor x = resize_input(promote(input, false, op), {d}, {len});
  Tensor r = ember::fft_r2c(x, {d}, nm, /*onesided=*/true);
  if (!forward) r = ember::conj(r);
  return finish(r, out, input, op);
}

Tensor c2r_1d(const Tensor& input, OptLen n, int64_t dim, const OptNorm& norm, bool forward,
              const Tensor& out, const char* op) {
  const int64_t d = wrap_fft_dim(dim, input, op);
  const int64_t len = n.value_or(2 * (input.size(d) - 1));
  check_points(len, op);
  const FftNorm nm = norm_from_string(norm, forward, op);
  Tensor x = promote(input, true, op);
  // Without n the input keeps all its entries (the kernel reads len / 2 + 1 of them).
  if (n) x = resize_input(x, {d}, {len / 2 + 1});
  // hfft: the forward transform of a Hermitian signal is the inverse one of its conjugate.
  if (forward) x = ember::conj(x);
  return finish(ember::fft_c2r(x, {d}, nm, len), out, input, op);
}

}  // namespace

Tensor fft(const Tensor& input, OptLen n, int64_t dim, const OptNorm& norm, const Tensor& out) {
  return c2c_1d(input, n, dim, norm, true, out, "fft");
}
Tensor ifft(const Tensor& input, OptLen n, int64_t dim, const OptNorm& norm, const Tensor& out) {
  return c2c_1d(input, n, dim, norm, false, out, "ifft");
}
Tensor rfft(const Tensor& input, OptLen n, int64_t dim, const OptNorm& norm, const Tensor& out) {
  return r2c_1d(input, n, dim, norm, true, out, "rfft");
}
Tensor ihfft(const Tensor& input, OptLen n, int64_t dim, const OptNorm& norm, const Tensor& out) {
  return r2c_1d(input, n, dim, norm, false, out, "ihfft");
}
Tensor irfft(const Tensor& input, OptLen n, int64_t dim, const OptNorm& norm, const Tensor& out) {
  return c2r_1d(input, n, dim, norm, false, out, "irfft");
}
Tensor hfft(const Tensor& input, OptLen n, int64_t dim, const OptNorm& norm, const Tensor& out) {
  return c2r_1d(input, n, dim, norm, true, out, "hfft");
}

Tensor fftn(const Tensor& input, const OptSizes& s, const OptSizes& dim, const OptNorm& norm,
            const Tensor& out, const char* name) {
  const ShapeAndDims desc = canonicalize(input, s, dim, name);
  Tensor x = resize_input(promote(input, true, name), desc.dims, desc.shape);
  return finish(ember::fft_c2c(x, desc.dims, norm_from_string(norm, true, name), true), out, input,
                name);
}

Tensor ifftn(const Tensor& input, const OptSizes& s, const OptSizes& dim, const OptNorm& norm,
             const Tensor& out, const char* name) {
  const ShapeAndDims desc = canonicalize(input, s, dim, name);
  Tensor x = resize_input(promote(input, true, name), desc.dims, desc.shape);
  return finish(ember::fft_c2c(x, desc.dims, norm_from_string(norm, false, name), false), out,
                input, name);
}

Tensor rfftn(const Tensor& input, const OptSizes& s, const OptSizes& dim, const OptNorm& norm,
             const Tensor& out, const char* name) {
  EMBER_CHECK_T(TypeError, !input.is_complex(), "[fft.", name, "] ", name,
                " expects a real-valued input tensor, but got ",
                native::torch_type_name(input.dtype()));
  const ShapeAndDims desc = canonicalize(input, s, dim, name);
  EMBER_CHECK(!desc.shape.empty(), "[fft.", name, "] ", name, " must transform at least one axis");
  Tensor x = resize_input(promote(input, false, name), desc.dims, desc.shape);
  return finish(ember::fft_r2c(x, desc.dims, norm_from_string(norm, true, name), true), out, input,
                name);
}

Tensor irfftn(const Tensor& input, const OptSizes& s, const OptSizes& dim, const OptNorm& norm,
              const Tensor& out, const char* name) {
  ShapeAndDims desc = canonicalize(input, s, dim, name);
  const int64_t last = c2r_canonicalize(input, s, desc, name);
  Tensor x = resize_input(promote(input, true, name), desc.dims, desc.shape);
  return finish(ember::fft_c2r(x, desc.dims, norm_from_string(norm, false, name), last), out, input,
                name);
}

Tensor hfftn(const Tensor& input, const OptSizes& s, const OptSizes& dim, const OptNorm& norm,
             const Tensor& out, const char* name) {
  ShapeAndDims desc = canonicalize(input, s, dim, name);
  const int64_t last = c2r_canonicalize(input, s, desc, name);
  Tensor x = resize_input(promote(input, true, name), desc.dims, desc.shape);
  const FftNorm nm = norm_from_string(norm, true, name);
  // The forward transform of a real (Hermitian-packed) signal: forward c2c over the other dims,
  // then the conjugate's inverse c2r along the last one.
  if (desc.dims.size() > 1) {
    x = ember::fft_c2c(x, Dims(desc.dims.begin(), desc.dims.end() - 1), nm, true);
  }
  x = ember::conj(x);
  return finish(ember::fft_c2r(x, {desc.dims.back()}, nm, last), out, input, name);
}

Tensor ihfftn(const Tensor& input, const OptSizes& s, const OptSizes& dim, const OptNorm& norm,
              const Tensor& out, const char* name) {
  EMBER_CHECK_T(TypeError, !input.is_complex(), "[fft.", name, "] ", name,
                " expects a real-valued input tensor, but got ",
                native::torch_type_name(input.dtype()));
  const ShapeAndDims desc = canonicalize(input, s, dim, name);
  EMBER_CHECK(!desc.shape.empty(), "[fft.", name, "] ", name, " must transform at least one axis");
  Tensor x = resize_input(promote(input, false, name), desc.dims, desc.shape);
  const FftNorm nm = norm_from_string(norm, false, name);
  // The inverse of a real signal is the conjugate of its forward transform: r2c on the last dim,
  // conjugated, then the inverse c2c over the others.
  Tensor r = ember::conj(ember::fft_r2c(x, {desc.dims.back()}, nm, true));
  if (desc.dims.size() > 1) {
    r = ember::fft_c2c(r, Dims(desc.dims.begin(), desc.dims.end() - 1), nm, false);
  }
  return finish(r, out, input, name);
}

}  // namespace fft
}  // namespace ember
