// The quantization parameters of a quantized tensor (dtype qint8 / quint8 / qint32): real value
// = (q - zero_point) * scale, per tensor or per channel along `axis` (PyTorch's
// PerTensorAffineQuantizer / PerChannelAffineQuantizer). Immutable once made, so views share one.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/intrusive_ptr.h"

namespace ember {

enum class QScheme : int {
  PerTensorAffine = 0,
  PerChannelAffine = 1,
  PerTensorSymmetric = 2,
  PerChannelSymmetric = 3,
  // Per channel with real-valued zero points (embedding weights: q = round(x / scale + zp),
  // x = (q - zp) * scale, zp = -min / scale so each row's minimum maps to 0).
  PerChannelAffineFloatQParams = 4,
};
const char* qscheme_name(QScheme s);  // "per_tensor_affine"

class Quantizer : public RefCounted {
 public:
  static intrusive_ptr<Quantizer> per_tensor(double scale, int64_t zero_point) {
    auto q = make_intrusive<Quantizer>();
    q->scheme_ = QScheme::PerTensorAffine;
    q->scales_ = {scale};
    q->zero_points_ = {zero_point};
    return q;
  }
  static intrusive_ptr<Quantizer> per_channel(std::vector<double> scales,
                                              std::vector<int64_t> zero_points, int64_t axis) {
    auto q = make_intrusive<Quantizer>();
    q->scheme_ = QScheme::PerChannelAffine;
    q->scales_ = std::move(scales);
    q->zero_points_ = std::move(zero_points);
    q->axis_ = axis;
    return q;
  }
  static intrusive_ptr<Quantizer> per_channel_float_qparams(std::vector<double> scales,
                                                            std::vector<double> zero_points,
                                                            int64_t axis) {
    auto q = make_intrusive<Quantizer>();
    q->scheme_ = QScheme::PerChannelAffineFloatQParams;
    q->scales_ = std::move(scales);
    q->zero_points_.assign(zero_points.size(), 0);
    q->float_zero_points_ = std::move(zero_points);
    q->axis_ = axis;
    return q;
  }
  QScheme scheme() const { return scheme_; }
  bool per_channel() const {
    return scheme_ == QScheme::PerChannelAffine || scheme_ == QScheme::PerChannelAffineFloatQParams;
  }
  bool float_qparams() const { return scheme_ == QScheme::PerChannelAffineFloatQParams; }
  // Channel c's zero point as a real number (the integer one, or the float one).
  double zero_point_value(size_t c) const {
    return float_qparams() ? float_zero_points_[c] : static_cast<double>(zero_points_[c]);
  }
  const std::vector<double>& float_zero_points() const { return float_zero_points_; }
  double scale() const { return scales_[0]; }
  int64_t zero_point() const { return zero_points_[0]; }
  const std::vector<double>& scales() const { return scales_; }
  const std::vector<int64_t>& zero_points() const { return zero_points_; }
  int64_t axis() const { return axis_; }
  // The same parameters along another axis (a view that moved or removed leading dims).
  intrusive_ptr<Quantizer> with_axis(int64_t axis) const {
    if (float_qparams()) return per_channel_float_qparams(scales_, float_zero_points_, axis);
    return per_channel(scales_, zero_points_, axis);
  }
  bool same_as(const Quantizer& o) const {
    return scheme_ == o.scheme_ && scales_ == o.scales_ && zero_points_ == o.zero_points_ &&
           float_zero_points_ == o.float_zero_points_ && axis_ == o.axis_;
  }

 private:
  QScheme scheme_ = QScheme::PerTensorAffine;
  std::vector<double> scales_;
  std::vector<int64_t> zero_points_;  // zeros under PerChannelAffineFloatQParams
  std::vector<double> float_zero_points_;
  int64_t axis_ = 0;
};

}  // namespace ember
