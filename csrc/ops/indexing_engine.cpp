// Shared indexing machinery: bounds checks, restrided views and the two kernel launches.
// See Note [Indexing through restrided views] in ops/indexing_engine.h.
#include "ops/indexing_engine.h"

#include <algorithm>
#include <numeric>

#include "core/factory.h"
#include "core/shape.h"
#include "dispatch/tensor_iterator.h"
#include "ops/creation.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(index_gather_stub, IndexGatherFn);
EMBER_DEFINE_STUB(index_put_stub, IndexPutFn);
EMBER_DEFINE_STUB(index_bounds_stub, IndexBoundsFn);
EMBER_DEFINE_STUB(scatter_mean_stub, ScatterMeanFn);

std::string list_str(IntArrayRef v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(v[i]);
  }
  return s + "]";
}

void check_index_bounds(const Tensor& index, const BoundsSpec& spec) {
  if (index.numel() == 0) return;
  const int64_t lo = spec.allow_negative ? -spec.size : 0;
  auto iter =
      TensorIteratorConfig().name(spec.op).add_input(index).check_all_same_dtype(false).build();
  int64_t bad = 0;
  if (!index_bounds_stub(index.device(), iter, lo, spec.size, &bad)) return;
  std::string msg;
  switch (spec.style) {
    case BoundsStyle::OutOfBounds:
      msg = str_cat("[", spec.op, "] ", spec.prefix, "index ", bad,
                    " is out of bounds for "
                    "dimension ",
                    spec.dim, " with size ", spec.size);
      break;
    case BoundsStyle::OutOfRangeInSelf:
      msg = str_cat("[", spec.op, "] ", spec.prefix, "index out of range in self");
      break;
    case BoundsStyle::Take:
      msg = str_cat("[", spec.op, "] ", spec.prefix, "out of range: tried to access index ", bad,
                    " on a tensor of ", spec.size, " elements.");
      break;
  }
  if (spec.index_error) throw IndexError(msg);
  throw Error(msg);
}

Tensor to_long_index(const Tensor& index) {
  if (index.dtype() == ScalarType::Int64) return index;
  return to_dtype(index, ScalarType::Int64);
}

Tensor restride(const Tensor& t, IntArrayRef sizes, IntArrayRef strides) {
  return make_view(t, sizes, strides, t.storage_offset());
}

bool is_non_overlapping(const Tensor& t) {
  // Sort the dims that move by stride.
  DimVector dims;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) == 0) return true;  // an empty tensor has no elements to overlap
    if (t.size(d) > 1) dims.push_back(d);
  }
  std::sort(dims.begin(), dims.end(),
            [&](int64_t a, int64_t b) { return t.stride(a) < t.stride(b); });
  // Sufficient condition: each stride exceeds the largest offset the smaller-stride dims reach.
  int64_t max_offset = 0;
  for (int64_t d : dims) {
    if (t.stride(d) <= max_offset) return false;
    max_offset += t.stride(d) * (t.size(d) - 1);
  }
  return true;
}

void launch_gather(const Tensor& out, const Tensor& src_view, const std::vector<Tensor>& idx_views,
                   IntArrayRef sizes, IntArrayRef elem_strides, const char* op,
                   const std::vector<IndexCheck>* fresh_checks) {
  if (out.numel() == 0) {
    // No element is read, but a non-empty index can still be out of range (x[:, [5]] on a
    // (0, 3) tensor), which is an error all the same.
    if (fresh_checks) {
      for (const IndexCheck& c : *fresh_checks) check_index_bounds(c.index, c.spec);
    }
    return;
  }
  TensorIteratorConfig cfg;
  cfg.name(op).add_output(out).add_input(src_view).check_all_same_dtype(false);
  for (const Tensor& i : idx_views) cfg.add_input(i);
  auto iter = cfg.build();
  DimVector byte_strides(elem_strides);
  for (size_t j = 0; j < byte_strides.size(); ++j) {
    byte_strides[j] *= static_cast<int64_t>(src_view.itemsize());
  }
  if (!fresh_checks) {
    index_gather_stub(out.device(), iter, sizes, byte_strides, nullptr, nullptr);
    return;
  }
  DimVector lo;
  std::vector<uint64_t> span;
  for (const IndexCheck& c : *fresh_checks) {
    lo.push_back(c.spec.allow_negative ? -c.spec.size : 0);
    span.push_back(static_cast<uint64_t>(c.spec.size) * (c.spec.allow_negative ? 2 : 1));
  }
  if (!index_gather_stub(out.device(), iter, sizes, byte_strides, lo.data(), span.data())) {
    // Slow path, errors only: the separate scan names the first bad index deterministically.
    for (const IndexCheck& c : *fresh_checks) check_index_bounds(c.index, c.spec);
    EMBER_THROW(IndexError, "[", op, "] index out of range");  // unreachable in practice
  }
}

void launch_put(const Tensor& dst_base, const Tensor& dst_view, const Tensor& src_view,
                const std::vector<Tensor>& idx_views, IntArrayRef sizes, IntArrayRef elem_strides,
                PutOp op, const char* op_name) {
  if (dst_view.numel() == 0) return;
  // dst is passed as an input: it has zero strides over the indexed dims by construction, which
  // the iterator refuses for outputs.
  TensorIteratorConfig cfg;
  cfg.name(op_name).add_input(dst_view).add_input(src_view).check_all_same_dtype(false);
  for (const Tensor& i : idx_views) cfg.add_input(i);
  auto iter = cfg.build();
  DimVector byte_strides(elem_strides);
  for (size_t j = 0; j < byte_strides.size(); ++j) {
    byte_strides[j] *= static_cast<int64_t>(dst_view.itemsize());
  }
  index_put_stub(dst_view.device(), iter, sizes, byte_strides, op, !is_non_overlapping(dst_base));
}

void check_writable(const Tensor& t, const char* op) {
  EMBER_CHECK(!t.storage()->read_only(), "[", op,
              "] cannot write to a tensor backed by a read-only NumPy array");
}

void prepare_out(const Tensor& out, ScalarType dtype, IntArrayRef sizes, const char* op) {
  check_out_dtype(out, dtype, op);
  check_writable(out, op);
  resize_output(out, sizes, op);
}

}  // namespace native
}  // namespace ember
