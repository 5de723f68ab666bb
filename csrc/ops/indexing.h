// Indexing ops: Python-style t[...] / t[...] = v, and the gather / scatter / index_* / masked_*
// families. See docs/design/indexing.md for how they share one pair of kernels.
//
// Validation happens before any kernel touches memory: an out-of-range index raises the error
// PyTorch raises (IndexError or RuntimeError, with its message) and leaves every tensor as it was.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/scalar.h"
#include "core/tensor.h"

namespace ember {

// ---------------------------------------------------------------------------------------------
// Python-style indexing (Tensor.__getitem__ / __setitem__), as ATen's at::indexing::TensorIndex.
// In namespace ember, not native: a call getitem(t, idx) made from ember then finds no native
// overload by argument-dependent lookup.
// ---------------------------------------------------------------------------------------------
struct TensorIndex {
  enum class Kind : uint8_t { None, Ellipsis, Integer, Boolean, Slice, Tensor };
  Kind kind = Kind::None;
  int64_t integer = 0;                 // Integer; Boolean (0 or 1)
  std::optional<int64_t> start, stop;  // Slice (missing bound = open end)
  int64_t step = 1;                    // Slice (must be > 0)
  Tensor tensor;                       // Tensor: int64/int32 indices or a bool/uint8 mask

  static TensorIndex none() { return TensorIndex{}; }
  static TensorIndex ellipsis() { return make(Kind::Ellipsis); }
  static TensorIndex integer_index(int64_t i) {
    TensorIndex t = make(Kind::Integer);
    t.integer = i;
    return t;
  }
  static TensorIndex boolean(bool b) {
    TensorIndex t = make(Kind::Boolean);
    t.integer = b;
    return t;
  }
  static TensorIndex slice(std::optional<int64_t> start, std::optional<int64_t> stop,
                           int64_t step = 1) {
    TensorIndex t = make(Kind::Slice);
    t.start = start;
    t.stop = stop;
    t.step = step;
    return t;
  }
  static TensorIndex tensor_index(Tensor v) {
    TensorIndex t = make(Kind::Tensor);
    t.tensor = std::move(v);
    return t;
  }

 private:
  static TensorIndex make(Kind k) {
    TensorIndex t;
    t.kind = k;
    return t;
  }
};

namespace native {

// self[index]: basic indices give a view; integer/bool tensor indices copy (NumPy/PyTorch
// advanced indexing). Integers are applied as select() first, as PyTorch does.
Tensor getitem(const Tensor& self, const std::vector<TensorIndex>& index);
// self[index] = value (value broadcast to the indexed shape and converted to self's dtype).
void setitem(const Tensor& self, const std::vector<TensorIndex>& index, const Tensor& value);
void setitem(const Tensor& self, const std::vector<TensorIndex>& index, const Scalar& value);

// ---------------------------------------------------------------------------------------------
// ATen-style advanced indexing: indices[i] indexes dim i of self; an undefined entry means ':'.
// Bool/uint8 masks consume as many dims as they have.
// ---------------------------------------------------------------------------------------------
Tensor index(const Tensor& self, const std::vector<Tensor>& indices);
// values must have self's dtype (as torch.index_put_); accumulate adds instead of writing.
Tensor& index_put_(Tensor& self, const std::vector<Tensor>& indices, const Tensor& values,
                   bool accumulate = false);
Tensor index_put(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values,
                 bool accumulate = false);

// ---------------------------------------------------------------------------------------------
// Gather / scatter family (indexing_gather.cpp). `out` may be undefined (allocated).
// ---------------------------------------------------------------------------------------------
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out = {});
Tensor take(const Tensor& self, const Tensor& index, const Tensor& out = {});
// dim == nullopt: indexes the flattened input.
Tensor take_along_dim(const Tensor& self, const Tensor& indices, std::optional<int64_t> dim,
                      const Tensor& out = {});

// reduce for scatter(): "" (plain write), "add" or "multiply".
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
// reduce: "sum", "prod", "mean", "amax" or "amin".
Tensor& scatter_reduce_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                        const std::string& reduce, bool include_self = true);
Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce, bool include_self = true, const Tensor& out = {});

// ---------------------------------------------------------------------------------------------
// index_* family along one dim with a 1-D (or 0-D) index (indexing_select.cpp).
// ---------------------------------------------------------------------------------------------
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out = {});
Tensor& index_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                   const Scalar& alpha = Scalar(int64_t(1)));
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                 const Scalar& alpha = Scalar(int64_t(1)), const Tensor& out = {});
Tensor& index_copy_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source);
Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                  const Tensor& out = {});
Tensor& index_fill_(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value);
// value must be 0-d.
Tensor& index_fill_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& value);
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value);
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value);

// ---------------------------------------------------------------------------------------------
// Masks and nonzero (indexing_mask.cpp).
// ---------------------------------------------------------------------------------------------
Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Scalar& value);
Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Tensor& value);  // value 0-d
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value);
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value);
Tensor masked_select(const Tensor& self, const Tensor& mask, const Tensor& out = {});
Tensor& masked_scatter_(Tensor& self, const Tensor& mask, const Tensor& source);
Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source);
// (n, self.dim()) int64 coordinates of the non-zero elements in C order.
Tensor nonzero(const Tensor& self, const Tensor& out = {});
// One int64 vector per dim (a 0-d input counts as 1-d), as torch.nonzero(as_tuple=True) and
// the one-argument torch.where(cond).
std::vector<Tensor> nonzero_tuple(const Tensor& self);
Tensor argwhere(const Tensor& self);

// ---------------------------------------------------------------------------------------------
// Pieces of getitem / setitem / index (indexing_advanced.cpp) that the api layer's recording
// forms reuse: they apply the basic indices with its recording view ops, so the view chain
// gets its history (SelectBackward0, SliceBackward0, ...), as in PyTorch.
// ---------------------------------------------------------------------------------------------

// The view ops that turn basic indices into a view of self.
struct IndexViewOps {
  Tensor (*unsqueeze)(const Tensor& t, int64_t dim);
  Tensor (*select)(const Tensor& t, int64_t dim, int64_t index);
  Tensor (*slice)(const Tensor& t, int64_t dim, std::optional<int64_t> start,
                  std::optional<int64_t> end, int64_t step);
};
// native's (no history).
const IndexViewOps& native_index_view_ops();

// A view of self after the basic indices, plus the advanced index (int64 or undefined) for each
// of its leading dims.
struct BasicIndexResult {
  Tensor view;
  std::vector<Tensor> advanced;
  bool has_advanced = false;
};
// Phase one of an index expression (validates it). `ints_as_select`: a 0-d integer tensor acts
// like a Python int (Python indexing); ATen-style index() keeps it as an advanced index.
BasicIndexResult apply_basic_indices(const Tensor& self, const std::vector<TensorIndex>& index,
                                     const char* op, bool ints_as_select,
                                     const IndexViewOps& views);
// Phase two: view[advanced] into a new tensor.
Tensor gather_advanced(const Tensor& view, const std::vector<Tensor>& advanced, const char* op);
// The single index is a bool mask covering all of self (x[mask], x[mask] = v): served by the
// masked ops, which skip materialising coordinates.
bool is_full_mask(const Tensor& self, const std::vector<TensorIndex>& index);
// ATen-style indices as a Python index (an undefined entry becomes ':').
std::vector<TensorIndex> aten_to_python_index(const std::vector<Tensor>& indices);
// v without the leading size-1 dims beyond target_dim (a view; no history).
Tensor strip_leading_ones(const Tensor& v, int64_t target_dim);

}  // namespace native
}  // namespace ember
