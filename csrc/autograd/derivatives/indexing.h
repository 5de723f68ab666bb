// Derivatives of the indexing ops (ops/indexing_*.cpp): index / index_put (t[idx], t[idx] = v),
// index_select / index_add / index_copy / index_fill, gather / scatter / scatter_add /
// scatter_reduce / take / take_along_dim, masked_fill / masked_select / masked_scatter.
// The derivative table is one wrapper per differentiable op (docs/design/autograd.md): the
// public op (api/indexing.cpp) calls its wrapper when recording is on (autograd::should_record);
// the wrapper runs the native op once with recording off and attaches the op's node, whose
// formula uses public ops only, so create_graph=True gives higher-order gradients.
//
// `out`: undefined (functional form), `self` (in-place form) or another tensor (out=, refused
// when an input requires grad).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/scalar.h"
#include "core/tensor.h"

namespace ember {
namespace derivatives {

// ---- advanced indexing (indexing_advanced.cpp) ----
// Attaches IndexBackward0 to `result` = self[indices] (ATen-style indices: one int64 tensor or
// bool mask per leading dim of self, undefined = ':'), already computed by the native gather.
Tensor index_recorded(const Tensor& self, const std::vector<Tensor>& indices, Tensor result);
// index_put_(self, indices, values, accumulate) (out = self) or index_put (out undefined).
Tensor index_put(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values,
                 bool accumulate, const Tensor& out);

// ---- index_* along one dim (indexing_select.cpp) ----
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out);
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                 const Scalar& alpha, const Tensor& out);
Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                  const Tensor& out);
// value: a Scalar (IndexFillBackward0) or a 0-d tensor (IndexFillBackward1).
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
                  const Tensor& out);
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value,
                  const Tensor& out);

// ---- masks (indexing_select.cpp) ----
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value, const Tensor& out);
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value, const Tensor& out);
Tensor masked_select(const Tensor& self, const Tensor& mask, const Tensor& out);
Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source,
                      const Tensor& out);

// ---- gather / scatter (indexing_gather.cpp) ----
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out);
Tensor take(const Tensor& self, const Tensor& index, const Tensor& out);
Tensor take_along_dim(const Tensor& self, const Tensor& indices, std::optional<int64_t> dim,
                      const Tensor& out);
// reduce: "" (plain write), "add" or "multiply" (scatter's deprecated reduce argument).
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
               const std::string& reduce, const Tensor& out);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
               const std::string& reduce, const Tensor& out);
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                   const Tensor& out);
Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce, bool include_self, const Tensor& out);

}  // namespace derivatives
}  // namespace ember
