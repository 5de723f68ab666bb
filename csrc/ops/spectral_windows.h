// The window functions of spectral analysis (torch.hann_window, hamming_window, blackman_window,
// bartlett_window, kaiser_window): computed in float64 and rounded once to the requested dtype.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace ember {
namespace native {

enum class WindowKind { kHann, kHamming, kBlackman, kBartlett, kKaiser };

// `length` points; periodic: the first `length` points of the symmetric window of length + 1 (the
// form spectral analysis wants). alpha / beta: hamming's coefficients (alpha - beta cos); kaiser's
// shape parameter is beta. dtype Undefined: the default dtype; it must be a floating dtype.
Tensor spectral_window(WindowKind kind, int64_t length, bool periodic, double alpha, double beta,
                       ScalarType dtype, const char* op);

}  // namespace native
}  // namespace ember
