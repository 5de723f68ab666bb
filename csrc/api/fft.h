// Public FFTs: the recording primitives (ember::fft_c2c / fft_r2c / fft_c2r) and torch.fft's
// functions, composed from them with pad / narrow / conj as PyTorch composes them, so their
// gradients come from the primitives' nodes (api/fft.cpp, autograd/derivatives/fft.cpp).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ops/fft.h"

namespace ember {

// The primitives (ops/fft.h), recording their node when self requires grad.
Tensor fft_c2c(const Tensor& self, IntArrayRef dims, native::FftNorm norm, bool forward);
Tensor fft_r2c(const Tensor& self, IntArrayRef dims, native::FftNorm norm, bool onesided);
Tensor fft_c2r(const Tensor& self, IntArrayRef dims, native::FftNorm norm, int64_t last_dim_size);

namespace fft {

using OptLen = std::optional<int64_t>;
using OptSizes = std::optional<std::vector<int64_t>>;
using OptNorm = std::optional<std::string>;

// The 1-D transforms: torch.fft.fft(input, n=None, dim=-1, norm=None, *, out=None) and kin.
Tensor fft(const Tensor& input, OptLen n, int64_t dim, const OptNorm& norm, const Tensor& out = {});
Tensor ifft(const Tensor& input, OptLen n, int64_t dim, const OptNorm& norm,
            const Tensor& out = {});
Tensor rfft(const Tensor& input, OptLen n, int64_t dim, const OptNorm& norm,
            const Tensor& out = {});
Tensor irfft(const Tensor& input, OptLen n, int64_t dim, const OptNorm& norm,
             const Tensor& out = {});
Tensor hfft(const Tensor& input, OptLen n, int64_t dim, const OptNorm& norm,
            const Tensor& out = {});
Tensor ihfft(const Tensor& input, OptLen n, int64_t dim, const OptNorm& norm,
             const Tensor& out = {});

// The n-D transforms: torch.fft.fftn(input, s=None, dim=None, norm=None, *, out=None) and kin;
// fft2 & co. are these with dim (-2, -1) (the bindings pass it). `name` names the op in errors.
Tensor fftn(const Tensor& input, const OptSizes& s, const OptSizes& dim, const OptNorm& norm,
            const Tensor& out = {}, const char* name = "fftn");
Tensor ifftn(const Tensor& input, const OptSizes& s, const OptSizes& dim, const OptNorm& norm,
             const Tensor& out = {}, const char* name = "ifftn");
Tensor rfftn(const Tensor& input, const OptSizes& s, const OptSizes& dim, const OptNorm& norm,
             const Tensor& out = {}, const char* name = "rfftn");
Tensor irfftn(const Tensor& input, const OptSizes& s, const OptSizes& dim, const OptNorm& norm,
              const Tensor& out = {}, const char* name = "irfftn");
Tensor hfftn(const Tensor& input, const OptSizes& s, const OptSizes& dim, const OptNorm& norm,
             const Tensor& out = {}, const char* name = "hfftn");
Tensor ihfftn(const Tensor& input, const OptSizes& s, const OptSizes& dim, const OptNorm& norm,
              const Tensor& out = {}, const char* name = "ihfftn");

}  // namespace fft
}  // namespace ember
