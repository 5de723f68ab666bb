// Embedding kernels: row gather (memcpy per row), row accumulation for the gradients (weight rows
// split between threads, so each output row has one writer and no atomics are needed), max-norm
// renormalisation and the embedding_bag reductions (parallel over bags).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/parallel.h"
#include "dispatch/dtype_dispatch.h"
#include "kernels/nn/embedding_stubs.h"

namespace ember {
namespace native {
namespace {

void embedding_gather_kernel(const Tensor& out, const Tensor& weight, const Tensor& idx) {
  const int64_t n = idx.numel(), dim = weight.size(1);
  const int64_t rs = weight.stride(0), cs = weight.stride(1);
  const size_t item = weight.itemsize();
  const char* base = static_cast<const char*>(weight.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  const int64_t* ix = idx.data<int64_t>();
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(dim, 1));
  parallel_for(0, n, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const char* row = base + ix[i] * rs * int64_t(item);
      char* o = dst + i * dim * int64_t(item);
      if (cs == 1) {
        std::memcpy(o, row, size_t(dim) * item);
      } else {
        for (int64_t d = 0; d < dim; ++d) std::memcpy(o + d * item, row + d * cs * item, item);
      }
    }
  });
}

// Splits the rows [0, rows) into one range per thread (at least `min_rows` each).
template <typename F>
void for_row_ranges(int64_t rows, int64_t work_per_row, const F& f) {
  const int64_t threads = get_num_threads();
  const int64_t chunk = std::max<int64_t>((rows + threads - 1) / threads, 1);
  const bool parallel = rows * work_per_row >= kGrainSize && threads > 1;
  parallel_for(0, rows, parallel ? chunk : rows, f);
}

void accumulate_rows_kernel(const Tensor& out, const Tensor& src, const Tensor& target,
                            const Tensor& row, const Tensor& coef) {
  dispatch_dtype<kFloat32 | kFloat64>(out.dtype(), "embedding_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t v = out.size(0), dim = out.size(1), n = target.numel();
    T* o = out.data<T>();
    const T* s = src.data<T>();
    const int64_t* t = target.data<int64_t>();
    const int64_t* r = row.defined() ? row.data<int64_t>() : nullptr;
    const T* c = coef.defined() ? coef.data<T>() : nullptr;
    for_row_ranges(v, std::max<int64_t>(n * dim / std::max<int64_t>(v, 1), 1),
                   [&](int64_t lo, int64_t hi) {
                     for (int64_t k = 0; k < n; ++k) {
                       const int64_t dst_row = t[k];
                       if (dst_row < lo || dst_row >= hi) continue;
                       T* dst = o + dst_row * dim;
                       const T* from = s + (r ? r[k] : k) * dim;
                       if (c) {
                         const T w = c[k];
                         for (int64_t d = 0; d < dim; ++d) dst[d] += w * from[d];
                       } else {
                         for (int64_t d = 0; d < dim; ++d) dst[d] += from[d];
                       }
                     }
                   });
  });
}

void embedding_renorm_kernel(const Tensor& weight, const Tensor& rows, double max_norm,
                             double norm_type) {
  dispatch_dtype<kFloatingTypes>(weight.dtype(), "embedding_renorm_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<int64_t> unique(rows.data<int64_t>(), rows.data<int64_t>() + rows.numel());
    std::sort(unique.begin(), unique.end());
    unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
    const int64_t dim = weight.size(1), rs = weight.stride(0), cs = weight.stride(1);
    T* base = weight.data<T>();
    for (int64_t i : unique) {
      T* row = base + i * rs;
      double norm = 0;
      if (norm_type == 1) {
        for (int64_t d = 0; d < dim; ++d) norm += std::abs(double(row[d * cs]));
      } else if (norm_type == 2) {
        for (int64_t d = 0; d < dim; ++d) norm += double(row[d * cs]) * double(row[d * cs]);
        norm = std::sqrt(norm);
      } else if (std::isinf(norm_type)) {
        for (int64_t d = 0; d < dim; ++d) norm = std::max(norm, std::abs(double(row[d * cs])));
      } else {
        for (int64_t d = 0; d < dim; ++d)
          norm += std::pow(std::abs(double(row[d * cs])), norm_type);
        norm = std::pow(norm, 1.0 / norm_type);
      }
      if (norm > max_norm) {
        const double scale = max_norm / (norm + 1e-7);
        for (int64_t d = 0; d < dim; ++d) row[d * cs] = T(double(row[d * cs]) * scale);
      }
    }
  });
}

void embedding_bag_kernel(const Tensor& out, const Tensor& bag_size, const Tensor& max_indices,
                          const Tensor& weight, const Tensor& idx, const Tensor& starts,
                          const Tensor& ends, const Tensor& psw, const BagArgs& args) {
  dispatch_dtype<kFloatingTypes>(weight.dtype(), "embedding_bag", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_type<T>;
    const int64_t bags = out.size(0), dim = out.size(1);
    const int64_t rs = weight.stride(0), cs = weight.stride(1);
    const T* w = weight.data<T>();
    const int64_t* ix = idx.data<int64_t>();
    const int64_t* s = starts.data<int64_t>();
    const int64_t* e = ends.data<int64_t>();
    const T* pw = psw.defined() ? psw.data<T>() : nullptr;
    T* o = out.data<T>();
    int64_t* bs = bag_size.data<int64_t>();
    int64_t* mi = args.mode == BagMode::Max ? max_indices.data<int64_t>() : nullptr;
    const int64_t avg = std::max<int64_t>(idx.numel() / std::max<int64_t>(bags, 1), 1);
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(avg * dim, 1));
    constexpr int64_t kPrefetchAhead = 8;
    const int64_t row_bytes = cs == 1 ? dim * static_cast<int64_t>(sizeof(T)) : 0;
    parallel_for(0, bags, grain, [&](int64_t begin, int64_t end) {
      std::vector<A> acc(dim);
      // Bags lie in order in ix: the lookups of this range end with its last bag's.
      int64_t prefetch_end = 0;
      for (int64_t b = begin; b < end; ++b) prefetch_end = std::max(prefetch_end, e[b]);
      for (int64_t b = begin; b < end; ++b) {
        std::fill(acc.begin(), acc.end(), A(0));
        int64_t count = 0;
        if (mi) std::fill(mi + b * dim, mi + (b + 1) * dim, int64_t(-1));
        for (int64_t k = s[b]; k < e[b]; ++k) {
          const int64_t i = ix[k];
          // The rows are random reads from a table usually larger than the caches: ask for the
          // row eight lookups ahead now, so that several misses are in flight at once.
          if (k + kPrefetchAhead < prefetch_end) {  // into the next bags too
            const char* ahead = reinterpret_cast<const char*>(w + ix[k + kPrefetchAhead] * rs);
            for (int64_t line = 0; line < row_bytes; line += 64) __builtin_prefetch(ahead + line);
          }
          if (i == args.padding_idx) continue;
          const T* row = w + i * rs;
          if (mi) {
            for (int64_t d = 0; d < dim; ++d) {
              const A x = A(row[d * cs]);
              // The first maximum wins; a NaN replaces any number and stays.
              if (count == 0 || x > acc[d] || (x != x && acc[d] == acc[d])) {
                acc[d] = x;
                mi[b * dim + d] = i;
              }
            }
          } else {
            const A scale = pw ? A(pw[k]) : A(1);
            A* __restrict sum = acc.data();
            if (cs == 1) {  // the usual contiguous row: a loop the compiler vectorises
              for (int64_t d = 0; d < dim; ++d) sum[d] += scale * A(row[d]);
            } else {
              for (int64_t d = 0; d < dim; ++d) sum[d] += scale * A(row[d * cs]);
            }
          }
          ++count;
        }
        if (args.mode == BagMode::Mean && count > 0) {
          for (int64_t d = 0; d < dim; ++d) acc[d] /= A(count);
        }
        for (int64_t d = 0; d < dim; ++d) o[b * dim + d] = T(acc[d]);
        bs[b] = count;
      }
    });
  });
}

void embedding_bag_max_backward_kernel(const Tensor& out, const Tensor& grad,
                                       const Tensor& max_indices) {
  dispatch_dtype<kFloat32 | kFloat64>(out.dtype(), "embedding_bag_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t bags = grad.size(0), dim = grad.size(1);
    T* o = out.data<T>();
    const T* g = grad.data<T>();
    const int64_t* mi = max_indices.data<int64_t>();
    // Columns are independent: split them between threads.
    parallel_for(0, dim, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(bags, 1)),
                 [&](int64_t lo, int64_t hi) {
                   for (int64_t b = 0; b < bags; ++b) {
                     for (int64_t d = lo; d < hi; ++d) {
                       const int64_t i = mi[b * dim + d];
                       if (i >= 0) o[i * dim + d] += g[b * dim + d];
                     }
                   }
                 });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(embedding_gather_stub, CPU, embedding_gather_kernel);
EMBER_REGISTER_KERNEL(accumulate_rows_stub, CPU, accumulate_rows_kernel);
EMBER_REGISTER_KERNEL(embedding_renorm_stub, CPU, embedding_renorm_kernel);
EMBER_REGISTER_KERNEL(embedding_bag_stub, CPU, embedding_bag_kernel);
EMBER_REGISTER_KERNEL(embedding_bag_max_backward_stub, CPU, embedding_bag_max_backward_kernel);

}  // namespace native
}  // namespace ember
