// Embedding ops (ops/nn/embedding.h): validation and layout; kernels in
// kernels/cpu/nn/embedding_kernels.cpp, derivatives in derivatives/nn/embedding.cpp.
#include "ops/nn/embedding.h"

#include <vector>

#include "core/shape.h"
#include "ops/compare.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/indexing.h"
#include "ops/reduce.h"
#include "ops/unary.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(embedding_gather_stub, EmbeddingGatherFn);
EMBER_DEFINE_STUB(accumulate_rows_stub, AccumulateRowsFn);
EMBER_DEFINE_STUB(embedding_renorm_stub, EmbeddingRenormFn);
EMBER_DEFINE_STUB(embedding_bag_stub, EmbeddingBagFn);
EMBER_DEFINE_STUB(embedding_bag_max_backward_stub, EmbeddingBagMaxBackwardFn);

namespace {

const TensorOptions kLong(ScalarType::Int64);

// The indices as a contiguous int64 tensor (int32 accepted, as PyTorch).
Tensor index_tensor(const Tensor& indices, const char* op) {
  EMBER_CHECK(indices.dtype() == ScalarType::Int64 || indices.dtype() == ScalarType::Int32, "[", op,
              "] Expected tensor for argument #1 'indices' to have one of the following "
              "scalar types: Long, Int; but got ",
              dtype_name(indices.dtype()), " instead (while checking arguments for ", op, ")");
  return contiguous(to_dtype(indices, ScalarType::Int64));
}

void check_in_range(const Tensor& idx, int64_t num_rows, const char* op) {
  const int64_t* p = idx.data<int64_t>();
  for (int64_t k = 0, n = idx.numel(); k < n; ++k) {
    if (p[k] < 0 || p[k] >= num_rows) {
      EMBER_THROW(IndexError, "[", op, "] index out of range in self: index ", k,
                  " of input "
                  "takes value ",
                  p[k], " which is not in the valid range [0, ", num_rows, ")");
    }
  }
}

void check_weight(const Tensor& weight, const char* op) {
  EMBER_CHECK(weight.dim() == 2, "[", op, "] 'weight' must be 2-D, but got a tensor of shape ",
              shape_str(weight.sizes()));
}

// Gradients accumulate in float for 16-bit weights.
ScalarType accumulate_dtype(ScalarType t) {
  return t == ScalarType::Float16 || t == ScalarType::BFloat16 ? ScalarType::Float32 : t;
}

// 1 / (occurrences of idx[k] among all indices), for scale_grad_by_freq.
Tensor inverse_frequency(const Tensor& idx, int64_t num_weights, int64_t padding_idx,
                         ScalarType dtype) {
  std::vector<int64_t> counts(num_weights, 0);
  const int64_t* p = idx.data<int64_t>();
  const int64_t n = idx.numel();
  for (int64_t k = 0; k < n; ++k) ++counts[p[k]];
  Tensor coef = empty({n}, TensorOptions(ScalarType::Float64));
  double* c = coef.data<double>();
  for (int64_t k = 0; k < n; ++k) c[k] = p[k] == padding_idx ? 0.0 : 1.0 / double(counts[p[k]]);
  return to_dtype(coef, dtype);
}

}  // namespace

// ---- embedding ----------------------------------------------------------------------------------

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx,
                 bool scale_grad_by_freq, bool sparse) {
  const char* op = "embedding";
  check_weight(weight, op);
  EMBER_CHECK_T(NotImplementedError, !sparse, "[", op,
                "] sparse=True (sparse gradients) is not "
                "supported by Ember; use sparse=False");
  const Tensor idx = index_tensor(indices, op);
  check_in_range(idx, weight.size(0), op);
  const int64_t dim = weight.size(1);
  Tensor out = empty({idx.numel(), dim}, TensorOptions(weight.dtype(), weight.device()));
  if (out.numel() > 0) embedding_gather_stub(out.device(), out, weight, idx);
  DimVector shape(indices.sizes());
  shape.push_back(dim);
  return view(out, shape);
}

Tensor embedding_dense_backward(const Tensor& grad, const Tensor& indices, int64_t num_weights,
                                int64_t padding_idx, bool scale_grad_by_freq) {
  const char* op = "embedding_backward";
  const Tensor idx = index_tensor(indices, op);
  const int64_t dim = grad.dim() > 0 ? grad.size(grad.dim() - 1) : 1;
  EMBER_CHECK(grad.numel() == idx.numel() * dim, "[", op, "] grad of shape ",
              shape_str(grad.sizes()), " does not match indices of shape ",
              shape_str(indices.sizes()));
  const ScalarType acc = accumulate_dtype(grad.dtype());
  Tensor out = zeros({num_weights, dim}, TensorOptions(acc, grad.device()));
  if (idx.numel() == 0 || dim == 0) return to_dtype(out, grad.dtype());
  Tensor src = contiguous(to_dtype(reshape(grad, {idx.numel(), dim}), acc));
  Tensor target = idx;
  if (padding_idx >= 0) {  // padding entries add nothing
    target = clone(idx);
    int64_t* t = target.data<int64_t>();
    for (int64_t k = 0, n = target.numel(); k < n; ++k) {
      if (t[k] == padding_idx) t[k] = -1;
    }
  }
  Tensor coef =
      scale_grad_by_freq ? inverse_frequency(idx, num_weights, padding_idx, acc) : Tensor();
  accumulate_rows_stub(out.device(), out, src, target, Tensor(), coef);
  return to_dtype(out, grad.dtype());
}

Tensor& embedding_renorm_(Tensor& weight, const Tensor& indices, double max_norm,
                          double norm_type) {
  const char* op = "embedding_renorm_";
  check_weight(weight, op);
  EMBER_CHECK(weight.is_floating_point(), "[", op, "] expected a floating point weight, got ",
              dtype_name(weight.dtype()));
  const Tensor idx = index_tensor(indices, op);
  check_in_range(idx, weight.size(0), op);
  if (idx.numel() > 0) {
    embedding_renorm_stub(weight.device(), weight, idx, max_norm, norm_type);
    weight.bump_version();
  }
  return weight;
}

// ---- embedding_bag ------------------------------------------------------------------------------

BagLayout embedding_bag_layout(const Tensor& weight, const Tensor& indices, const Tensor& offsets,
                               bool include_last_offset) {
  const char* op = "embedding_bag";
  check_weight(weight, op);
  EMBER_CHECK(indices.dim() == 1, "[", op,
              "] input has to be a 1D Tensor, but got Tensor of "
              "dimension ",
              indices.dim());
  EMBER_CHECK(offsets.dim() == 1, "[", op,
              "] offsets has to be a 1D Tensor, but got Tensor of "
              "dimension ",
              offsets.dim());
  BagLayout l;
  l.idx = index_tensor(indices, op);
  check_in_range(l.idx, weight.size(0), op);
  const Tensor off = index_tensor(offsets, op);
  const int64_t n = l.idx.numel(), no = off.numel();
  EMBER_CHECK(!include_last_offset || no >= 1, "[", op,
              "] include_last_offset: number of offsets should be at least 1");
  l.num_bags = include_last_offset ? no - 1 : no;
  const int64_t* o = off.data<int64_t>();
  if (no > 0) {
    EMBER_CHECK(o[0] == 0, "[", op,
                "] offsets[0] has to be 0, i.e., the first sequence in the "
                "mini-batch has to start from position 0. However, got ",
                o[0]);
    EMBER_CHECK(o[no - 1] <= n, "[", op, "] offsets[-1] can not be greater than input's length ", n,
                " but got offsets[-1] of ", o[no - 1]);
  }
  for (int64_t b = 1; b < no; ++b) {
    EMBER_CHECK(o[b] >= o[b - 1], "[", op, "] offsets must be non-decreasing, but offsets[", b,
                "] = ", o[b], " < offsets[", b - 1, "] = ", o[b - 1]);
  }
  l.starts = empty({l.num_bags}, kLong);
  l.ends = empty({l.num_bags}, kLong);
  l.offset2bag = full({n}, Scalar(int64_t(-1)), kLong);
  int64_t* s = l.starts.data<int64_t>();
  int64_t* e = l.ends.data<int64_t>();
  int64_t* bag_of = l.offset2bag.data<int64_t>();
  for (int64_t b = 0; b < l.num_bags; ++b) {
    s[b] = o[b];
    e[b] = b + 1 < no ? o[b + 1] : n;
    for (int64_t k = s[b]; k < e[b]; ++k) bag_of[k] = b;
  }
  return l;
}

BagArgs embedding_bag_args(const Tensor& weight, const Tensor& indices, int64_t mode, bool sparse,
                           const Tensor& per_sample_weights, std::optional<int64_t> padding_idx) {
  const char* op = "embedding_bag";
  EMBER_CHECK(mode >= 0 && mode <= 2, "[", op,
              "] mode has to be 0 (sum), 1 (mean) or 2 (max), "
              "got ",
              mode);
  EMBER_CHECK_T(NotImplementedError, !sparse, "[", op,
                "] sparse=True (sparse gradients) is not "
                "supported by Ember; use sparse=False");
  EMBER_CHECK(weight.is_floating_point(), "[", op, "] expected a floating point weight, got ",
              dtype_name(weight.dtype()));
  BagArgs args;
  args.mode = static_cast<BagMode>(mode);
  if (padding_idx.has_value()) {
    const int64_t v = weight.dim() == 2 ? weight.size(0) : 0;
    const int64_t p = *padding_idx;
    EMBER_CHECK(p >= -v && p < v, "[", op,
                "] padding_idx must be within the number of "
                "embeddings, ",
                -v, " through ", v - 1, ", but got ", p);
    args.padding_idx = p < 0 ? p + v : p;
  }
  if (per_sample_weights.defined()) {
    EMBER_CHECK(args.mode == BagMode::Sum, "[", op,
                "] embedding_bag: per_sample_weights only "
                "supported with mode='sum'");
    EMBER_CHECK(per_sample_weights.dim() == 1 && per_sample_weights.numel() == indices.numel(), "[",
                op, "] expected per_sample_weights to be a 1D tensor of the input's size ",
                indices.numel(), ", got shape ", shape_str(per_sample_weights.sizes()));
    EMBER_CHECK(per_sample_weights.dtype() == weight.dtype(), "[", op,
                "] expected "
                "per_sample_weights of dtype ",
                dtype_name(weight.dtype()), ", got ", dtype_name(per_sample_weights.dtype()));
  }
  return args;
}

std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(
    const Tensor& weight, const Tensor& indices, const Tensor& offsets, bool scale_grad_by_freq,
    int64_t mode, bool sparse, const Tensor& per_sample_weights, bool include_last_offset,
    std::optional<int64_t> padding_idx) {
  const BagArgs args =
      embedding_bag_args(weight, indices, mode, sparse, per_sample_weights, padding_idx);
  const BagLayout l = embedding_bag_layout(weight, indices, offsets, include_last_offset);
  return embedding_bag_forward(weight, l, per_sample_weights, args);
}

std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag_forward(const Tensor& weight,
                                                                 const BagLayout& l,
                                                                 const Tensor& per_sample_weights,
                                                                 BagArgs args) {
  const int64_t dim = weight.size(1);
  Tensor out = empty({l.num_bags, dim}, TensorOptions(weight.dtype(), weight.device()));
  Tensor bag_size = empty({l.num_bags}, kLong);
  Tensor max_indices =
      args.mode == BagMode::Max ? empty({l.num_bags, dim}, kLong) : zeros({l.num_bags}, kLong);
  const Tensor psw = per_sample_weights.defined() ? contiguous(per_sample_weights) : Tensor();
  if (l.num_bags > 0) {
    embedding_bag_stub(out.device(), out, bag_size, max_indices, weight, l.idx, l.starts, l.ends,
                       psw, args);
  }
  return {out, l.offset2bag, bag_size, max_indices};
}

Tensor embedding_bag_coefficients(const BagLayout& l, const Tensor& bag_size, BagArgs args,
                                  bool scale_grad_by_freq, int64_t num_weights, ScalarType dtype) {
  const int64_t n = l.idx.numel();
  const int64_t* idx = l.idx.data<int64_t>();
  const int64_t* bag_of = l.offset2bag.data<int64_t>();
  const int64_t* bs = bag_size.data<int64_t>();
  std::vector<int64_t> counts;
  if (scale_grad_by_freq) {
    counts.assign(num_weights, 0);
    for (int64_t k = 0; k < n; ++k) ++counts[idx[k]];
  }
  Tensor coef = empty({n}, TensorOptions(ScalarType::Float64));
  double* c = coef.data<double>();
  for (int64_t k = 0; k < n; ++k) {
    const bool skip = bag_of[k] < 0 || idx[k] == args.padding_idx;
    double v = skip ? 0.0 : 1.0;
    if (!skip && args.mode == BagMode::Mean) v /= double(bs[bag_of[k]]);
    if (!skip && scale_grad_by_freq) v /= double(counts[idx[k]]);
    c[k] = v;
  }
  return to_dtype(coef, dtype);
}

Tensor embedding_bag_psw_grad(const Tensor& grad, const Tensor& weight, const BagLayout& l,
                              BagArgs args) {
  // d out[b] / d psw[k] = weight[idx[k]]: the dot product of grad[b] with that row.
  const Tensor rows = clamp_min(l.offset2bag, Scalar(int64_t(0)));
  Tensor dots = sum(mul(index_select(grad, 0, rows), index_select(weight, 0, l.idx)),
                    std::vector<int64_t>{1});
  Tensor valid = logical_and(ge(l.offset2bag, wrap_scalar(Scalar(int64_t(0)))),
                             ne(l.idx, wrap_scalar(Scalar(args.padding_idx))));
  return mul(dots, valid);
}

std::tuple<Tensor, Tensor> embedding_bag_backward(const Tensor& grad, const Tensor& weight,
                                                  const BagLayout& l, const Tensor& bag_size,
                                                  const Tensor& max_indices,
                                                  const Tensor& per_sample_weights, BagArgs args,
                                                  bool scale_grad_by_freq, bool need_weight,
                                                  bool need_psw) {
  const int64_t num_weights = weight.size(0), dim = weight.size(1), n = l.idx.numel();
  const ScalarType acc = accumulate_dtype(grad.dtype());
  const Tensor g = contiguous(to_dtype(grad, acc));
  const int64_t* idx = l.idx.data<int64_t>();
  const int64_t* bag_of = l.offset2bag.data<int64_t>();
  Tensor grad_weight, grad_psw;
  if (need_weight) {
    Tensor out = zeros({num_weights, dim}, TensorOptions(acc, grad.device()));
    if (args.mode == BagMode::Max) {
      if (out.numel() > 0 && l.num_bags > 0) {
        embedding_bag_max_backward_stub(out.device(), out, g, max_indices);
      }
    } else if (n > 0 && dim > 0) {
      // One row of grad per index, scaled by psw, 1 / bag size (mean) and 1 / frequency.
      Tensor coef =
          embedding_bag_coefficients(l, bag_size, args, scale_grad_by_freq, num_weights, acc);
      if (per_sample_weights.defined()) {
        coef = contiguous(mul(coef, to_dtype(per_sample_weights, acc)));
      }
      Tensor target = empty({n}, kLong);
      int64_t* t = target.data<int64_t>();
      for (int64_t k = 0; k < n; ++k) {
        t[k] = bag_of[k] < 0 || idx[k] == args.padding_idx ? -1 : idx[k];
      }
      Tensor rows = clamp_min(l.offset2bag, Scalar(int64_t(0)));
      accumulate_rows_stub(out.device(), out, g, target, rows, coef);
    }
    grad_weight = to_dtype(out, grad.dtype());
  }
  if (need_psw) grad_psw = embedding_bag_psw_grad(grad, weight, l, args);
  return {grad_weight, grad_psw};
}

}  // namespace native
}  // namespace ember
