// oneDNN's int8 matmul at the dynamic-Linear shapes of bench_quantized.py: the measurement behind
// docs/design/quantization.md's choice of Ember's own int8 kernels. Not part of the build:
//
//   D=$(python scripts/find_onednn.py)/../../..
//   g++ -O2 -std=c++17 benchmarks/int8_engines.cpp -I$D/include -L$D/lib -ldnnl \
//       -Wl,-rpath,$D/lib -o /tmp/int8_engines
//   OMP_NUM_THREADS=1 /tmp/int8_engines            # ONEDNN_MAX_CPU_ISA=AVX2 for that level
//
// The primitive is what the dynamic linear needs from it: u8 source with a runtime per-tensor
// scale and zero point, s8 weights with per-output-channel scales (reordered once into the
// primitive's own layout), f32 bias and f32 output. Prints the median microseconds per call and
// GOP/s; the source quantization Ember's number includes is not in oneDNN's.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "dnnl.hpp"

using namespace dnnl;

int main() {
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  const int64_t shapes[][2] = {{768, 768}, {768, 3072}, {3072, 768}};
  std::mt19937 rng(0);
  for (const auto& kn : shapes) {
    const int64_t K = kn[0], N = kn[1];
    for (int64_t M : {1, 32, 128}) {
      memory::desc src_md({M, K}, memory::data_type::u8, memory::format_tag::ab);
      memory::desc wei_any({K, N}, memory::data_type::s8, memory::format_tag::any);
      memory::desc wei_plain({K, N}, memory::data_type::s8, memory::format_tag::ab);
      memory::desc bias_md({1, N}, memory::data_type::f32, memory::format_tag::ab);
      memory::desc dst_md({M, N}, memory::data_type::f32, memory::format_tag::ab);
      primitive_attr attr;
      attr.set_scales_mask(DNNL_ARG_SRC, 0);
      attr.set_scales_mask(DNNL_ARG_WEIGHTS, 1 << 1);
      attr.set_zero_points_mask(DNNL_ARG_SRC, 0);
      matmul::primitive_desc pd(eng, src_md, wei_any, bias_md, dst_md, attr);
      matmul prim(pd);

      memory src(src_md, eng), wei_user(wei_plain, eng), wei(pd.weights_desc(), eng);
      memory bias(bias_md, eng), dst(dst_md, eng);
      memory src_scale({{1}, memory::data_type::f32, memory::format_tag::a}, eng);
      memory wei_scale({{N}, memory::data_type::f32, memory::format_tag::a}, eng);
      memory src_zp({{1}, memory::data_type::s32, memory::format_tag::a}, eng);
      auto* a = static_cast<uint8_t*>(src.get_data_handle());
      auto* w = static_cast<int8_t*>(wei_user.get_data_handle());
      for (int64_t i = 0; i < M * K; ++i) a[i] = static_cast<uint8_t>(rng() % 128);
      for (int64_t i = 0; i < K * N; ++i) w[i] = static_cast<int8_t>(rng() % 256 - 128);
      std::fill_n(static_cast<float*>(bias.get_data_handle()), N, 0.5f);
      std::fill_n(static_cast<float*>(wei_scale.get_data_handle()), N, 0.01f);
      *static_cast<float*>(src_scale.get_data_handle()) = 0.02f;
      *static_cast<int32_t*>(src_zp.get_data_handle()) = 64;
      reorder(wei_user, wei).execute(s, wei_user, wei);  // once, as a module's packing

      auto run = [&] {
        prim.execute(s, {{DNNL_ARG_SRC, src},
                         {DNNL_ARG_WEIGHTS, wei},
                         {DNNL_ARG_BIAS, bias},
                         {DNNL_ARG_DST, dst},
                         {DNNL_ARG_ATTR_SCALES | DNNL_ARG_SRC, src_scale},
                         {DNNL_ARG_ATTR_SCALES | DNNL_ARG_WEIGHTS, wei_scale},
                         {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, src_zp}});
        s.wait();
      };
      run();
      std::vector<double> times;
      for (int rep = 0; rep < 7; ++rep) {
        int calls = 0;
        const auto t0 = std::chrono::steady_clock::now();
        double elapsed = 0;
        while (elapsed < 0.1) {
          run();
          ++calls;
          elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
        times.push_back(elapsed / calls);
      }
      std::sort(times.begin(), times.end());
      const double t = times[times.size() / 2];
      std::printf("oneDNN int8 matmul %lld->%lld batch %lld: %9.1f us  %6.1f GOP/s\n",
                  static_cast<long long>(K), static_cast<long long>(N), static_cast<long long>(M),
                  t * 1e6, 2.0 * M * K * N / t / 1e9);
    }
  }
  return 0;
}
