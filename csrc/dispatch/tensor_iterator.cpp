#include "dispatch/tensor_iterator.h"

#include <immintrin.h>

#include <algorithm>

#include "core/factory.h"
#include "core/shape.h"
#include "dispatch/copy.h"
#include "dispatch/mem_overlap.h"

namespace ember {

namespace {

// Category ranking for result_type: bool < integral < floating < complex.
int category(ScalarType t) {
  if (t == ScalarType::Bool) return 0;
  if (is_integral(t, false)) return 1;
  if (is_floating(t)) return 2;
  return 3;
}

// Combines a higher-priority result with a lower-priority one the way torch.result_type does:
// the lower one only matters when it is of a higher category.
ScalarType combine_categories(ScalarType higher, ScalarType lower) {
  if (higher == ScalarType::Undefined) return lower;
  if (lower == ScalarType::Undefined) return higher;
  if (is_complex(higher)) return higher;
  if (is_complex(lower)) {
    // Preserve the precision of a floating higher type: float64 + 1j -> complex128.
    if (is_floating(higher)) return to_complex(higher);
    return lower;
  }
  if (is_floating(higher)) return higher;
  if (higher == ScalarType::Bool || is_floating(lower)) return promote_types(higher, lower);
  return higher;
}

}  // namespace

ScalarType result_type(const std::vector<Tensor>& tensors) {
  ScalarType dim_result = ScalarType::Undefined;
  ScalarType zero_result = ScalarType::Undefined;
  ScalarType wrapped_result = ScalarType::Undefined;
  for (const Tensor& t : tensors) {
    if (!t.defined()) continue;
    ScalarType d = t.dtype();
    if (t.impl()->is_wrapped_number()) {
      // A Python number counts as the default dtype of its category.
      if (is_floating(d))
        d = default_dtype();
      else if (is_complex(d))
        d = default_complex_dtype();
      wrapped_result = promote_types(wrapped_result, d);
    } else if (t.dim() == 0) {
      zero_result = promote_types(zero_result, d);
    } else {
      dim_result = promote_types(dim_result, d);
    }
  }
  (void)category;
  return combine_categories(dim_result, combine_categories(zero_result, wrapped_result));
}

// One output and at most one input, all laid out as a single run: the iteration is 1-D. Covers
// fill_ of a contiguous tensor and full reductions of a contiguous input to one element.
static bool try_build_single_run(const std::vector<Tensor>& outputs,
                                 const std::vector<Tensor>& inputs, bool is_reduction,
                                 TensorIterator& it, std::vector<IterOperand>& ops,
                                 DimVector& shape, int64_t& numel) {
  if (outputs.size() != 1 || !outputs[0].defined() || inputs.size() > 1) return false;
  const Tensor& out = outputs[0];
  if (!out.device().is_cpu() || out.storage()->read_only()) return false;
  const bool full_reduction = is_reduction && inputs.size() == 1 && out.numel() == 1;
  if (inputs.empty()) {
    if (!out.is_contiguous()) return false;
    numel = out.numel();
  } else if (full_reduction) {
    if (!inputs[0].is_contiguous() || !inputs[0].device().is_cpu()) return false;
    numel = inputs[0].numel();
  } else {
    return false;
  }
  shape = DimVector(1, numel);
  ops.resize(1 + inputs.size());
  ops[0].is_output = true;
  ops[0].tensor = out;
  ops[0].dtype = out.dtype();
  ops[0].strides = DimVector(1, full_reduction || numel <= 1 ? 0 : int64_t(out.itemsize()));
  if (!inputs.empty()) {
    ops[1].tensor = inputs[0];
    ops[1].dtype = inputs[0].dtype();
    ops[1].strides = DimVector(1, numel <= 1 ? 0 : int64_t(inputs[0].itemsize()));
  }
  for (IterOperand& o : ops) o.data = static_cast<char*>(o.tensor.data_ptr());
  (void)it;
  return true;
}

bool TensorIteratorConfig::try_build_fast(TensorIterator& it) {
  if (try_build_single_run(outputs_, inputs_, is_reduction_, it, it.ops_, it.shape_, it.numel_)) {
    it.common_dtype_ = inputs_.empty() ? outputs_[0].dtype() : inputs_[0].dtype();
    it.device_ = Device();
    return true;
  }
  if (outputs_.size() != 1 || outputs_[0].defined() || inputs_.empty() || has_static_shape_ ||
      is_reduction_) {
    return false;
  }
  const Tensor* shaped = nullptr;  // the first input with dims; all others must match or be 0-d
  for (const Tensor& t : inputs_) {
    if (!t.device().is_cpu() || !t.is_contiguous()) return false;
    if (t.dim() == 0) continue;
    if (!shaped)
      shaped = &t;
    else if (!t.sizes().equals(shaped->sizes()))
      return false;
  }
  ScalarType common = promote_ ? result_type(inputs_) : inputs_[0].dtype();
  if (promote_ && int_to_float_ && is_integral(common, /*include_bool=*/true)) {
    common = default_dtype();
  }
  for (const Tensor& t : inputs_) {
    if (t.dtype() == common) continue;
    if (!promote_) {
      if (same_dtype_) return false;  // let the general path raise its error
      continue;
    }
    if (t.dim() != 0) return false;  // a full-size conversion: general path
  }
  IntArrayRef shape = shaped ? shaped->sizes() : IntArrayRef();
  ScalarType out_dtype = output_dtype_ != ScalarType::Undefined ? output_dtype_ : common;
  it.common_dtype_ = common;
  it.device_ = Device();
  Tensor out = empty_tensor(shape, out_dtype, it.device_, name_);
  it.numel_ = out.numel();
  it.shape_ = DimVector(1, it.numel_);
  it.ops_.resize(1 + inputs_.size());
  IterOperand& o = it.ops_[0];
  o.is_output = true;
  o.dtype = out_dtype;
  o.strides = DimVector(1, it.numel_ > 1 ? static_cast<int64_t>(element_size(out_dtype)) : 0);
  o.tensor = std::move(out);
  for (size_t i = 0; i < inputs_.size(); ++i) {
    IterOperand& in = it.ops_[1 + i];
    const Tensor& t = inputs_[i];
    in.tensor = (promote_ && t.dtype() != common) ? converted_copy(t, common, name_) : t;
    in.dtype = in.tensor.dtype();
    int64_t stride = (t.dim() == 0 || it.numel_ <= 1) ? 0 : static_cast<int64_t>(t.itemsize());
    in.strides = DimVector(1, stride);
  }
  for (IterOperand& op : it.ops_) op.data = static_cast<char*>(op.tensor.data_ptr());
  return true;
}

TensorIterator TensorIteratorConfig::build() {
  TensorIterator it;
  it.name_ = name_;
  it.noutputs_ = static_cast<int>(outputs_.size());
  const char* op = name_;
  if (try_build_fast(it)) return it;

  // --- device: every operand on one device (0-d CPU scalars excepted) -------------------
  bool have_device = false;
  for (const auto* list : {&inputs_, &outputs_}) {
    for (const Tensor& t : *list) {
      if (!t.defined()) continue;
      if (!have_device) {
        it.device_ = t.device();
        have_device = true;
      } else if (t.device() != it.device_ && !(t.dim() == 0 && t.device().is_cpu())) {
        EMBER_THROW(Error, "[", op,
                    "] Expected all tensors to be on the same device, but found "
                    "at least two devices, ",
                    it.device_.str(), " and ", t.device().str());
      }
    }
  }

  // --- dtypes --------------------------------------------------------------------------
  ScalarType common = ScalarType::Undefined;
  if (promote_) {
    common = result_type(inputs_);
    if (int_to_float_ && is_integral(common, /*include_bool=*/true)) common = default_dtype();
  } else if (!inputs_.empty()) {
    common = inputs_[0].dtype();
  } else if (!outputs_.empty() && outputs_[0].defined()) {
    common = outputs_[0].dtype();
  }
  if (same_dtype_ && !promote_) {
    for (const Tensor& t : inputs_) {
      EMBER_CHECK(t.dtype() == common, "[", op, "] expected all inputs to have dtype ",
                  dtype_name(common), " but got ", dtype_name(t.dtype()));
    }
  }
  it.common_dtype_ = common;

  // --- shape ---------------------------------------------------------------------------
  DimVector shape;
  if (has_static_shape_) {
    shape = static_shape_;
  } else if (inputs_.empty()) {
    for (const Tensor& t : outputs_) {
      if (t.defined()) {
        shape = DimVector(t.sizes());
        break;
      }
    }
  } else {
    for (const Tensor& t : inputs_) shape = broadcast_shapes(shape, t.sizes(), op);
  }
  for (const Tensor& t : outputs_) {
    if (!t.defined() || has_static_shape_) continue;
    if (!t.sizes().equals(shape)) {
      EMBER_THROW(Error, "[", op, "] output with shape ", shape_str(t.sizes()),
                  " doesn't match the broadcast shape ", shape_str(shape));
    }
  }
  const int nd = static_cast<int>(shape.size());
  it.numel_ = checked_numel(shape, op);

  // --- operands, with inputs cast to the common dtype where the kernel needs one dtype ----
  it.ops_.reserve(outputs_.size() + inputs_.size());
  for (const Tensor& t : outputs_) {
    IterOperand o;
    o.is_output = true;
    if (t.defined()) {
      EMBER_CHECK(!t.storage()->read_only(), "[", op,
                  "] cannot write to a tensor whose memory "
                  "belongs to a read-only NumPy array (copy the array first)");
      // Internal overlap (an expanded output) is checked below, on the broadcast strides.
      if (check_mem_overlap_ && !is_reduction_) {
        for (const Tensor& in : inputs_) assert_no_partial_overlap(t, in, op);
      }
      ScalarType want = output_dtype_ != ScalarType::Undefined ? output_dtype_ : common;
      if (t.dtype() != want) {
        EMBER_CHECK(cast_outputs_ || !promote_, "[", op, "] expected output dtype ",
                    dtype_name(want), " but got ", dtype_name(t.dtype()));
        if (cast_outputs_) {
          EMBER_CHECK(can_cast(want, t.dtype()), "[", op, "] result type ", dtype_name(want),
                      " can't be cast to the desired output type ", dtype_name(t.dtype()));
          o.original = t;
          o.tensor = empty_tensor(t.sizes(), want, t.device(), op);
        } else {
          o.tensor = t;
        }
      } else {
        o.tensor = t;
      }
    }
    o.dtype = o.tensor.defined()
                  ? o.tensor.dtype()
                  : (output_dtype_ != ScalarType::Undefined ? output_dtype_ : common);
    it.ops_.push_back(std::move(o));
  }
  for (const Tensor& t : inputs_) {
    IterOperand o;
    o.tensor = t;
    if (promote_ && t.dtype() != common) o.tensor = converted_copy(t, common, op);
    o.dtype = o.tensor.dtype();
    it.ops_.push_back(std::move(o));
  }

  // --- per-operand byte strides in the broadcast shape ---------------------------------
  for (IterOperand& o : it.ops_) {
    o.strides.resize(nd, 0);
    if (!o.tensor.defined()) continue;
    const int64_t isz = static_cast<int64_t>(o.tensor.itemsize());
    const int off = nd - static_cast<int>(o.tensor.dim());
    for (int d = 0; d < o.tensor.dim(); ++d) {
      o.strides[off + d] =
          o.tensor.size(d) == 1 && shape[off + d] != 1 ? 0 : o.tensor.stride(d) * isz;
    }
  }

  // --- order dims fastest-first by the operands' strides (outputs decide first) -----------
  DimVector perm(nd);
  for (int i = 0; i < nd; ++i) perm[i] = nd - 1 - i;  // innermost first
  auto should_swap = [&](int d0, int d1) {
    for (const IterOperand& o : it.ops_) {
      if (!o.tensor.defined() || (is_reduction_ && o.is_output)) continue;
      int64_t s0 = o.strides[d0], s1 = o.strides[d1];
      if (s0 == 0 || s1 == 0) continue;
      if (s0 != s1) return s0 > s1;
      if (shape[d0] != shape[d1]) return shape[d0] > shape[d1];
    }
    return false;
  };
  for (int i = 1; i < nd; ++i) {
    for (int j = i; j > 0 && should_swap(perm[j - 1], perm[j]); --j)
      std::swap(perm[j - 1], perm[j]);
  }

  // --- allocate missing outputs with the inputs' layout ----------------------------------
  for (IterOperand& o : it.ops_) {
    if (!o.is_output || o.tensor.defined()) continue;
    DimVector strides(nd);
    int64_t running = 1;
    for (int k = 0; k < nd; ++k) {
      strides[perm[k]] = running;
      running *= std::max<int64_t>(shape[perm[k]], 1);
    }
    o.tensor = empty_strided_tensor(shape, strides, o.dtype, it.device_, op);
    const int64_t isz = static_cast<int64_t>(o.tensor.itemsize());
    for (int d = 0; d < nd; ++d) o.strides[d] = shape[d] == 1 ? 0 : strides[d] * isz;
  }
  // An output that maps several elements to one location (expanded) would be written in an
  // order-dependent way; a reduction's output is deliberately restrided with zeros over the
  // reduced dims, and writes of one value (fill_) opt out.
  if (!is_reduction_ && check_mem_overlap_) {
    for (const IterOperand& o : it.ops_) {
      if (!o.is_output) continue;
      for (int d = 0; d < nd; ++d) {
        EMBER_CHECK(o.strides[d] != 0 || shape[d] <= 1, "[", op,
                    "] unsupported operation: more "
                    "than one element of the written-to tensor refers to a single memory "
                    "location. Please clone() the tensor before performing the operation.");
      }
    }
  }

  // --- apply the permutation and coalesce adjacent dims ----------------------------------
  DimVector pshape(nd);
  for (int k = 0; k < nd; ++k) pshape[k] = shape[perm[k]];
  for (IterOperand& o : it.ops_) {
    DimVector s(nd);
    for (int k = 0; k < nd; ++k) s[k] = o.strides[perm[k]];
    o.strides = std::move(s);
  }
  int out_dims = 0;
  for (int k = 0; k < nd; ++k) {
    if (pshape[k] == 1 && nd > 1) continue;  // size-1 dims carry nothing
    if (out_dims > 0) {
      bool mergeable = true;
      for (const IterOperand& o : it.ops_) {
        if (o.strides[out_dims - 1] * pshape[out_dims - 1] != o.strides[k]) {
          mergeable = false;
          break;
        }
      }
      if (mergeable) {
        pshape[out_dims - 1] *= pshape[k];
        continue;
      }
    }
    pshape[out_dims] = pshape[k];
    for (IterOperand& o : it.ops_) o.strides[out_dims] = o.strides[k];
    ++out_dims;
  }
  if (nd > 0 && out_dims == 0) {  // all dims were size 1
    pshape[0] = 1;
    for (IterOperand& o : it.ops_) o.strides[0] = 0;
    out_dims = 1;
  }
  pshape.resize(out_dims);
  // A device iterator carries device addresses, for that device's kernels only (its stubs
  // dispatch on it.device_); a CPU one asks data_ptr(), which refuses a device tensor.
  const bool on_cpu = it.device_.is_cpu();
  for (IterOperand& o : it.ops_) {
    o.strides.resize(out_dims);
    o.data = static_cast<char*>(on_cpu ? o.tensor.data_ptr() : o.tensor.impl()->device_data());
  }
  it.shape_ = std::move(pshape);
  return it;
}

bool TensorIterator::is_scalar(int i) const {
  for (int64_t s : ops_[i].strides) {
    if (s != 0) return false;
  }
  return true;
}

bool TensorIterator::is_contiguous() const {
  if (ndim() > 1) return false;
  if (ndim() == 0) return true;
  for (const IterOperand& o : ops_) {
    if (o.strides[0] != static_cast<int64_t>(element_size(o.dtype))) return false;
  }
  return true;
}

void TensorIterator::serial_for_each(LoopFn loop, int64_t begin, int64_t end) const {
  if (end <= begin) return;
  const int nt = ntensors();
  const int nd = ndim();
  char* ptrs[16];
  std::vector<char*> heap_ptrs;
  char** data = ptrs;
  if (nt > 16) {
    heap_ptrs.resize(nt);
    data = heap_ptrs.data();
  }
  int64_t inner_strides[16];
  std::vector<int64_t> heap_strides;
  int64_t* istr = inner_strides;
  if (nt > 16) {
    heap_strides.resize(nt);
    istr = heap_strides.data();
  }
  if (nd == 0) {  // 0-d: one element
    for (int i = 0; i < nt; ++i) {
      data[i] = ops_[i].data;
      istr[i] = 0;
    }
    loop(data, istr, 1);
    return;
  }
  for (int i = 0; i < nt; ++i) istr[i] = ops_[i].strides[0];
  // Multi-index of `begin` over dims 1..nd-1; dim 0 is the inner loop.
  DimVector idx(nd, 0);
  int64_t rem = begin;
  for (int d = 0; d < nd; ++d) {
    idx[d] = rem % shape_[d];
    rem /= shape_[d];
  }
  int64_t pos = begin;
  while (pos < end) {
    for (int i = 0; i < nt; ++i) {
      int64_t off = 0;
      for (int d = 0; d < nd; ++d) off += idx[d] * ops_[i].strides[d];
      data[i] = ops_[i].data + off;
    }
    int64_t n = std::min(shape_[0] - idx[0], end - pos);
    loop(data, istr, n);
    pos += n;
    idx[0] += n;
    for (int d = 0; d < nd - 1 && idx[d] >= shape_[d]; ++d) {
      idx[d] = 0;
      ++idx[d + 1];
    }
  }
  // Kernels may write large outputs with non-temporal stores (loops.h, Note [Streaming Stores]),
  // which are weakly ordered: one fence per range orders them before this thread signals the end
  // of its chunk or returns to the caller. A fence per row cost more than streaming saved.
  _mm_sfence();
}

void TensorIterator::for_each(LoopFn loop, int64_t grain) const {
  if (numel_ == 0) return;
  if (numel_ < grain || get_num_threads() == 1) {
    serial_for_each(loop, 0, numel_);
    return;
  }
  // Chunk boundaries fall on multiples of kSplitAlign elements from the start of an innermost
  // row, so every element meets the same neighbours in a SIMD vector however many threads run:
  // some vector functions (SLEEF's sin and cos among them) take a slower, differently rounded
  // path for a whole vector when one of its lanes needs it, and results must not depend on the
  // thread count. Rounding both ends of every chunk the same way keeps the chunks disjoint and
  // covering.
  constexpr int64_t kSplitAlign = 64;
  const int64_t row = ndim() > 0 ? std::max<int64_t>(shape_[0], 1) : 1;
  auto align = [&](int64_t p) { return p >= numel_ ? numel_ : p - (p % row) % kSplitAlign; };
  parallel_for(0, numel_, grain, [&](int64_t b, int64_t e) {
    b = align(b);
    e = align(e);
    if (b < e) serial_for_each(loop, b, e);
  });
}

void TensorIterator::serial_for_each_box(LoopFn loop, const int64_t* box_begin,
                                         const int64_t* box_end) const {
  // Iterates the sub-box [box_begin, box_end) of the iteration space (dim 0 fully inside).
  const int nt = ntensors();
  const int nd = ndim();
  std::vector<char*> data(nt);
  std::vector<int64_t> istr(nt);
  for (int i = 0; i < nt; ++i) istr[i] = ops_[i].strides[0];
  DimVector idx(nd);
  for (int d = 0; d < nd; ++d) idx[d] = box_begin[d];
  for (int d = 0; d < nd; ++d) {
    if (box_begin[d] >= box_end[d]) return;
  }
  while (true) {
    for (int i = 0; i < nt; ++i) {
      int64_t off = 0;
      for (int d = 0; d < nd; ++d) off += idx[d] * ops_[i].strides[d];
      data[i] = ops_[i].data + off;
    }
    loop(data.data(), istr.data(), box_end[0] - box_begin[0]);
    int d = 1;
    for (; d < nd; ++d) {
      if (++idx[d] < box_end[d]) break;
      idx[d] = box_begin[d];
    }
    if (d >= nd) return;
  }
}

void TensorIterator::for_each_reduction_safe(LoopFn loop, int64_t grain) const {
  if (numel_ == 0) return;
  const int nd = ndim();
  // Outermost dim along which output 0 moves: its indices map to disjoint outputs.
  int split = -1;
  for (int d = nd - 1; d >= 0; --d) {
    if (ops_[0].strides[d] != 0 && shape_[d] > 1) {
      split = d;
      break;
    }
  }
  if (nd == 0 || split < 0 || numel_ < grain || get_num_threads() == 1) {
    serial_for_each(loop, 0, numel_);
    return;
  }
  const int64_t inner = numel_ / shape_[split];  // elements per index of the split dim
  const int64_t min_rows = std::max<int64_t>(1, grain / std::max<int64_t>(inner, 1));
  parallel_for(0, shape_[split], min_rows, [&](int64_t b, int64_t e) {
    DimVector lo(nd, 0), hi(shape_);
    lo[split] = b;
    hi[split] = e;
    serial_for_each_box(loop, lo.data(), hi.data());
  });
}

void TensorIterator::cast_outputs() {
  for (IterOperand& o : ops_) {
    if (o.is_output && o.original.defined()) {
      copy_into(o.original, o.tensor, name_);
      o.tensor = o.original;
      o.original = Tensor();
    }
  }
}

}  // namespace ember
