#include "core/quantizer.h"

namespace ember {

const char* qscheme_name(QScheme s) {
  switch (s) {
    case QScheme::PerTensorAffine:
      return "per_tensor_affine";
    case QScheme::PerChannelAffine:
      return "per_channel_affine";
    case QScheme::PerTensorSymmetric:
      return "per_tensor_symmetric";
    case QScheme::PerChannelSymmetric:
      return "per_channel_symmetric";
    case QScheme::PerChannelAffineFloatQParams:
      return "per_channel_affine_float_qparams";
  }
  return "unknown";
}

}  // namespace ember
