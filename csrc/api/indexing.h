// Public indexing ops (ops/indexing.h has their documentation). The differentiable ones record
// their node here (api/indexing.cpp) and run the native op once; nonzero / argwhere are the
// native functions.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/scalar.h"
#include "core/tensor.h"
#include "ops/indexing.h"

namespace ember {

// ---- Python-style indexing (TensorIndex is declared in ops/indexing.h) ----
Tensor getitem(const Tensor& self, const std::vector<TensorIndex>& index);
void setitem(const Tensor& self, const std::vector<TensorIndex>& index, const Tensor& value);
void setitem(const Tensor& self, const std::vector<TensorIndex>& index, const Scalar& value);

// ---- ATen-style advanced indexing ----
Tensor index(const Tensor& self, const std::vector<Tensor>& indices);
Tensor& index_put_(Tensor& self, const std::vector<Tensor>& indices, const Tensor& values,
                   bool accumulate = false);
Tensor index_put(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values,
                 bool accumulate = false);

// ---- gather / scatter ----
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out = {});
Tensor take(const Tensor& self, const Tensor& index, const Tensor& out = {});
Tensor take_along_dim(const Tensor& self, const Tensor& indices, std::optional<int64_t> dim,
                      const Tensor& out = {});
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                 const std::string& reduce = "");
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
                 const std::string& reduce = "");
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
               const std::string& reduce = "", const Tensor& out = {});
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
               const std::string& reduce = "", const Tensor& out = {});
Tensor& scatter_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                   const Tensor& out = {});
Tensor& scatter_reduce_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                        const std::string& reduce, bool include_self = true);
Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce, bool include_self = true, const Tensor& out = {});

// ---- index_* along one dim ----
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out = {});
Tensor& index_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                   const Scalar& alpha = Scalar(int64_t(1)));
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                 const Scalar& alpha = Scalar(int64_t(1)), const Tensor& out = {});
Tensor& index_copy_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source);
Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                  const Tensor& out = {});
Tensor& index_fill_(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value);
Tensor& index_fill_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& value);
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value);
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value);

// ---- masks and nonzero ----
Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Scalar& value);
Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Tensor& value);
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value);
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value);
Tensor masked_select(const Tensor& self, const Tensor& mask, const Tensor& out = {});
Tensor& masked_scatter_(Tensor& self, const Tensor& mask, const Tensor& source);
Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source);
using native::argwhere;
using native::nonzero;
using native::nonzero_tuple;

}  // namespace ember
