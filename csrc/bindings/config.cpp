// Build information (ember.__config__.show()) and a live check that oneDNN and Eigen are linked.
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#include <Eigen/Core>

#include "bindings/pybind_ember.h"

namespace ember {

void init_config(py::module_& m) {
  m.def("_build_info", [] {
    const dnnl_version_t* v = dnnl_version();
    py::dict d;
    d["onednn"] = str_cat(v->major, ".", v->minor, ".", v->patch, " (", v->hash, ")");
    d["onednn_cpu_runtime"] = v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other";
    d["eigen"] = str_cat(EIGEN_WORLD_VERSION, ".", EIGEN_MAJOR_VERSION, ".", EIGEN_MINOR_VERSION);
    d["openmp"] = _OPENMP;
    d["compiler"] = __VERSION__;
    d["cxx_standard"] = __cplusplus;
    // What the optional CUDA part of the build holds, answerable without loading it.
#ifdef EMBER_BUILT_CUDA
    d["cuda"] = true;
#else
    d["cuda"] = false;
#endif
#ifdef EMBER_BUILT_NCCL
    d["nccl"] = true;
#else
    d["nccl"] = false;
#endif
#ifdef __AVX512F__
    d["simd"] = "AVX-512";
#elif defined(__AVX2__)
    d["simd"] = "AVX2";
#else
    d["simd"] = "baseline";
#endif
    return d;
  });
}

}  // namespace ember
