#include "kernels/cpu/reduce_loops.h"
#include "kernels/cpu/cpu_level.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {

ReduceGeometry reduce_geometry(const TensorIterator& iter) {
  ReduceGeometry g;
  g.noutputs = iter.noutputs();
  EMBER_CHECK(g.noutputs >= 1 && g.noutputs <= ReduceGeometry::kMaxOutputs, "[", iter.name(),
              "] reductions take one or two outputs, got ", g.noutputs);
  const int in_op = g.noutputs;
  g.in = iter.operand(in_op).data;
  for (int o = 0; o < g.noutputs; ++o) g.out[o] = iter.operand(o).data;
  const int nd = iter.ndim();
  for (int d = 0; d < nd; ++d) {
    const int64_t size = iter.shape()[d];
    if (iter.stride(0, d) == 0) {
      g.red_sizes.push_back(size);
      g.red_in.push_back(iter.stride(in_op, d));
      g.n_red *= size;
    } else {
      g.keep_sizes.push_back(size);
      g.keep_in.push_back(iter.stride(in_op, d));
      for (int o = 0; o < g.noutputs; ++o) g.keep_out[o].push_back(iter.stride(o, d));
      g.n_keep *= size;
    }
  }
  if (g.noutputs < 2) g.keep_out[1] = DimVector(g.keep_sizes.size(), 0);
  // Dims are ordered by the input's strides, so dim 0 is its fastest-moving one.
  g.inner = nd == 0 || iter.stride(0, 0) == 0;
  if (g.red_sizes.empty()) {  // nothing left to reduce (0-d input or size-1 reduced dims)
    g.red_sizes.push_back(1);
    g.red_in.push_back(0);
    g.inner = true;
  }
  return g;
}

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace reduce_detail {

StripPlan plan_strips(const ReduceGeometry& g, int64_t acc_bytes) {
  StripPlan sp;
  sp.m = g.keep_sizes[0];
  sp.n_outer = g.n_keep / sp.m;
  const size_t nk = g.keep_sizes.size() - 1;
  sp.outer_sizes = DimVector(IntArrayRef(g.keep_sizes.data() + 1, nk));
  sp.outer_in = DimVector(IntArrayRef(g.keep_in.data() + 1, nk));
  sp.outer_o0 = DimVector(IntArrayRef(g.keep_out[0].data() + 1, nk));
  sp.outer_o1 = DimVector(IntArrayRef(g.keep_out[1].data() + 1, nk));

  const int nt = split_count();  // the plan's shape must not depend on the threads there are
  const int64_t m = sp.m, n_outer = sp.n_outer;
  const int64_t max_width = std::max<int64_t>(16, 16384 / acc_bytes);
  const int64_t max_strips = (m + 15) / 16;
  int64_t nstrips = (m + max_width - 1) / max_width;
  sp.big = nt > 1 && g.n_keep * g.n_red >= 2 * kGrainSize;
  // With fewer natural strips than threads, cutting rows into narrower strips makes every thread
  // read a piece of every row (measured: a 2-thread sum over dim 0 of (10000, 1000) float32 ran
  // slower than 1 thread); splitting the reduced rows keeps each thread's reads contiguous.
  if (sp.big && n_outer * nstrips < nt && g.n_red >= 2 * nt) {
    sp.width = std::min(m, max_width);
    sp.nstrips = (m + sp.width - 1) / sp.width;
    sp.ntasks = n_outer * sp.nstrips;
    sp.split_rows = true;
    return sp;
  }
  if (sp.big && n_outer < 8 * nt && n_outer % nt != 0) {
    const int64_t per = (nt + n_outer - 1) / n_outer;  // strips per outer index to cover nt
    nstrips = std::min(max_strips, std::max(nstrips, per));
    if (n_outer == 1) nstrips = std::min(max_strips, (nstrips + nt - 1) / nt * nt);
  }
  int64_t width = (m + nstrips - 1) / nstrips;
  width = std::min(m, (width + 15) / 16 * 16);
  sp.width = width;
  sp.nstrips = (m + width - 1) / width;
  sp.ntasks = n_outer * sp.nstrips;
  sp.split_rows = sp.big && sp.ntasks < nt && g.n_red >= 2 * nt;
  return sp;
}

}  // namespace reduce_detail
}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
